package zoo

import (
	"math"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
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
		register(configuredEntry(c.data+"/gpr", c.data, c.summary,
			"Rasmussen & Williams (2006) Alg. 2.1; MATH.md §1; split protocol: "+sources[c.data].protocol, c.published,
			CustomConfig{Family: "gpr", Iters: 200, NoiseVariance: DefaultGPRNoise, LR: GPRAdamLR}))
	}
}

// DefaultGPRNoise is the initial noise variance of the GPR entries (standardised targets).
const DefaultGPRNoise = 0.1

// GPRAdamLR is the Adam learning rate of the GPR entries run with --optimizer adam.
const GPRAdamLR = 0.05

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
