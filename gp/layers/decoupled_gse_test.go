package layers_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Helpers of this file are prefixed dg (decoupled, generalized SE bases).

func dgConfig(t testing.TB, rng *rand.Rand, dout int, jacobi bool) layers.DecoupledGSEConfig {
	t.Helper()
	za := mat.NewDense(5, 2, gptest.RandomMatrix(rng, 5, 2, -1.5, 1.5))
	zb := mat.NewDense(3, 2, gptest.RandomMatrix(rng, 3, 2, -1, 1))
	mean, err := gp.NewConstantMean("c", make([]float64, dout))
	if err != nil {
		t.Fatal(err)
	}
	return layers.DecoupledGSEConfig{DecoupledConfig: layers.DecoupledConfig{Kernel: dbKernel(t), Zalpha: za, Zbeta: zb,
		OutputDim: dout, Mean: mean, Jacobi: jacobi}}
}

func TestDecoupledGSEConformance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		dout   int
		jacobi bool
		batch  int // 5 = Mα: the sampled estimator is then exact, so finite differences apply
	}{{"dout1", 1, false, 0}, {"dout2", 2, false, 0}, {"jacobi", 2, true, 0}, {"sampled-b=Ma", 2, false, 5}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 14))
			cfg := dgConfig(t, rng, c.dout, c.jacobi)
			cfg.CAlpha = gptest.RandomMatrix(rng, 5, 2, 0.5, 2)
			cfg.CBeta = gptest.RandomMatrix(rng, 3, 2, 0.5, 2)
			if c.batch > 0 {
				cfg.MeanBasisBatch, cfg.Rand = c.batch, rand.New(rand.NewPCG(9, 9))
			}
			l, err := layers.NewDecoupledGSE(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dbRandomize(t, l.Base(), rng)
			prior := func() error { // a = 0 and B ≈ 0: KL ≈ 0
				if err := l.Base().A.Set(make([]float64, 5*c.dout)); err != nil {
					return err
				}
				small := make([]float64, 9)
				for i := 0; i < 3; i++ {
					small[i*3+i] = 1e-5
				}
				for _, lb := range l.Base().LB {
					if err := lb.Set(small); err != nil {
						return err
					}
				}
				return nil
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

// TestDecoupledGSEUnitFactorsEqualSE: with every c = 1 (App. C: ψ_x = φ_x when c_{x,d} = 1) the layer equals
// Decoupled with the SE kernel and the same parameters.
func TestDecoupledGSEUnitFactorsEqualSE(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ jacobi, iso bool }{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("jacobi=%v/iso=%v", tc.jacobi, tc.iso), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(15, 16))
			cfg := dgConfig(t, rng, 2, tc.jacobi)
			if tc.iso {
				k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: 0.7, Lengthscales: []float64{0.9}})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Kernel = k
			}
			gl, err := layers.NewDecoupledGSE(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dl, err := layers.NewDecoupled(cfg.DecoupledConfig)
			if err != nil {
				t.Fatal(err)
			}
			dbRandomize(t, gl.Base(), rand.New(rand.NewPCG(1, 2)))
			dbRandomize(t, dl, rand.New(rand.NewPCG(1, 2)))
			x := mat.NewDense(6, 2, gptest.RandomMatrix(rng, 6, 2, -2, 2))
			eval := func(l gp.Layer) map[string][]float64 {
				return dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
					m, v := l.Predict(xn)
					_, covs := l.PredictFull(xn)
					return map[string]*graph.Node{"mean": m, "var": v, "cov0": covs[0], "cov1": covs[1], "kl": l.KL(g)}
				})
			}
			got, want := eval(gl), eval(dl)
			for name, w := range want {
				for i := range w {
					if math.Abs(got[name][i]-w[i]) > 1e-12*math.Max(1, math.Abs(w[i])) {
						t.Errorf("%s[%d] = %.17g, SE Decoupled %.17g", name, i, got[name][i], w[i])
					}
				}
			}
		})
	}
}

