package cluster

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"gonum.org/v1/gonum/mat"
)

// testData is the small synthetic problem of the tests.
var testData = Synthetic{N: 2000, D: 2, Noise: 0.1, Seed: 7}

// newTestModel returns an ADVGP model for testData with M inducing inputs drawn from the first rows.
func newTestModel(t testing.TB, m int) *advgp.Model {
	t.Helper()
	x, _, err := testData.Rows(0, testData.N)
	if err != nil {
		t.Fatal(err)
	}
	z, err := gp.KMeans(x, m, 10, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: testData.D, Variance: 1, Lengthscales: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	model, err := advgp.New(advgp.Config{Kernel: k, Z: z, NumData: testData.N})
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// testRMSE is the model's RMSE on 500 test rows of testData.
func testRMSE(t testing.TB, model *advgp.Model) float64 {
	t.Helper()
	x, y, err := testData.Rows(testData.N, testData.N+500)
	if err != nil {
		t.Fatal(err)
	}
	p, err := model.Predict(x, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rmse(p.FMean, y)
}

func rmse(a, b *mat.Dense) float64 {
	n, _ := a.Dims()
	s := 0.0
	for i := range n {
		d := a.At(i, 0) - b.At(i, 0)
		s += d * d
	}
	return math.Sqrt(s / float64(n))
}

// localADVGP runs Local on an ADVGP model with ADVGP's server update (ADVGPUpdate, DataGradOnly, ReuseGradients).
func localADVGP(m *advgp.Model, c LocalConfig) (*Result, error) {
	opt, hooks, err := ADVGPUpdate(m, ADVGPRule{})
	if err != nil {
		return nil, err
	}
	c.Server.Optimizer, c.Server.Hooks, c.Server.DataGradOnly, c.Server.ReuseGradients = opt, hooks, true, true
	return Local(m.SVGP, c)
}
