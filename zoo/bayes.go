package zoo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/mcmc"
	"gonum.org/v1/gonum/mat"
)

// MCMCConfig asks TrainCustom to sample the posterior of a gpr or sgpr model's hyperparameters with NUTS
// (package gp/bayes) after its MAP fit, and to save the posterior predictive (the mixture over Keep draws) as the
// model. A gpr with a non-Gaussian likelihood is GPMC (gp/models): its hyperparameters and whitened latent values
// are sampled jointly, from the initial hyperparameters and v = 0 (no MAP fit). Every sampled hyperparameter
// needs a prior (CustomConfig.Priors); SGPR's inducing inputs are fixed at their k-means placement (the MAP fit
// too leaves them there). Zero values mean the defaults.
type MCMCConfig struct {
	// Chains (default 4), Warmup and Samples per chain (defaults 1000), Keep the draws the model file keeps for
	// prediction (default bayes.DefaultKeep).
	Chains, Warmup, Samples, Keep int
	// MaxDepth (default 10) and TargetAccept (default 0.8) are NUTS's tree depth and step-size target.
	MaxDepth     int
	TargetAccept float64
}

// options returns the chains' NUTS options.
func (m *MCMCConfig) options() mcmc.Options {
	return mcmc.Options{Warmup: m.Warmup, Samples: m.Samples, MaxDepth: m.MaxDepth, TargetAccept: m.TargetAccept}
}

// check returns an error wrapping ErrBadCustom for values NUTS cannot take.
func (m *MCMCConfig) check(c CustomConfig) error {
	if c.Family != "gpr" && c.Family != "sgpr" {
		return fmt.Errorf("%w: MCMC samples the hyperparameters of gpr and sgpr (and gpr with any likelihood: GPMC), not %s", ErrBadCustom, c.Family)
	}
	if c.Cluster != nil || c.CheckpointDir != "" || c.Resume {
		return fmt.Errorf("%w: MCMC runs on one machine, without checkpoints", ErrBadCustom)
	}
	if m.Chains < 0 || m.Warmup < 0 || m.Samples < 0 || m.Keep < 0 || m.MaxDepth < 0 {
		return fmt.Errorf("%w: MCMC chains %d, warmup %d, samples %d, keep %d, max tree depth %d: want counts ≥ 1 (0: the default)", ErrBadCustom, m.Chains, m.Warmup, m.Samples, m.Keep, m.MaxDepth)
	}
	if _, err := m.options().WithDefaults(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	return nil
}

// newGPMC returns the GPMC of c's gpr with the non-Gaussian likelihood fam on tr (a model that predicts from it).
func newGPMC(tr *datasets.Dataset, c CustomConfig, fam gp.LikelihoodFamily, kern gp.Kernel, mc *rand.Rand) (*customBuild, error) {
	lik, _, err := newLikelihood(fam, tr.P(), tr.NumClasses, cmp.Or(c.NoiseVariance, models.DefaultNoiseVariance), mc)
	if err != nil {
		return nil, err
	}
	m, err := models.NewGPMC(models.GPMCConfig{Kernel: kern, Likelihood: lik, X: tr.X, Y: tr.Y})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	return &customBuild{model: m, describe: fmt.Sprintf("GPMC (%s likelihood, whitened latent values)", fam.Name)}, nil
}

// checkSampled prepares model for NUTS and checks it can be sampled (bayes.Check): SGPR's inducing inputs are
// fixed (sampling Z, which has no prior to confine it, would make the posterior improper), and every other
// trainable Param must have a prior.
func checkSampled(model gp.Model, c CustomConfig) error {
	m, ok := model.(bayes.Model)
	if !ok {
		return fmt.Errorf("%w: a %T cannot be sampled (not a bayes.Model)", ErrBadCustom, model)
	}
	if c.Family == "sgpr" {
		fixInducing(m.Params())
	}
	if err := bayes.Check(m); err != nil {
		return fmt.Errorf("zoo: --mcmc: %w", err)
	}
	return nil
}

// sampleCustom runs NUTS over model (fitted, priors set) on the training set (x, y) with c.MCMC and fills res's
// MCMC diagnostics; it returns the sampler's result, whose Posterior is the model to save.
func sampleCustom(model gp.Model, x, y *mat.Dense, c CustomConfig, res *Result) (*bayes.Result, error) {
	m, ok := model.(bayes.Model)
	if !ok {
		return nil, fmt.Errorf("%w: a %T cannot be sampled (not a bayes.Model)", ErrBadCustom, model)
	}
	cfg := bayes.Config{Chains: c.MCMC.Chains, NUTS: c.MCMC.options(), Seed: c.Seed, Keep: c.MCMC.Keep}
	if c.Logger != nil {
		o, _ := cfg.NUTS.WithDefaults()
		total := o.Warmup + o.Samples
		every := max(1, total/10)
		var done atomic.Int64
		cfg.Progress = func(chain, iter int) {
			done.Add(1)
			if (iter+1)%every == 0 {
				phase := "sampling"
				if iter < o.Warmup {
					phase = "warmup"
				}
				c.Logger.Info("nuts", "chain", chain, "iter", iter+1, "of", total, "phase", phase)
			}
		}
	}
	out, err := bayes.Sample(m, x, y, cfg)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", res.Entry, err)
	}
	d := finiteDiagnostics(out.Diagnostics) // JSON has no NaN
	res.MCMC = &d
	res.TrainSeconds += d.Seconds
	return out, nil
}

// mcmcMeta returns the diagnostics as the model file's "mcmc" metadata (compact JSON).
func mcmcMeta(d *bayes.Diagnostics) string {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Sprintf(`{"error":%q}`, err.Error())
	}
	return string(b)
}

// finiteDiagnostics replaces non-finite numbers (JSON has none; an R̂ of draws that never moved is NaN) by −1.
func finiteDiagnostics(d bayes.Diagnostics) bayes.Diagnostics {
	fix := func(v *float64) {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = -1
		}
	}
	fix(&d.MaxRhat)
	fix(&d.MinESSBulk)
	fix(&d.MeanAccept)
	d.Params = append([]bayes.ParamSummary(nil), d.Params...)
	for i := range d.Params {
		s := &d.Params[i].Summary
		for _, v := range []*float64{&s.Mean, &s.SD, &s.Q5, &s.Median, &s.Q95, &s.MCSEMean, &s.MCSESD, &s.Rhat, &s.ESSBulk, &s.ESSTail, &s.ESSMean} {
			fix(v)
		}
	}
	if d.Latent != nil {
		l := *d.Latent
		fix(&l.MaxRhat)
		fix(&l.MinESSBulk)
		d.Latent = &l
	}
	return d
}
