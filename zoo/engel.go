package zoo

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
)

const protoEngel = "a seeded random 80/20 split (seed = split index)"

// engelSplit is split k of the Engel entries: a random 80/20 split seeded by k.
func engelSplit(k int) (*datasets.Dataset, []int, []int, error) {
	d, err := datasets.EmbeddedEngel()
	if err != nil {
		return nil, nil, nil, err
	}
	train, test, err := datasets.RandomSplit(d.N(), 0.2, rand.New(rand.NewPCG(uint64(k), 0xe9e1)))
	return d, train, test, err
}

func init() {
	// Engel's food expenditure against income (235 households, 1857; statsmodels' public-domain copy, embedded):
	// the spread of the expenditure grows with income, the textbook case of heteroscedastic noise (Koenker &
	// Bassett 1982). The same SVGP (SE kernel, M = 20, the same steps and minibatches) with the Gaussian likelihood
	// and with the heteroscedastic one (a second latent GP for the log noise variance; Lázaro-Gredilla & Titsias
	// 2011; Saul et al. 2016).
	sources["engel"] = source{format: "embedded", protocol: protoEngel, load: engelSplit}
	const ref = "Koenker & Bassett (1982) (the data, heteroscedastic); Lázaro-Gredilla & Titsias (2011), Saul et al. (2016) (the likelihood)"
	for _, c := range []struct{ model, likelihood, summary, published string }{
		{"svgp", "gaussian", "SVGP, SE kernel, M=20, Gaussian likelihood, on Engel's food expenditure vs income (235 rows, embedded)",
			"no published GP number; compare engel/svgp-het (the same model with input-dependent noise)"},
		{"svgp-het", "heteroscedastic", "SVGP, SE kernel, M=20, heteroscedastic Gaussian likelihood (log noise as a second GP), on Engel's data (embedded)",
			"no published GP number; the bar: a higher test LL than engel/svgp (the Gaussian likelihood) on the same split"},
	} {
		if _, ok := gp.LookupLikelihood(c.likelihood); !ok {
			continue // an entry of a likelihood this build does not register
		}
		register(configuredEntry("engel/"+c.model, "engel", c.summary, ref+"; split protocol: "+protoEngel, c.published,
			CustomConfig{Family: "svgp", Likelihood: c.likelihood, Kernel: "se", Inducing: 20, Iters: 2000, LR: 0.02}))
	}
}
