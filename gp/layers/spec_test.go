package layers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Helpers of this file are prefixed sp (spec).

// spOutputs returns the layer's marginal means and variances at x and, when withKL, its KL.
func spOutputs(t *testing.T, l gp.Layer, x *mat.Dense, withKL bool) map[string][]float64 {
	t.Helper()
	return dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
		m, v := l.Predict(xn)
		out := map[string]*graph.Node{"mean": m, "var": v}
		if withKL {
			out["kl"] = l.KL(g)
		}
		return out
	})
}

// spPerturb adds seeded noise to every raw value of l's Params (lower-triangular factors stay valid: their
// diagonals are softplus-transformed).
func spPerturb(l gp.Layer, rng *rand.Rand) {
	for _, p := range l.Params() {
		raw := p.Raw()
		for i := range raw {
			raw[i] += 0.1 * rng.NormFloat64()
		}
	}
}

func spKernel(t *testing.T, name string, d int) gp.Kernel {
	t.Helper()
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.9 + 0.1*float64(i)
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{Name: name, InputDim: d, Variance: 1.2, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func spMean(t *testing.T, name string, d, q int) gp.MeanFunction {
	t.Helper()
	m, err := gp.NewLinearMean(name, d, q, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLayerSpecRoundTrip(t *testing.T) {
	t.Parallel()
	const d = 2
	rng := rand.New(rand.NewPCG(11, 12))
	z := gptest.RandomMatrix(rng, 5, d, -2, 2)
	zd := mat.NewDense(5, d, z)
	zb := mat.NewDense(4, d, gptest.RandomMatrix(rng, 4, d, -2, 2))
	zg := mat.NewDense(3, d, gptest.RandomMatrix(rng, 3, d, -2, 2))
	x := mat.NewDense(7, d, gptest.RandomMatrix(rng, 7, d, -2, 2))

	type layerCase struct {
		name   string
		build  func() (gp.Layer, error)
		random bool // the KL draws at run time (MeanBasisBatch): compare predictions only
	}
	cases := []layerCase{
		{"svgp", func() (gp.Layer, error) {
			return layers.NewSVGP(layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd})
		}, false},
		{"svgp-unwhitened-diag-fixz-mean-dout2", func() (gp.Layer, error) {
			return layers.NewSVGP(layers.SVGPConfig{Name: "L0", Kernel: spKernel(t, "L0.kern", d), Z: zd, OutputDim: 2, Mean: spMean(t, "L0.mean", d, 2),
				Unwhitened: true, QDiag: true, Jitter: 1e-5, FixZ: true, QSqrtScale: 1e-5})
		}, false},
		{"svgp-identity-mean", func() (gp.Layer, error) {
			return layers.NewSVGP(layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd, OutputDim: d, Mean: gp.IdentityMean{D: d}})
		}, false},
		{"hybrid-no-gamma", func() (gp.Layer, error) {
			return layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd}})
		}, false},
		{"hybrid", func() (gp.Layer, error) {
			return layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd, OutputDim: 2}, Zgamma: zg})
		}, false},
		{"hybrid-unwhitened-fixed", func() (gp.Layer, error) {
			return layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Name: "h", Kernel: spKernel(t, "h.k", d), Z: zd, Unwhitened: true,
				Mean: spMean(t, "h.m", d, 1)}, Zgamma: zg, FixZgamma: true})
		}, false},
		{"orth-no-gamma", func() (gp.Layer, error) {
			return layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd, QDiag: true}})
		}, false},
		{"orth", func() (gp.Layer, error) {
			return layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: zd, OutputDim: 2, FixZ: true}, Zgamma: zg, FixZgamma: true})
		}, false},
		{"orth-unwhitened-mean", func() (gp.Layer, error) {
			return layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Name: "o", Kernel: spKernel(t, "o.k", d), Z: zd, Unwhitened: true,
				Mean: spMean(t, "o.m", d, 1)}, Zgamma: zg})
		}, false},
	}
	for _, mf := range []layers.MeanForm{layers.MeanCB, layers.MeanGP, layers.MeanGPCentred} {
		for _, cf := range []layers.CovForm{layers.CovB, layers.CovS, layers.CovSWhitened} {
			for _, dout := range []int{1, 2} {
				mf, cf, dout := mf, cf, dout
				cases = append(cases, layerCase{fmt.Sprintf("decoupled-%v-%v-dout%d", mf, cf, dout), func() (gp.Layer, error) {
					return layers.NewDecoupled(layers.DecoupledConfig{Kernel: spKernel(t, "", d), Zalpha: zd, Zbeta: zb, OutputDim: dout,
						MeanForm: mf, CovForm: cf, SPrior: cf != layers.CovB && dout == 2, Jitter: 1e-5})
				}, false})
			}
		}
	}
	cases = append(cases,
		layerCase{"decoupled-jacobi-mean-fixed", func() (gp.Layer, error) {
			return layers.NewDecoupled(layers.DecoupledConfig{Name: "dec", Kernel: spKernel(t, "dec.k", d), Zalpha: zd, Zbeta: zb, OutputDim: 2,
				Jacobi: true, Mean: spMean(t, "dec.m", d, 2), FixZalpha: true, FixZbeta: true, LBScale: 0.3})
		}, false},
		layerCase{"decoupled-batch", func() (gp.Layer, error) {
			return layers.NewDecoupled(layers.DecoupledConfig{Kernel: spKernel(t, "", d), Zalpha: zd, Zbeta: zb, MeanBasisBatch: 3,
				Rand: rand.New(rand.NewPCG(1, 1)), CovForm: layers.CovS})
		}, true},
		layerCase{"decoupled-gse", func() (gp.Layer, error) {
			return layers.NewDecoupledGSE(layers.DecoupledGSEConfig{DecoupledConfig: layers.DecoupledConfig{Kernel: spKernel(t, "", d), Zalpha: zd, Zbeta: zb, OutputDim: 2}})
		}, false},
		layerCase{"decoupled-gse-batch-fixed", func() (gp.Layer, error) {
			return layers.NewDecoupledGSE(layers.DecoupledGSEConfig{DecoupledConfig: layers.DecoupledConfig{Name: "g", Kernel: spKernel(t, "g.k", d), Zalpha: zd, Zbeta: zb,
				MeanBasisBatch: 2, Rand: rand.New(rand.NewPCG(1, 1)), Jacobi: true}, FixCAlpha: true, FixCBeta: true})
		}, true},
	)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := c.build()
			if err != nil {
				t.Fatal(err)
			}
			spPerturb(l, rand.New(rand.NewPCG(uint64(i), 5)))
			back := gptest.CheckSpecRoundTrip(t, l.(gptest.Component), gp.BuildOptions{Rand: rand.New(rand.NewPCG(3, 4))}).(gp.Layer)
			if back.InputDim() != l.InputDim() || back.OutputDim() != l.OutputDim() {
				t.Errorf("rebuilt widths %d→%d, want %d→%d", back.InputDim(), back.OutputDim(), l.InputDim(), l.OutputDim())
			}
			want, got := spOutputs(t, l, x, !c.random), spOutputs(t, back, x, !c.random)
			for k, w := range want {
				if !reflect.DeepEqual(got[k], w) {
					t.Errorf("%s differs after the round trip: %v, want %v", k, got[k], w)
				}
			}
		})
	}
}

