package dgp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"gonum.org/v1/gonum/mat"
)

// mixedFactory builds a coupled SVGP input layer, a decoupled (GP-centred mean, S-form covariance) middle layer
// and an orthogonally decoupled last layer, with inner kernels and means as dgp.Build prescribes.
func mixedFactory(t testing.TB) dgp.LayerFactory {
	return func(s dgp.LayerSpec) (gp.Layer, error) {
		name := fmt.Sprintf("layer%d", s.Index)
		k, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".kern", InputDim: s.InputDim, Variance: 1, Lengthscales: make1(s.InputDim)})
		if err != nil {
			return nil, err
		}
		var kern gp.Kernel = k
		if s.Inner {
			needWhite(t)
			if kern, err = dgp.InnerKernel(k, name+".white"); err != nil {
				return nil, err
			}
		}
		z, err := s.Inducing(6)
		if err != nil {
			return nil, err
		}
		switch s.Index {
		case 0:
			return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: kern, Z: z, OutputDim: s.OutputDim, Mean: s.Mean, QSqrtScale: dgp.InnerQScale})
		case 1:
			return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: kern, Zalpha: z, Zbeta: mat.DenseCopyOf(z.Slice(0, 4, 0, s.InputDim)),
				OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS, LBScale: dgp.InnerQScale})
		}
		return layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Name: name, Kernel: kern, Z: z, OutputDim: s.OutputDim, Mean: s.Mean},
			Zgamma: mat.DenseCopyOf(z.Slice(0, 3, 0, s.InputDim))})
	}
}

func make1(d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = 1
	}
	return v
}

func TestDGPSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	x, y := gptest.ToyRegression(rng, 20, 3, 1)
	robust, err := likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3})
	if err != nil {
		t.Fatal(err)
	}
	labels := mat.NewDense(20, 1, nil)
	for i := 0; i < 20; i++ {
		labels.Set(i, 0, float64(i%3))
	}
	for _, c := range []struct {
		name string
		lik  gp.Likelihood
		out  int
		y    *mat.Dense
	}{{"gaussian", gaussian(t, 0.3), 1, y}, {"robustmax", robust, 3, labels}} {
		t.Run(c.name, func(t *testing.T) {
			// Widths 3 → 2 (PCA projection mean) → 4 (zero-padding mean) → out.
			ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{2, 4}, OutputDim: c.out, NewLayer: mixedFactory(t), Rand: rand.New(rand.NewPCG(1, 1))})
			if err != nil {
				t.Fatal(err)
			}
			d, err := dgp.New(dgp.Config{Layers: ls, Likelihood: c.lik, NumData: 20, Samples: 3, Rand: rand.New(rand.NewPCG(5, 6))})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				randomizeLayer(t, l, rng)
			}
			nd := gptest.CheckSpecRoundTrip(t, d, gp.BuildOptions{Rand: rand.New(rand.NewPCG(5, 6))}).(*dgp.DGP)
			if nd.NumData != d.NumData || nd.Samples() != d.Samples() || len(nd.Layers) != len(d.Layers) {
				t.Fatalf("rebuilt NumData %d, S %d, %d layers; want %d, %d, %d", nd.NumData, nd.Samples(), len(nd.Layers), d.NumData, d.Samples(), len(d.Layers))
			}
			// Equally seeded noise: the same sampled loss (the rebuilt noise seed is drawn from o.Rng() as the original's from its Rand) and
			// the same predictions.
			if l1, l2 := gptest.EvalScalar(t, d.Loss, x, c.y), gptest.EvalScalar(t, nd.Loss, x, c.y); l1 != l2 {
				t.Errorf("loss %v after the round trip, want %v", l2, l1)
			}
			po := func() gp.PredictOptions { return gp.PredictOptions{Samples: 4, Rand: rand.New(rand.NewPCG(9, 9))} }
			p1, err := d.Predict(x, po())
			if err != nil {
				t.Fatal(err)
			}
			p2, err := nd.Predict(x, po())
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(p1.YMean, p2.YMean) || !mat.Equal(p1.YVar, p2.YVar) {
				t.Error("predictions differ after the round trip")
			}
		})
	}
}

// randomizeLayer moves a layer built by mixedFactory away from its initial values.
func randomizeLayer(t *testing.T, l gp.Layer, rng *rand.Rand) {
	t.Helper()
	switch l := l.(type) {
	case *layers.SVGP:
		randomQ(t, l.Q, rng)
	case *layers.Orth:
		randomQ(t, l.Beta.Q, rng)
	case *layers.Decoupled:
	default:
		t.Fatalf("unexpected layer %T", l)
	}
	for _, p := range l.Params() {
		raw := p.Raw()
		for i := range raw {
			raw[i] += 0.05 * rng.NormFloat64()
		}
	}
}

func TestDGPSpecBadConfig(t *testing.T) {
	t.Parallel()
	lik, err := gaussian(t, 0.5).Spec()
	if err != nil {
		t.Fatal(err)
	}
	k, err := gp.NewSpec(gp.KindSquaredExp, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]gp.Spec{
		"no config":         {Kind: dgp.KindDGP, Children: []gp.Spec{lik}},
		"no layers":         {Kind: dgp.KindDGP, Config: json.RawMessage(`{"num_layers":0,"num_data":5,"samples":1}`), Children: []gp.Spec{lik}},
		"children mismatch": {Kind: dgp.KindDGP, Config: json.RawMessage(`{"num_layers":2,"num_data":5,"samples":1}`), Children: []gp.Spec{lik}},
		"zero samples":      {Kind: dgp.KindDGP, Config: json.RawMessage(`{"num_layers":1,"num_data":5,"samples":0}`), Children: []gp.Spec{lik, lik}},
		"likelihood layer":  {Kind: dgp.KindDGP, Config: json.RawMessage(`{"num_layers":1,"num_data":5,"samples":1}`), Children: []gp.Spec{lik, lik}},
		"kernel child":      {Kind: dgp.KindDGP, Config: json.RawMessage(`{"num_layers":1,"num_data":5,"samples":1}`), Children: []gp.Spec{k, lik}},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := gp.BuildSpec(s, gp.BuildOptions{})
			if err == nil {
				t.Fatalf("BuildSpec gave %T, want an error", v)
			}
			if errors.Is(err, gp.ErrUnknownKind) && name != "kernel child" {
				t.Fatalf("kind not registered: %v", err)
			}
		})
	}
}
