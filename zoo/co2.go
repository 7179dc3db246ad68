package zoo

import (
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
)

// CO2TrainFrom and CO2TestFrom bound the CO₂ entries' split (decimal years): they train on January 1968 –
// December 1991, as Wilson & Adams (2013, §5.1) do, and extrapolate January 1992 – December 2001, the record's
// last ten years (their test years run to 2004; statsmodels' copy ends in 2001).
const (
	CO2TrainFrom = 1968.0
	CO2TestFrom  = 1992.0
)

const protoCO2 = "train on the monthly means of 1968–1991, extrapolate 1992–2001 (only split 0)"

// co2Split is the CO₂ entries' split: the months from CO2TrainFrom to CO2TestFrom train, the later ones test
// (the earlier ones are not used).
func co2Split(k int) (*datasets.Dataset, []int, []int, error) {
	if k != 0 {
		return nil, nil, nil, fmt.Errorf("co2 has only split 0 (the last ten years held out), got %d", k)
	}
	d, err := datasets.EmbeddedCO2Monthly()
	if err != nil {
		return nil, nil, nil, err
	}
	var train, test []int
	for i := 0; i < d.N(); i++ {
		switch x := d.X.At(i, 0); {
		case x >= CO2TestFrom:
			test = append(test, i)
		case x >= CO2TrainFrom:
			train = append(train, i)
		}
	}
	return d, train, test, nil
}

func init() {
	// Mauna Loa CO₂ (statsmodels' copy of the Scripps weekly series, embedded, monthly means): the exact GP
	// extrapolates the last ten years with an SE kernel, SE + periodic and a spectral mixture, each trained from
	// three initial noise variances, keeping the fit of the highest training log marginal likelihood
	// (runNoiseRestarts). The periodic kernel's period starts from the training targets' periodogram
	// (gp.PeriodFromData: 0.997 years); from the default period, seven years in standardised time, L-BFGS never
	// reached one year and SE + periodic collapsed to SE. With the yearly cycle its training evidence is far above
	// SE's, but its SE term then follows the medium-term wiggles with a short length-scale and reverts to the
	// training mean within a year of the data. The spectral mixture starts from the same periodogram (a
	// frequency-0 trend component first). Wilson & Adams (2013, §5.1) train on this record's 1968–1991 and
	// extrapolate to 2004 with Q = 10 components; Q = 10 (family sm10) is also the training evidence's choice:
	// the best log marginal likelihood per training month over the restarts is 2.035 with Q = 10 against 2.001
	// with Q = 4 (gp.DefaultComponents) after 100 L-BFGS iterations. 100 iterations per restart (each costs Q
	// covariance ops) are the compute budget, about 15 s for the three. The test months were never the criterion;
	// note that they are sensitive to small differences of the training objective (issue 32's closing note).
	sources["co2"] = source{format: "embedded", protocol: protoCO2, load: co2Split}
	const ref = "Wilson & Adams (2013), Gaussian process kernels for pattern discovery and extrapolation, §5.1 (CO₂ extrapolation, Fig. 2)"
	for _, c := range []struct {
		model, kernel, summary, published string
		iters                             int
	}{
		{"se", "se", "exact GP, SE kernel, L-BFGS: extrapolates Mauna Loa CO₂ 1992–2001 from 1968–1991 (monthly means, embedded)",
			"no published number on this split; Wilson & Adams (2013, Fig. 2) show SE reverting to the mean away from the data", 200},
		{"se-per", "se+periodic", "exact GP, SE + periodic kernel (period from the periodogram), L-BFGS: extrapolates Mauna Loa CO₂ 1992–2001 from 1968–1991 (embedded)",
			"no published number on this split; compare co2/se and co2/sm", 200},
		{"sm", "sm10", "exact GP, spectral mixture kernel (Q = 10, from the periodogram), L-BFGS: extrapolates Mauna Loa CO₂ 1992–2001 (embedded)",
			"no published number on this split; Wilson & Adams (2013, Fig. 2): the SM kernel (Q = 10) extrapolates the trend and the yearly cycle where SE does not; the issue's bar is lower test RMSE and higher test LL than co2/se: RMSE met in both builds; LL −1.73 against SE's −2.30 in the pure-Go build, in the openblas build −1.67 (−1.75 on one thread) with OpenBLAS forced to its SkylakeX kernels but −2.73 on its generic ones (another fit of about the same training evidence)", 100},
	} {
		if !registeredKernel(c.kernel) {
			continue // an entry of a kernel this build does not register
		}
		e := configuredEntry("co2/"+c.model, "co2", c.summary, ref+"; split protocol: "+protoCO2, c.published,
			CustomConfig{Family: "gpr", Kernel: c.kernel, Iters: c.iters, NoiseVariance: co2NoiseInits[0], LR: GPRAdamLR})
		e.run = runNoiseRestarts
		register(e)
	}
}

// co2NoiseInits are the initial noise variances (standardised targets) every CO₂ entry starts L-BFGS from in
// turn: the zoo's DefaultGPRNoise and two decades below it (the record's monthly means are precise to about
// 0.1 ppm, 10⁻⁴ of its variance). The marginal likelihood of these kernels has several modes that split the
// variance differently between noise and signal, and one start need not find the best.
var co2NoiseInits = []float64{DefaultGPRNoise, DefaultGPRNoise / 10, DefaultGPRNoise / 100}

// runNoiseRestarts runs a configured entry once from each of co2NoiseInits and returns the run with the highest
// training objective (the log marginal likelihood per training point, Result.ELBOPerPoint; the first on ties):
// restarts judged by the training data alone, never by the test rows. Its TrainSeconds is the sum over the
// restarts; a model file (o.SaveModel) is the chosen run's, written by running it once more.
func runNoiseRestarts(e *Entry, o Options) (*Result, error) {
	return bestOfRestarts(co2NoiseInits, o, func(noise float64, o Options) (*Result, error) {
		c := *e.Config
		c.NoiseVariance = noise
		r := *e
		r.Config = &c
		return runConfigured(&r, o)
	})
}

// bestOfRestarts calls run once per initial noise variance, without saving, and returns the result of the highest
// training objective with TrainSeconds the restarts' sum. When o saves a model, the chosen restart runs once more,
// saving, and its result is returned (training is deterministic, so it is the same fit).
func bestOfRestarts(inits []float64, o Options, run func(noise float64, o Options) (*Result, error)) (*Result, error) {
	save := o.SaveModel
	o.SaveModel = ""
	var best *Result
	bestNoise, total := 0.0, 0.0
	for _, noise := range inits {
		res, err := run(noise, o)
		if err != nil {
			return nil, fmt.Errorf("%w (initial noise variance %g)", err, noise)
		}
		total += res.TrainSeconds
		if best == nil || res.ELBOPerPoint > best.ELBOPerPoint {
			best, bestNoise = res, noise
		}
	}
	if save != "" {
		o.SaveModel = save
		res, err := run(bestNoise, o)
		if err != nil {
			return nil, err
		}
		best = res
	}
	best.TrainSeconds = total
	return best, nil
}

// registeredKernel reports whether every family named in the sum expr (names joined by +) is registered.
func registeredKernel(expr string) bool {
	for _, name := range strings.Split(expr, "+") {
		if _, ok := gp.LookupKernel(name); !ok {
			return false
		}
	}
	return true
}
