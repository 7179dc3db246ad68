package zoo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/zoo"
	"gonum.org/v1/gonum/mat"
)

func rules(t *testing.T, rs ...string) []gp.PriorRule {
	t.Helper()
	out := make([]gp.PriorRule, len(rs))
	for i, r := range rs {
		var err error
		if out[i], err = gp.ParsePriorRule(r); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestTrainCustomMCMC: gpr (MAP fit, then NUTS over its hyperparameters), sgpr (Z fixed) and gpr with a
// Bernoulli likelihood (GPMC, hyperparameters and latent values) train on a user's data set, report their priors
// and NUTS diagnostics, score the held-out rows with the posterior predictive and save it: the model file holds
// a Posterior with its priors and diagnostics, which loads and predicts the same bits.
func TestTrainCustomMCMC(t *testing.T) {
	reg, bin := toyData(80, 0), toyData(60, 2)
	hyper := rules(t, "lengthscale=lognormal(0,1)", "variance=lognormal(0,1)", "noise=lognormal(-2,1)")
	short := &zoo.MCMCConfig{Chains: 2, Warmup: 150, Samples: 100, Keep: 20}
	shorter := &zoo.MCMCConfig{Chains: 2, Warmup: 60, Samples: 40, Keep: 20} // EP at every leapfrog step
	cases := []struct {
		name string
		d    any
		cfg  zoo.CustomConfig
	}{
		{"gpr", reg, zoo.CustomConfig{Family: "gpr", Priors: hyper, MCMC: short}},
		{"sgpr", reg, zoo.CustomConfig{Family: "sgpr", Inducing: 15, Priors: hyper, MCMC: short}},
		{"gpmc", bin, zoo.CustomConfig{Family: "gpr", Likelihood: "bernoulli", Priors: hyper[:2], MCMC: short}},
		{"ep", bin, zoo.CustomConfig{Family: "gpr", Likelihood: "bernoulli", Inference: "ep", Priors: append(rules(t, "mean.c=normal(0,2)"), hyper[:2]...), MCMC: shorter}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := reg
			if c.cfg.Likelihood == "bernoulli" {
				d = bin
			}
			run, err := zoo.TrainCustom(d, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := run.Result
			if r.MCMC == nil || run.MCMC == nil || len(r.Priors) == 0 {
				t.Fatalf("no MCMC diagnostics or priors in the result: %+v", r)
			}
			if r.MCMC.Chains != 2 || r.MCMC.Samples != c.cfg.MCMC.Samples || r.MCMC.Kept != 20 || len(r.MCMC.Params) == 0 {
				t.Errorf("diagnostics %+v", r.MCMC)
			}
			switch c.name {
			case "ep": // NUTS over the EP marginal: hyperparameters only
				if r.MCMC.Latent != nil || r.TestAccuracy == nil || *r.TestAccuracy < 0.7 {
					t.Errorf("latent summary %+v, test accuracy %v", r.MCMC.Latent, r.TestAccuracy)
				}
			case "gpmc":
				if r.MCMC.Latent == nil || r.MCMC.Latent.Count != r.NTrain {
					t.Errorf("latent summary %+v for %d training rows", r.MCMC.Latent, r.NTrain)
				}
				if r.TestAccuracy == nil || *r.TestAccuracy < 0.7 {
					t.Errorf("test accuracy %v", r.TestAccuracy)
				}
			default:
				if r.TestRMSE == nil || !(*r.TestRMSE < 6) {
					t.Errorf("test RMSE %v (target sd ≈ 15)", r.TestRMSE)
				}
			}
			for _, name := range []string{"NUTS: 2 chains", "R-hat", "priors: "} {
				if !strings.Contains(r.Summary(), name) {
					t.Errorf("the summary lacks %q:\n%s", name, r.Summary())
				}
			}
			var js bytes.Buffer
			if err := r.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"mcmc"`) {
				t.Errorf("JSON: %v\n%s", err, js.String())
			}
			post, ok := run.File.Model.(*bayes.Posterior)
			if !ok || post.NumDraws() != 20 {
				t.Fatalf("the model file holds a %T", run.File.Model)
			}
			var meta bayes.Diagnostics
			if err := json.Unmarshal([]byte(run.File.Meta["mcmc"]), &meta); err != nil || meta.Chains != 2 {
				t.Errorf("meta mcmc %q: %v", run.File.Meta["mcmc"], err)
			}
			var buf bytes.Buffer
			if err := modelfile.Save(&buf, run.File); err != nil {
				t.Fatal(err)
			}
			g, err := modelfile.Load(&buf, gp.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			x := mat.NewDense(3, 2, []float64{3, 0, -7, 1, 13, -1})
			a, err := run.File.Predict(x, modelfile.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := g.Predict(x, modelfile.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if a.Mean != nil && !mat.Equal(a.Mean, b.Mean) || a.Probs != nil && !mat.Equal(a.Probs, b.Probs) {
				t.Error("the loaded posterior predicts other values")
			}
		})
	}
}

// TestTrainCustomPriorErrors: MCMC without priors names the Params that need one, a selector that matches
// nothing lists the model's Params, and MCMC on a family it does not sample is refused.
func TestTrainCustomPriorErrors(t *testing.T) {
	t.Parallel()
	reg := toyData(40, 0)
	_, err := zoo.TrainCustom(reg, zoo.CustomConfig{Family: "gpr", Iters: 5, Priors: rules(t, "lengthscale=lognormal(0,1)"), MCMC: &zoo.MCMCConfig{Warmup: 20, Samples: 10}})
	var mp *bayes.MissingPriorError
	if !errors.As(err, &mp) || strings.Join(mp.Params, " ") != "squaredexp.variance likelihood.variance" {
		t.Errorf("missing priors: %v", err)
	}
	var ue *gp.UnmatchedPriorError
	if _, err := zoo.TrainCustom(reg, zoo.CustomConfig{Family: "gpr", Iters: 5, Priors: rules(t, "period=gamma(2,1)")}); !errors.As(err, &ue) {
		t.Errorf("unmatched selector: %v", err)
	}
	if _, err := zoo.TrainCustom(reg, zoo.CustomConfig{Family: "svgp", Iters: 5, MCMC: &zoo.MCMCConfig{}}); !errors.Is(err, zoo.ErrBadCustom) {
		t.Errorf("MCMC on svgp: %v", err)
	}
	if _, err := zoo.TrainCustom(toyData(40, 2), zoo.CustomConfig{Family: "sgpr", Likelihood: "bernoulli", Iters: 5}); !errors.Is(err, zoo.ErrBadCustom) || !strings.Contains(err.Error(), "--mcmc nuts") {
		t.Errorf("sgpr with a Bernoulli likelihood: %v", err)
	}
	// MAP on an Adam family: the priors are set and reported.
	run, err := zoo.TrainCustom(reg, zoo.CustomConfig{Family: "svgp", Inducing: 10, Iters: 20, Priors: rules(t, "lengthscale=lognormal(0,1)")})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Result.Priors) != 1 || !strings.Contains(run.Result.Priors[0], "lengthscales ~ lognormal(0,1)") {
		t.Errorf("priors reported: %v", run.Result.Priors)
	}
}
