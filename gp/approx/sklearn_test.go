package approx_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// sklearnFixture is testdata/sklearn_laplace.json (made by testdata/sklearn_laplace.py).
type sklearnFixture struct {
	Sklearn string      `json:"sklearn"`
	X       [][]float64 `json:"x"`
	Y       []float64   `json:"y"`
	Cases   []struct {
		Name         string    `json:"name"`
		Variance     float64   `json:"variance"`
		Lengthscales []float64 `json:"lengthscales"`
		Theta        []float64 `json:"theta"`
		LML          float64   `json:"log_marginal_likelihood"`
		Gradient     []float64 `json:"gradient"`
	} `json:"cases"`
}

// TestLaplaceAgainstScikitLearn: on a 300-row binary set at fixed hyperparameters, the Laplace approximation's
// log marginal likelihood with the logit link and its gradient with respect to the log-hyperparameters
// (log σ², log ℓ: scikit-learn's theta of ConstantKernel·RBF) equal scikit-learn's
// GaussianProcessClassifier.log_marginal_likelihood(theta, eval_gradient=True) to 1e-6 relative — an independent
// implementation of R&W Algorithms 3.1 and 5.1. Three kernels: isotropic, ARD, and long length-scales with a
// large variance (a badly conditioned K).
func TestLaplaceAgainstScikitLearn(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/sklearn_laplace.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx sklearnFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	n := len(fx.Y)
	if n != 300 || len(fx.Cases) == 0 {
		t.Fatalf("fixture: %d rows, %d cases", n, len(fx.Cases))
	}
	x := mat.NewDense(n, 2, nil)
	y := mat.NewDense(n, 1, fx.Y)
	for i, r := range fx.X {
		x.SetRow(i, r)
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			ls := c.Lengthscales
			if len(c.Theta) == 2 { // one length-scale: an isotropic kernel
				ls = ls[:1]
			}
			k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Variance: c.Variance, Lengthscales: ls})
			if err != nil {
				t.Fatal(err)
			}
			lik, err := likelihoods.NewBernoulliLogit(likelihoods.BernoulliConfig{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := approx.New(approx.Config{Kernel: k, Likelihood: lik, Inference: approx.Laplace, X: x, Y: y})
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New(graph.Options{})
			prog, err := g.Compile(m.Loss(g.Input("x", n, 2), g.Input("y", n, 1)), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			copy(prog.InputData("x"), x.RawMatrix().Data)
			copy(prog.InputData("y"), fx.Y)
			if err := prog.Run(); err != nil {
				t.Fatal(err)
			}
			lml := -prog.Loss()
			// ∂/∂log h = h·∂/∂h = h·(∂/∂raw)/(dh/draw), dh/draw = σ(raw) for Positive (softplus + floor).
			var grad []float64
			for _, p := range []*graph.Param{k.Variance, k.Lengthscales} {
				for i, gr := range prog.Grad(p) {
					h, r := p.Value()[i], p.Raw()[i]
					grad = append(grad, -gr*h/(1/(1+math.Exp(-r))))
				}
			}
			relErr := func(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
			if e := relErr(lml, c.LML); e > 1e-6 {
				t.Errorf("log marginal likelihood %.12g, scikit-learn %.12g (rel err %.2g)", lml, c.LML, e)
			}
			if len(grad) != len(c.Gradient) {
				t.Fatalf("%d gradient entries, scikit-learn %d", len(grad), len(c.Gradient))
			}
			worst := 0.0
			for i := range grad {
				e := relErr(grad[i], c.Gradient[i])
				worst = math.Max(worst, e)
				if e > 1e-6 {
					t.Errorf("∂/∂theta[%d] = %.12g, scikit-learn %.12g (rel err %.2g)", i, grad[i], c.Gradient[i], e)
				}
			}
			t.Logf("log q(y) %.12g (scikit-learn %s: %.12g), gradient's largest relative difference %.2g", lml, fx.Sklearn, c.LML, worst)
			// The plain function NUTS calls gives the same value and gradient in the raw values.
			ob, err := m.Objective(graph.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ob.Close()
			gv := make([]float64, ob.Dim())
			v, err := ob.Eval(ob.Point(), gv)
			if err != nil {
				t.Fatal(err)
			}
			if relErr(v, lml) > 1e-12 {
				t.Errorf("Objective.Eval %.15g, the graph's %.15g", v, lml)
			}
			if len(gv) != len(grad) {
				t.Errorf("Objective.Dim %d, want %d", len(gv), len(grad))
			}
		})
	}
}
