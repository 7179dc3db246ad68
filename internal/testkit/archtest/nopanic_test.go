package archtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// noPanic runs f and fails the test if it panics or returns no error for bad input.
func noPanic(t *testing.T, name string, f func() error) {
	t.Helper()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic on bad input: %v", name, r)
			}
		}()
		if err := f(); err == nil {
			t.Errorf("%s: bad input accepted without an error", name)
		}
	}()
}

// TestBadInputNeverPanics calls every exported op constructor, graph and model constructor, training entry point
// and zoo entry point with bad input (nil nodes, mismatched shapes, NaN, nil data). Each must return an error.
// (The datasets package has its own such test for every loader: datasets/nopanic_test.go.)
func TestBadInputNeverPanics(t *testing.T) {
	g := G.NewGraph()
	m23 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("m23"))
	m44 := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4), G.WithName("m44"))
	v5 := G.NewVector(g, tensor.Float64, G.WithShape(5), G.WithName("v5"))
	f32 := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("f32"))
	un := map[string]func(*G.Node) (*G.Node, error){
		"Transpose": ops.Transpose, "DiagPart": ops.DiagPart, "LogDetChol": ops.LogDetChol, "Sum": ops.Sum,
		"Mean": ops.Mean, "SumRows": ops.SumRows, "SumCols": ops.SumCols, "Exp": ops.Exp, "Log": ops.Log,
		"Square": ops.Square, "Sqrt": ops.Sqrt, "Neg": ops.Neg, "Softplus": ops.Softplus, "Sigmoid": ops.Sigmoid,
		"LogPhi": ops.LogPhi, "Phi": ops.Phi, "Cos": ops.Cos, "Sin": ops.Sin, "Recip": ops.Recip, "InvSqrt": ops.InvSqrt,
		"Cholesky":         func(x *G.Node) (*G.Node, error) { return ops.Cholesky(x, ops.JitterPolicy{}) },
		"Tril":             func(x *G.Node) (*G.Node, error) { return ops.Tril(x, 0) },
		"LowerTriPositive": func(x *G.Node) (*G.Node, error) { return ops.LowerTriPositive(x, 1e-6) },
		"Pow":              func(x *G.Node) (*G.Node, error) { return ops.Pow(x, math.NaN()) },
		"Scale":            func(x *G.Node) (*G.Node, error) { return ops.Scale(x, math.Inf(1)) },
		"AddConst":         func(x *G.Node) (*G.Node, error) { return ops.AddConst(x, math.NaN()) },
		"Positive":         func(x *G.Node) (*G.Node, error) { return ops.Positive(x, -1) },
		"Col":              func(x *G.Node) (*G.Node, error) { return ops.Col(x, 7) },
		"SliceRows":        func(x *G.Node) (*G.Node, error) { return ops.SliceRows(x, 3, 1) },
		"Reshape":          func(x *G.Node) (*G.Node, error) { return ops.Reshape(x, 7) },
		"Repeat":           func(x *G.Node) (*G.Node, error) { return ops.Repeat(x, -1) },
	}
	for name, f := range un {
		noPanic(t, "ops."+name+"(nil)", func() error { _, err := f(nil); return err })
		noPanic(t, "ops."+name+"(float32)", func() error { _, err := f(f32); return err })
	}
	// Shape-sensitive unary ops on a non-square matrix.
	for _, name := range []string{"DiagPart", "LogDetChol", "Cholesky", "LowerTriPositive", "Col", "SliceRows", "Reshape", "Pow", "Scale", "AddConst", "Positive"} {
		noPanic(t, "ops."+name+"(2×3)", func() error { _, err := un[name](m23); return err })
	}
	bin := map[string]func(a, b *G.Node) (*G.Node, error){
		"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": ops.Div, "AddRow": ops.AddRow, "MulRow": ops.MulRow,
		"AddCol": ops.AddCol, "MulCol": ops.MulCol, "CholSolve": ops.CholSolve, "AddDiag": ops.AddDiag, "Dot": ops.Dot,
		"MatMul":    func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, false, false) },
		"TriSolve":  func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, false, false) },
		"StackCols": func(a, b *G.Node) (*G.Node, error) { return ops.StackCols(a, b) },
		"CovMatrix": func(a, b *G.Node) (*G.Node, error) { return ops.CovMatrix(gp.LinearCov, a, b) },
	}
	for name, f := range bin {
		noPanic(t, "ops."+name+"(nil, nil)", func() error { _, err := f(nil, nil); return err })
		noPanic(t, "ops."+name+"(2×3, 4×4)", func() error { _, err := f(m23, m44); return err })
		noPanic(t, "ops."+name+"(4×4, 5)", func() error { _, err := f(m44, v5); return err })
	}
	noPanic(t, "ops.CovDiag", func() error { _, err := ops.CovDiag(nil, m23); return err })
	noPanic(t, "ops.CholeskyLower", func() error {
		_, err := ops.CholeskyLower(make([]float64, 4), []float64{1, 2, 2, 1}, 2, ops.JitterPolicy{MaxTries: -1})
		return err
	})

	// graph
	noPanic(t, "graph.NewParam(NaN)", func() error { _, err := graph.NewParam("p", []float64{math.NaN()}, nil); return err })
	noPanic(t, "graph.NewParam(shape)", func() error { _, err := graph.NewParam("p", []float64{1}, nil, 0); return err })
	noPanic(t, "graph.Compile(nil)", func() error { _, err := graph.New(graph.Options{}).Compile(nil, nil); return err })
	noPanic(t, "graph.CompileForward(empty)", func() error { _, err := graph.New(graph.Options{}).CompileForward(nil); return err })
	noPanic(t, "graph.Input(bad shape)", func() error { gg := graph.New(graph.Options{}); gg.Input("x", -2); return gg.Err() })
	noPanic(t, "graph.Param(nil)", func() error { gg := graph.New(graph.Options{}); gg.Param(nil); return gg.Err() })

	// gp
	for name, f := range map[string]func() error{
		"NewSquaredExp": func() error {
			_, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Lengthscales: []float64{math.NaN(), 1}})
			return err
		},
		"NewSum":          func() error { _, err := gp.NewSum(); return err },
		"NewProduct":      func() error { _, err := gp.NewProduct(nil, nil); return err },
		"NewZeroMean":     func() error { _, err := gp.NewZeroMean(-1); return err },
		"NewConstantMean": func() error { _, err := gp.NewConstantMean("c", []float64{math.NaN()}); return err },
		"NewLinearMean":   func() error { _, err := gp.NewLinearMean("l", 2, 1, []float64{1}, nil); return err },
		"NewGPR":          func() error { _, err := gp.NewGPR(gp.GPRConfig{}); return err },
	} {
		noPanic(t, "gp."+name, f)
	}
	// Every registered kernel family, with invalid options.
	for _, fam := range gp.KernelFamilies() {
		for _, o := range []gp.KernelOptions{{}, {InputDim: -1, ARD: true}, {InputDim: -3, Name: "x"}} {
			noPanic(t, fmt.Sprintf("gp kernel %s New(%+v)", fam.Name, o), func() error { _, err := fam.New(o); return err })
		}
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, math.Inf(-1)})
	y := mat.NewDense(3, 1, []float64{1, 2, 3})
	noPanic(t, "GPR.SetTrainingData(Inf)", func() error { return m.SetTrainingData(x, y) })
	noPanic(t, "GPR.SetTrainingData(nil y)", func() error { return m.SetTrainingData(x, nil) })
	noPanic(t, "GPR.Predict(no data)", func() error { _, err := m.Predict(mat.NewDense(1, 2, nil), gp.PredictOptions{}); return err })
	noPanic(t, "GPR.Predict(Inf)", func() error { _, err := m.Predict(x, gp.PredictOptions{}); return err })
	noPanic(t, "GPR.Predict(nil)", func() error { _, err := m.Predict(nil, gp.PredictOptions{}); return err })
	noPanic(t, "GPR{}.Predict", func() error { _, err := (&gp.GPR{}).Predict(x, gp.PredictOptions{}); return err })
	noPanic(t, "GPR.LogMarginalLikelihoodValue(3 cols)", func() error {
		_, err := m.LogMarginalLikelihoodValue(mat.NewDense(2, 3, nil), mat.NewDense(2, 1, nil), graph.Options{})
		return err
	})

	// train
	rng := rand.New(rand.NewPCG(1, 1))
	noPanic(t, "train.Train(nil)", func() error { _, err := train.Train(m, nil, nil, rng, train.Config{Iters: 1}); return err })
	noPanic(t, "train.Train(wrong D)", func() error {
		_, err := train.Train(m, mat.NewDense(3, 5, nil), mat.NewDense(3, 1, nil), rng, train.Config{Iters: 1})
		return err
	})
	noPanic(t, "train.TrainLBFGS(nil)", func() error { _, err := train.TrainLBFGS(nil, x, y, train.LBFGSConfig{Iters: 1}); return err })

	// sparse models, likelihoods, natural gradients, initialisation
	noPanic(t, "layers.NewSVGP(NaN Z)", func() error {
		_, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: mat.NewDense(1, 2, []float64{math.NaN(), 0})})
		return err
	})
	noPanic(t, "models.NewSVGP(nil)", func() error { _, err := models.NewSVGP(models.SVGPConfig{}); return err })
	noPanic(t, "models.NewSGPR(nil Z)", func() error { _, err := models.NewSGPR(models.SGPRConfig{Kernel: k}); return err })
	noPanic(t, "models.PredictLayer(nil)", func() error { _, _, err := models.PredictLayer(nil, nil, gp.PredictOptions{}); return err })
	noPanic(t, "SVGP{}.Predict", func() error { _, err := (&models.SVGP{}).Predict(x, gp.PredictOptions{}); return err })
	noPanic(t, "SGPR{}.Predict", func() error { _, err := (&models.SGPR{}).Predict(x, gp.PredictOptions{}); return err })
	noPanic(t, "likelihoods.NewGaussian", func() error { _, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: -1}); return err })
	noPanic(t, "likelihoods.NewBernoulli", func() error {
		_, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{QuadPoints: -3})
		return err
	})
	noPanic(t, "likelihoods.NewStudentT", func() error { _, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{DF: -1}); return err })
	noPanic(t, "likelihoods.NewPoisson", func() error { _, err := likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: -1}); return err })
	noPanic(t, "likelihoods.NewRobustMax", func() error {
		_, err := likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 1})
		return err
	})
	noPanic(t, "likelihoods.NewSoftmax", func() error { _, err := likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: 3}); return err })
	noPanic(t, "gp.KMeans", func() error { _, err := gp.KMeans(x, 10, 5, rng); return err })
	noPanic(t, "gp.RandomSubset", func() error { _, err := gp.RandomSubset(x, 2, nil); return err })
	noPanic(t, "gp.NewGaussianQ", func() error { _, err := gp.NewGaussianQ(0, 1, gp.QConfig{}); return err })
	noPanic(t, "train.NewNatGrad", func() error { _, err := train.NewNatGrad(train.NatGradConfig{}); return err })
	noPanic(t, "ops.RobustMaxVE(nil)", func() error { _, err := ops.RobustMaxVE(nil, nil, nil, 0.1, 20); return err })
	noPanic(t, "ops.SoftmaxMCVE(nil)", func() error { _, err := ops.SoftmaxMCVE(nil, nil, nil, nil); return err })
	noPanic(t, "ops.StandardNormal(nil)", func() error { _, err := ops.StandardNormal(nil, nil, 2); return err })
	noPanic(t, "ops.QuadratureVE(nil)", func() error { _, err := ops.QuadratureVE(nil, 0, m23, m23, m23); return err })

	// zoo
	noPanic(t, "zoo.Lookup", func() error { _, err := zoo.Lookup(""); return err })
	noPanic(t, "zoo.Entry.Run(nil)", func() error { var e *zoo.Entry; _, err := e.Run(zoo.Options{}); return err })
}
