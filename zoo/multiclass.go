package zoo

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
)

// A multi-class set (classification-delgado's iris: 150 rows, 4 inputs, 3 classes; 80/20 splits) with the exact
// GP's multi-class Laplace approximation beside the variational SVGP, all with the softmax likelihood: error rate
// and test log density per split (`gpzoo run iris/gpr-laplace --splits 0-9`).
//
// gpr-laplace fits the hyperparameters by type-II maximum likelihood, as the Rätsch entries do. One class of iris
// is linearly separable from the others, and there the Laplace approximation's marginal likelihood keeps rising
// with the signal variance (the likelihood's curvature W vanishes where the probabilities saturate, so the
// posterior keeps the prior's growing variance): the fit ends at variances in the thousands, with predictive
// probabilities near the classes' shares even at the training points. gpr-laplace-map is the same model with a
// log-normal(0, 1) prior on the variance (MAP), what a user should run on such data.

// irisVariancePrior is gpr-laplace-map's prior on the kernel variance.
const irisVariancePrior = "variance=lognormal(0,1)"

func init() {
	const set, dim = "iris", 4
	src := sources[set]
	ls := 2.0 // √D: the scale of a distance between standardised inputs
	prior, err := gp.ParsePriorRule(irisVariancePrior)
	if err != nil {
		panic(err) // a constant: not reached
	}
	ref := "Rasmussen & Williams 2006, §3.5, Algorithms 3.3 and 3.4; split protocol: " + src.protocol
	for _, v := range []struct {
		model, what string
		priors      []gp.PriorRule
	}{{"gpr-laplace", "ML-II", nil}, {"gpr-laplace-map", "MAP with " + irisVariancePrior, []gp.PriorRule{prior}}} {
		register(configuredEntry(set+"/"+v.model, set,
			fmt.Sprintf("exact GP, softmax (3 classes), the multi-class Laplace approximation (R&W §3.5), SE-ARD (ℓ₀ = √%d), %s by L-BFGS ≤ %d iterations from %d starts (%s)",
				dim, v.what, RaetschApproxIters, DefaultApproxRestarts, set),
			ref, "no published number under these splits",
			CustomConfig{Family: "gpr", Likelihood: "softmax", Inference: "laplace", Iters: RaetschApproxIters, KernelLengthscale: ls, Priors: v.priors}))
	}
	register(configuredEntry(set+"/svgp-softmax", set,
		fmt.Sprintf("SVGP, softmax (3 classes), M=50 k-means, SE-ARD (ℓ₀ = √%d), full batch, Adam 0.01, 3000 steps (%s)", dim, set),
		"Hensman, Matthews & Ghahramani 2015; split protocol: "+src.protocol, "the exact GP's gpr-laplace entries on the same splits",
		CustomConfig{Family: "svgp", Likelihood: "softmax", Inducing: 50, Iters: 3000, LR: 0.01, BatchSize: DefaultBatch,
			KernelLengthscale: ls, KMeansIters: DefaultKMeansIters}))
}
