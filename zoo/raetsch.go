package zoo

import (
	"fmt"
	"math"
)

// The Rätsch benchmark sets (classification-raetsch; two classes) with the exact GP's approximations side by
// side: gpr-laplace (the Laplace approximation), gpr-ep (EP) and svgp-bernoulli (the variational SVGP), each
// with the probit likelihood, error rate and test log density per split (`gpzoo run german/gpr-ep --splits 0-9`).

// raetschSets are the sets and their input dimensions D (the entries start every length-scale at √D, the scale of
// a distance between standardised inputs).
var raetschSets = []struct {
	name string
	dim  int
}{{"banana", 2}, {"german", 20}, {"image", 18}, {"splice", 60}, {"thyroid", 5}, {"titanic", 3}}

// RaetschApproxIters bounds the L-BFGS iterations of each start of the gpr-laplace and gpr-ep entries.
const RaetschApproxIters = 200

func init() {
	const ref = "Rasmussen & Williams 2006, Algorithms 3.1–3.6, 5.1; Kuss & Rasmussen 2005 and Nickisch & Rasmussen 2008 compare Laplace and EP"
	for _, s := range raetschSets {
		src := sources[s.name]
		ls := math.Sqrt(float64(s.dim))
		for _, inf := range []string{"laplace", "ep"} {
			what := map[string]string{"laplace": "the Laplace approximation", "ep": "EP (parallel, damped)"}[inf]
			summary := fmt.Sprintf("exact GP, Bernoulli (probit), %s, SE-ARD (ℓ₀ = √%d), L-BFGS ≤ %d iterations from %d starts (%s: %d training rows, split K)",
				what, s.dim, RaetschApproxIters, DefaultApproxRestarts, s.name, src.trainSize)
			register(configuredEntry(s.name+"/gpr-"+inf, s.name, summary, ref+"; split protocol: "+src.protocol,
				"no published number under these splits (the official 100 splits are not available)",
				CustomConfig{Family: "gpr", Likelihood: "bernoulli", Inference: inf, Iters: RaetschApproxIters, KernelLengthscale: ls}))
		}
		if s.name == "banana" {
			continue // banana/svgp-bernoulli is the sparse entries' (sparse.go)
		}
		register(configuredEntry(s.name+"/svgp-bernoulli", s.name,
			fmt.Sprintf("SVGP, Bernoulli (probit), M=100 k-means, SE-ARD (ℓ₀ = √%d), minibatch ≤ 1000, Adam 0.01, 3000 steps (%s)", s.dim, s.name),
			"Hensman, Matthews & Ghahramani 2015; split protocol: "+src.protocol, "the exact GP's gpr-laplace and gpr-ep entries on the same splits",
			CustomConfig{Family: "svgp", Likelihood: "bernoulli", Inducing: 100, Iters: 3000, LR: 0.01, BatchSize: DefaultBatch,
				KernelLengthscale: ls, KMeansIters: DefaultKMeansIters}))
	}
}
