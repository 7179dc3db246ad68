package likelihoods_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
)

func TestLikelihoodSpecRoundTrip(t *testing.T) {
	mk := func(l gp.Likelihood, err error) gp.Likelihood {
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	newRng := func() *rand.Rand { return rand.New(rand.NewPCG(7, 8)) }
	cases := []struct {
		name string
		lik  gp.Likelihood
	}{
		{"gaussian-default", mk(likelihoods.NewGaussian(likelihoods.GaussianConfig{}))},
		{"gaussian-floor", mk(likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.3, VarianceFloor: 1e-3}))},
		{"gaussian-high-floor", mk(likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 5, VarianceFloor: 2}))},
		{"bernoulli", mk(likelihoods.NewBernoulli(likelihoods.BernoulliConfig{QuadPoints: 13}))},
		{"studentt", mk(likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.4, DF: 4.5, ScaleFloor: 1e-4, QuadPoints: 11}))},
		{"studentt-traindf", mk(likelihoods.NewStudentT(likelihoods.StudentTConfig{TrainDF: true}))},
		{"poisson", mk(likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: 0.25, QuadPoints: 9}))},
		{"robustmax", mk(likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 4, Epsilon: 0.01, QuadPoints: 15}))},
		{"softmax", mk(likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: 3, NumSamples: 4, PredictSamples: 50, Rand: newRng()}))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Perturb every Param so that equal predictions below need the restored raw values.
			for _, p := range c.lik.Params() {
				raw := p.Raw()
				for i := range raw {
					raw[i] += 0.1
				}
			}
			v := gptest.CheckSpecRoundTrip(t, c.lik.(gptest.Component), gp.BuildOptions{Rand: newRng()})
			back := v.(gp.Likelihood)
			if reflect.TypeOf(back) != reflect.TypeOf(c.lik) {
				t.Fatalf("rebuilt %T, want %T", back, c.lik)
			}
			if back.String() != c.lik.String() {
				t.Errorf("rebuilt %s, want %s", back, c.lik)
			}
			// Same predictions (the softmax's Monte-Carlo draws come from equally seeded generators).
			l, err := c.lik.LatentDim(1)
			if err != nil {
				t.Fatal(err)
			}
			n := 3
			fm, fv := make([]float64, n*l), make([]float64, n*l)
			for i := range fm {
				fm[i], fv[i] = 0.3*float64(i)-0.5, 0.1+0.05*float64(i)
			}
			if sm, ok := c.lik.(*likelihoods.Softmax); ok {
				// The original has used its generator since construction: give both fresh equal seeds.
				fresh, err := likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: sm.NumClasses(), NumSamples: sm.NumSamples(), PredictSamples: 50, Rand: rand.New(rand.NewPCG(7, 8))})
				if err != nil {
					t.Fatal(err)
				}
				c.lik = fresh
			}
			m1, v1, err := c.lik.PredictMeanVar(fm, fv, n)
			if err != nil {
				t.Fatal(err)
			}
			m2, v2, err := back.PredictMeanVar(fm, fv, n)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(v1, v2) {
				t.Errorf("predictions differ: %v %v vs %v %v", m1, v1, m2, v2)
			}
		})
	}
}

func TestLikelihoodSpecBadConfig(t *testing.T) {
	for _, s := range []gp.Spec{
		{Kind: likelihoods.KindGaussian, Config: json.RawMessage(`{"variance_floor":0}`)},
		{Kind: likelihoods.KindGaussian, Config: json.RawMessage(`{"variance_floor":1e-6,"extra":1}`)},
		{Kind: likelihoods.KindBernoulli, Config: json.RawMessage(`{"quad_points":-1}`)},
		{Kind: likelihoods.KindStudentT, Config: json.RawMessage(`{"scale_floor":1e-6,"quad_points":0}`)},
		{Kind: likelihoods.KindPoisson, Config: json.RawMessage(`{"bin_size":-1,"quad_points":20}`)},
		{Kind: likelihoods.KindRobustMax, Config: json.RawMessage(`{"num_classes":1,"epsilon":0.001,"quad_points":20}`)},
		{Kind: likelihoods.KindRobustMax, Config: json.RawMessage(`{"num_classes":3,"epsilon":2,"quad_points":20}`)},
		{Kind: likelihoods.KindSoftmax, Config: json.RawMessage(`{"num_classes":3,"num_samples":0,"predict_samples":10}`)},
		{Kind: likelihoods.KindSoftmax, Config: json.RawMessage(`{"num_classes":0,"num_samples":1,"predict_samples":10}`)},
		{Kind: likelihoods.KindSoftmax, Config: json.RawMessage(`[1,2]`)},
		{Kind: likelihoods.KindBernoulli},
		{Kind: likelihoods.KindBernoulli, Config: json.RawMessage(`{"quad_points":3}`), Children: []gp.Spec{{Kind: likelihoods.KindBernoulli, Config: json.RawMessage(`{"quad_points":3}`)}}},
	} {
		t.Run(fmt.Sprintf("%s %s", s.Kind, s.Config), func(t *testing.T) {
			v, err := gp.BuildSpec(s, gp.BuildOptions{})
			if err == nil {
				t.Fatalf("BuildSpec gave %v, want an error", v)
			}
			if errors.Is(err, gp.ErrUnknownKind) {
				t.Fatalf("kind not registered: %v", err)
			}
		})
	}
}

// TestFamilies: every built-in likelihood is registered under its name with its Spec kind, and a likelihood its
// family builds describes itself with that kind.
func TestFamilies(t *testing.T) {
	for name, kind := range map[string]string{"gaussian": likelihoods.KindGaussian, "studentt": likelihoods.KindStudentT,
		"bernoulli": likelihoods.KindBernoulli, "poisson": likelihoods.KindPoisson, "robustmax": likelihoods.KindRobustMax,
		"softmax": likelihoods.KindSoftmax} {
		f, ok := gp.LookupLikelihood(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if f.Kind != kind || f.Doc == "" {
			t.Errorf("%s: kind %q, doc %q; want kind %q and a doc line", name, f.Kind, f.Doc, kind)
		}
	}
	for _, f := range gp.LikelihoodFamilies() {
		t.Run(f.Name, func(t *testing.T) {
			o := gp.LikelihoodOptions{Outputs: 1, NoiseVariance: 0.5, Rand: rand.New(rand.NewPCG(1, 1))}
			if f.Classes {
				o.Classes = 2
			}
			l, err := f.New(o)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := l.(gp.Describer)
			if !ok {
				t.Fatalf("%T does not describe itself", l)
			}
			s, err := d.Spec()
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != f.Kind {
				t.Errorf("Spec kind %q, family kind %q", s.Kind, f.Kind)
			}
			if _, err := l.LatentDim(1); err != nil {
				t.Error(err)
			}
		})
	}
	if g, _ := gp.LookupLikelihood("gaussian"); g.New != nil {
		l, err := g.New(gp.LikelihoodOptions{Outputs: 1, NoiseVariance: 0.25})
		if err != nil || l.(*likelihoods.Gaussian).Variance() != 0.25 {
			t.Errorf("gaussian with NoiseVariance 0.25: %v, %v", l, err)
		}
	}
	b, _ := gp.LookupLikelihood("bernoulli")
	if l, err := b.New(gp.LikelihoodOptions{Outputs: 1, Classes: 3}); !errors.Is(err, gp.ErrConfig) || l != nil {
		t.Errorf("bernoulli with 3 classes: %v, %v; want a nil likelihood and gp.ErrConfig", l, err)
	}
}