// TestDecoupledGSEFactorsMatter: factors ≠ 1 change the predictions (the bases really use eq. 19).
func TestDecoupledGSEFactorsMatter(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 18))
	cfg := dgConfig(t, rng, 1, false)
	cfg.CAlpha = gptest.RandomMatrix(rng, 5, 2, 0.3, 0.6)
	cfg.CBeta = gptest.RandomMatrix(rng, 3, 2, 1.5, 3)
	gl, err := layers.NewDecoupledGSE(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := layers.NewDecoupled(cfg.DecoupledConfig)
	if err != nil {
		t.Fatal(err)
	}
	dbRandomize(t, gl.Base(), rand.New(rand.NewPCG(1, 2)))
	dbRandomize(t, dl, rand.New(rand.NewPCG(1, 2)))
	x := mat.NewDense(4, 2, gptest.RandomMatrix(rng, 4, 2, -1, 1))
	eval := func(l gp.Layer) map[string][]float64 {
		return dbEval(t, x, func(g *graph.Graph, xn *graph.Node) map[string]*graph.Node {
			m, v := l.Predict(xn)
			return map[string]*graph.Node{"mean": m, "var": v, "kl": l.KL(g)}
		})
	}
	got, want := eval(gl), eval(dl)
	for name, w := range want {
		same := true
		for i := range w {
			if math.Abs(got[name][i]-w[i]) > 1e-6 {
				same = false
			}
		}
		if same {
			t.Errorf("%s unchanged by the basis factors", name)
		}
	}
	if n := len(gl.Params()); n != len(dl.Params())+2 {
		t.Errorf("%d Params, want the base layer's %d + 2", n, len(dl.Params()))
	}
}

func TestDecoupledGSEConfigErrors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(19, 20))
	m52, err := gptest.StationaryKernel(t, "matern52", gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(c *layers.DecoupledGSEConfig){
		"matern kernel":   func(c *layers.DecoupledGSEConfig) { c.Kernel = m52 },
		"batch no Rand":   func(c *layers.DecoupledGSEConfig) { c.MeanBasisBatch = 2 },
		"alpha count":     func(c *layers.DecoupledGSEConfig) { c.CAlpha = []float64{1, 1} },
		"beta count":      func(c *layers.DecoupledGSEConfig) { c.CBeta = make([]float64, 7) },
		"zero factor":     func(c *layers.DecoupledGSEConfig) { c.CBeta = []float64{1, 1, 0, 1, 1, 1} },
		"negative factor": func(c *layers.DecoupledGSEConfig) { c.CAlpha = []float64{1, 1, 1, 1, -1, 1, 1, 1, 1, 1} },
		"NaN factor":      func(c *layers.DecoupledGSEConfig) { c.CBeta = []float64{1, 1, math.NaN(), 1, 1, 1} },
		"base nil Zalpha": func(c *layers.DecoupledGSEConfig) { c.Zalpha = nil },
	} {
		cfg := dgConfig(t, rng, 1, false)
		mod(&cfg)
		if _, err := layers.NewDecoupledGSE(cfg); !errors.Is(err, layers.ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
}

// TestDecoupledGSEMeanTermEstimate: the sampled mean term averages to the exact one (b < Mα), and equals it for
// b = Mα.
func TestDecoupledGSEMeanTermEstimate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 22))
	for _, b := range []int{2, 5} {
		cfg := dgConfig(t, rng, 2, false)
		cfg.CAlpha = gptest.RandomMatrix(rng, 5, 2, 0.5, 2)
		cfg.MeanBasisBatch, cfg.Rand = b, rand.New(rand.NewPCG(23, uint64(b)))
		l, err := layers.NewDecoupledGSE(cfg)
		if err != nil {
			t.Fatal(err)
		}
		dbRandomize(t, l.Base(), rng)
		g := graph.New(graph.Options{})
		prog, err := g.CompileForward(map[string]*graph.Node{"est": l.MeanTermEstimate(g), "exact": l.MeanTerm(g)})
		if err != nil {
			t.Fatal(err)
		}
		const runs = 1500
		sum, sum2, exact := 0.0, 0.0, 0.0
		for r := 0; r < runs; r++ {
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			e := prog.Output("est")[0]
			sum, sum2 = sum+e, sum2+e*e
			exact = prog.Output("exact")[0]
		}
		prog.Close()
		mean := sum / runs
		tol := 1e-12 * math.Max(1, math.Abs(exact)) // b = Mα: every draw is exact
		if b < 5 {
			tol = 4 * math.Sqrt(math.Max(sum2/runs-mean*mean, 0)/runs) // four standard errors
		}
		if math.Abs(mean-exact) > tol {
			t.Errorf("b=%d: mean estimate %.12g, exact %.12g (tolerance %.3g)", b, mean, exact, tol)
		}
	}
}