func TestLayerSpecDescribesForms(t *testing.T) {
	t.Parallel()
	// The Config names the forms, so a file says what its weights mean.
	z := mat.NewDense(3, 1, []float64{-1, 0, 1})
	l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: spKernel(t, "", 1), Zalpha: z, Zbeta: z, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS})
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(s.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg["mean_form"] != "MeanGPCentred" || cfg["cov_form"] != "CovS" {
		t.Errorf("config %s does not name the forms", s.Config)
	}
}

func TestLayerSpecBadConfig(t *testing.T) {
	t.Parallel()
	k, err := spKernel(t, "", 2).(gp.Describer).Spec()
	if err != nil {
		t.Fatal(err)
	}
	svgp := func(cfg string, children ...gp.Spec) gp.Spec {
		return gp.Spec{Kind: layers.KindSVGP, Config: json.RawMessage(cfg), Children: children}
	}
	good := `{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6}`
	if _, err := gp.BuildSpec(svgp(good, k), gp.BuildOptions{}); err != nil {
		t.Fatalf("the valid spec fails: %v", err)
	}
	dec := `{"name":"d","num_mean_bases":3,"num_cov_bases":2,"input_dim":2,"output_dim":1,"jitter":1e-6,"mean_form":"MeanCB","cov_form":"CovB"}`
	if _, err := gp.BuildSpec(gp.Spec{Kind: layers.KindDecoupled, Config: json.RawMessage(dec), Children: []gp.Spec{k}}, gp.BuildOptions{}); err != nil {
		t.Fatalf("the valid decoupled spec fails: %v", err)
	}
	for name, s := range map[string]gp.Spec{
		"no config":          {Kind: layers.KindSVGP, Children: []gp.Spec{k}},
		"no kernel":          svgp(good),
		"mean missing":       svgp(`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6,"has_mean":true}`, k),
		"zero inducing":      svgp(`{"name":"svgp","num_inducing":0,"input_dim":2,"output_dim":1,"jitter":1e-6}`, k),
		"negative width":     svgp(`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":-1,"jitter":1e-6}`, k),
		"huge":               svgp(`{"name":"svgp","num_inducing":100000000,"input_dim":2,"output_dim":1,"jitter":1e-6}`, k),
		"kernel width":       svgp(`{"name":"svgp","num_inducing":3,"input_dim":3,"output_dim":1,"jitter":1e-6}`, k),
		"zero jitter":        svgp(`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0}`, k),
		"unknown field":      svgp(`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6,"color":1}`, k),
		"kernel not a layer": {Kind: layers.KindOrth, Config: json.RawMessage(`{"num_gamma":2}`), Children: []gp.Spec{k}},
		"negative gamma":     {Kind: layers.KindHybrid, Config: json.RawMessage(`{"num_gamma":-2}`), Children: []gp.Spec{svgp(good, k)}},
		"unknown mean form":  {Kind: layers.KindDecoupled, Config: json.RawMessage(`{"name":"d","num_mean_bases":3,"num_cov_bases":2,"input_dim":2,"output_dim":1,"jitter":1e-6,"mean_form":"MeanXX","cov_form":"CovB"}`), Children: []gp.Spec{k}},
		"jacobi with CovS":   {Kind: layers.KindDecoupled, Config: json.RawMessage(`{"name":"d","num_mean_bases":3,"num_cov_bases":2,"input_dim":2,"output_dim":1,"jitter":1e-6,"mean_form":"MeanCB","cov_form":"CovS","jacobi":true}`), Children: []gp.Spec{k}},
		"batch too large":    {Kind: layers.KindDecoupled, Config: json.RawMessage(`{"name":"d","num_mean_bases":3,"num_cov_bases":2,"input_dim":2,"output_dim":1,"jitter":1e-6,"mean_form":"MeanCB","cov_form":"CovB","mean_basis_batch":4}`), Children: []gp.Spec{k}},
		"gse non-SE kernel":  {Kind: layers.KindDecoupledGSE, Config: json.RawMessage(dec), Children: []gp.Spec{{Kind: gptest.WhiteKind(), Config: json.RawMessage(`{"name":"w","input_dim":2}`)}}},
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
