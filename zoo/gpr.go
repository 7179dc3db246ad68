package zoo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/train"
)

func init() {
	for _, c := range []struct{ data, summary, published string }{
		{"airfoil", "exact GP, SE-ARD kernel, L-BFGS, on NASA airfoil self-noise (1503×5, embedded; 10-fold)", ""},
		{"autompg", "exact GP, SE-ARD kernel, L-BFGS, on auto-mpg (Wilson's preprocessing; 10-fold)", ""},
		{"servo", "exact GP, SE-ARD kernel, L-BFGS, on servo (Wilson's preprocessing; 10-fold)", ""},
		{"pendulum", "exact GP, SE-ARD kernel, L-BFGS, on pendulum (Wilson's preprocessing; 10-fold)", ""},
		{"boston", "exact GP, SE-ARD kernel, L-BFGS, on Boston housing (20 standard splits)",
			"bayesian_benchmarks SGPR M=100: test LL −2.398, RMSE 2.588 (ANCHORS §1.3; the exact GP should match or beat it)"},
		{"yacht", "exact GP, SE-ARD kernel, L-BFGS, on yacht hydrodynamics (20 standard splits)",
			"bayesian_benchmarks SGPR M=100: test LL −0.774, RMSE 0.655 (ANCHORS §1.3; the exact GP should match or beat it)"},
	} {
		register(&Entry{
			Name: c.data + "/gpr", Dataset: c.data, Model: "gpr", Summary: c.summary,
			Reference: "Rasmussen & Williams (2006) Alg. 2.1; MATH.md §1", Published: c.published,
			Iters: 200, run: runGPR,
		})
	}
}

// DefaultGPRNoise is the initial noise variance of the GPR entries (standardised targets).
const DefaultGPRNoise = 0.1

func runGPR(e *Entry, o Options) (*Result, error) {
	sp, err := loadSplit(e.Dataset, o.DataDir, o.Split)
	if err != nil {
		return nil, err
	}
	std, err := datasets.FitStandardizer(sp.train, true)
	if err != nil {
		return nil, err
	}
	tr, err := std.Apply(sp.train)
	if err != nil {
		return nil, err
	}
	te, err := std.Apply(sp.test)
	if err != nil {
		return nil, err
	}
	d := tr.D()
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d})
	if err != nil {
		return nil, err
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: kern, NoiseVariance: DefaultGPRNoise, X: tr.X, Y: tr.Y})
	if err != nil {
		return nil, err
	}
	iters := e.Iters
	if o.Iters > 0 {
		iters = o.Iters
	}
	res := newResult(e, o)
	res.DataSource, res.NTrain, res.NTest, res.Iters = sp.source, tr.N(), te.N(), iters
	var tres *train.Result
	switch o.Optimizer {
	case "", "lbfgs":
		if err := o.refuseCheckpoint(e, "L-BFGS training (use --optimizer adam)"); err != nil {
			return nil, err
		}
		res.Optimizer = "lbfgs"
		tres, err = train.TrainLBFGS(m, tr.X, tr.Y, train.LBFGSConfig{Iters: iters})
	case "adam":
		res.Optimizer = "adam(0.05)"
		src := rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)
		tres, err = train.Train(m, tr.X, tr.Y, rand.New(src), o.trainConfig(train.Config{Iters: iters, Optimizer: &train.Adam{LR: 0.05}}, src))
	default:
		return nil, fmt.Errorf("zoo: %s: unknown optimizer %q (want lbfgs or adam)", e.Name, o.Optimizer)
	}
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	fillTraining(res, tres, tr.N())
	if err := fillFinal(res, m, tr.X, tr.Y); err != nil { // the exact GP trains on the whole data set
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	if o.Logger != nil {
		o.Logger.Info("fitted", "entry", e.Name, "kernel", kern.String(), "noise", m.NoiseVariance())
	}
	if err := saveModel(e, o, res, m, std); err != nil {
		return nil, err
	}
	t0 := time.Now()
	rmse, ll, err := gaussianMetrics(m, te, std)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: predict: %w", e.Name, err)
	}
	res.TestRMSE, res.TestLL = &rmse, ll
	if o.Logger != nil {
		o.Logger.Info("predicted", "entry", e.Name, "seconds", time.Since(t0).Seconds())
	}
	return res, nil
}

// gaussianMetrics predicts the test rows with m and returns the RMSE and the mean log predictive density of
// N(y | μ, v + σ²) (the Prediction's YMean and YVar), both in the original units of the (single) target.
func gaussianMetrics(m gp.Predictor, test *datasets.Dataset, std *datasets.Standardizer) (rmse, ll float64, err error) {
	p, err := m.Predict(test.X, gp.PredictOptions{})
	if err != nil {
		return 0, 0, err
	}
	rmse, ll = gaussianScores(p, test, std)
	return rmse, ll, nil
}

// gaussianScores returns the test RMSE and mean log predictive density of N(y | μ, σ²) for μ, σ² the
// Prediction's YMean and YVar, in the original units of the (single) target.
func gaussianScores(p *gp.Prediction, test *datasets.Dataset, std *datasets.Standardizer) (rmse, ll float64) {
	n := test.N()
	for i := 0; i < n; i++ {
		mu := std.InverseMean(0, p.YMean.At(i, 0))
		y := std.InverseMean(0, test.Y.At(i, 0))
		v := std.InverseVar(0, p.YVar.At(i, 0))
		r := y - mu
		rmse += r * r
		ll += -0.5*math.Log(2*math.Pi*v) - r*r/(2*v)
	}
	return math.Sqrt(rmse / float64(n)), ll / float64(n)
}
