package models_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

func perturb(ps []*graph.Param, rng *rand.Rand) {
	for _, p := range ps {
		raw := p.Raw()
		for i := range raw {
			raw[i] += 0.1 * rng.NormFloat64()
		}
	}
}

func TestSVGPSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	x, _ := toy(rng, 12, 2, 1)
	z := mat.NewDense(4, 2, nil)
	z.Copy(x.Slice(0, 4, 0, 2))
	mkLik := map[string]func() (gp.Likelihood, error){
		"gaussian":  func() (gp.Likelihood, error) { return likelihoods.NewGaussian(likelihoods.GaussianConfig{}) },
		"bernoulli": func() (gp.Likelihood, error) { return likelihoods.NewBernoulli(likelihoods.BernoulliConfig{}) },
		"robustmax": func() (gp.Likelihood, error) {
			return likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3})
		},
	}
	for name, mk := range mkLik {
		t.Run(name, func(t *testing.T) {
			lik, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			latent, _ := lik.LatentDim(1)
			l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: kernel(t, 2), Z: z, OutputDim: latent}, Zgamma: z})
			if err != nil {
				t.Fatal(err)
			}
			m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: 12})
			if err != nil {
				t.Fatal(err)
			}
			perturb(m.Params(), rng)
			back := gptest.CheckSpecRoundTrip(t, m, gp.BuildOptions{}).(*models.SVGP)
			if back.NumData != m.NumData {
				t.Errorf("NumData %d, want %d", back.NumData, m.NumData)
			}
			p1, err := m.Predict(x, gp.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p2, err := back.Predict(x, gp.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(p1.YMean, p2.YMean) || !mat.Equal(p1.YVar, p2.YVar) || !mat.Equal(p1.FVar, p2.FVar) {
				t.Error("predictions differ after the round trip")
			}
		})
	}
}

func TestSGPRSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(23, 24))
	x, y := toy(rng, 15, 2, 2)
	z := mat.DenseCopyOf(x.Slice(0, 5, 0, 2))
	for _, withMean := range []bool{false, true} {
		var mean gp.MeanFunction
		if withMean {
			var err error
			if mean, err = gp.NewConstantMean("offset", []float64{0.5, -0.5}); err != nil {
				t.Fatal(err)
			}
		}
		m, err := models.NewSGPR(models.SGPRConfig{Kernel: kernel(t, 2), Z: z, Mean: mean, Jitter: 1e-5, FixZ: withMean, NoiseVariance: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		perturb(m.Params(), rng)
		back := gptest.CheckSpecRoundTrip(t, m, gp.BuildOptions{}).(*models.SGPR)
		for _, s := range []*models.SGPR{m, back} {
			if err := s.SetTrainingData(x, y); err != nil {
				t.Fatal(err)
			}
		}
		p1, err := m.Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p2, err := back.Predict(x, gp.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(p1.FMean, p2.FMean) || !mat.Equal(p1.FVar, p2.FVar) || back.NoiseVariance() != m.NoiseVariance() {
			t.Errorf("withMean=%v: predictions differ after the round trip", withMean)
		}
	}
}

func TestModelSpecBadConfig(t *testing.T) {
	t.Parallel()
	k, err := kernel(t, 2).(gp.Describer).Spec()
	if err != nil {
		t.Fatal(err)
	}
	lik, err := gp.NewSpec(likelihoods.KindRobustMax, map[string]any{"num_classes": 3, "epsilon": 0.001, "quad_points": 20})
	if err != nil {
		t.Fatal(err)
	}
	layer := gp.Spec{Kind: layers.KindSVGP, Config: json.RawMessage(`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6}`), Children: []gp.Spec{k}}
	for name, s := range map[string]gp.Spec{
		"svgp no config":       {Kind: models.KindSVGP, Children: []gp.Spec{layer, lik}},
		"svgp one child":       {Kind: models.KindSVGP, Config: json.RawMessage(`{"num_data":10}`), Children: []gp.Spec{layer}},
		"svgp zero data":       {Kind: models.KindSVGP, Config: json.RawMessage(`{"num_data":0}`), Children: []gp.Spec{layer, lik}},
		"svgp latent mismatch": {Kind: models.KindSVGP, Config: json.RawMessage(`{"num_data":10}`), Children: []gp.Spec{layer, lik}},
		"svgp swapped":         {Kind: models.KindSVGP, Config: json.RawMessage(`{"num_data":10}`), Children: []gp.Spec{lik, layer}},
		"sgpr no inducing":     {Kind: models.KindSGPR, Config: json.RawMessage(`{"num_inducing":0,"input_dim":2,"jitter":1e-6}`), Children: []gp.Spec{k}},
		"sgpr zero jitter":     {Kind: models.KindSGPR, Config: json.RawMessage(`{"num_inducing":3,"input_dim":2,"jitter":0}`), Children: []gp.Spec{k}},
		"sgpr mean missing":    {Kind: models.KindSGPR, Config: json.RawMessage(`{"num_inducing":3,"input_dim":2,"jitter":1e-6,"has_mean":true}`), Children: []gp.Spec{k}},
		"sgpr kernel width":    {Kind: models.KindSGPR, Config: json.RawMessage(`{"num_inducing":3,"input_dim":3,"jitter":1e-6}`), Children: []gp.Spec{k}},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := gp.BuildSpec(s, gp.BuildOptions{})
			if err == nil {
				t.Fatalf("BuildSpec gave %T, want an error", v)
			}
			if errors.Is(err, gp.ErrUnknownKind) {
				t.Fatalf("kind not registered: %v", err)
			}
		})
	}
}
