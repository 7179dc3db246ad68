package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/bayes"
	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"github.com/gpzoo/gpzoo/zoo"
)

// The flags of gpzoo train for priors and MCMC: --prior (repeatable), --mcmc and the NUTS settings.

// mcmcFlagSet holds the MCMC flags of one command line.
type mcmcFlagSet struct {
	method                                  *string
	samples, warmup, chains, keep, maxDepth *int
	targetAccept                            *float64
	draws                                   *string
}

// mcmcFlags declares --mcmc and its settings on fs.
func mcmcFlags(fs *flag.FlagSet) *mcmcFlagSet {
	return &mcmcFlagSet{
		method:       fs.String("mcmc", "", "sample the hyperparameters' posterior: nuts"),
		samples:      fs.Int("mcmc-samples", 0, "NUTS draws per chain"),
		warmup:       fs.Int("mcmc-warmup", 0, "NUTS warmup iterations per chain"),
		chains:       fs.Int("chains", 0, "NUTS chains"),
		keep:         fs.Int("mcmc-keep", 0, "draws kept for prediction"),
		maxDepth:     fs.Int("max-treedepth", 0, "NUTS maximum tree depth"),
		targetAccept: fs.Float64("target-accept", 0, "NUTS target acceptance statistic"),
		draws:        fs.String("mcmc-draws", "", "CSV of the draws"),
	}
}

// mcmcSettings are the flags that need --mcmc.
var mcmcSettings = []string{"mcmc-samples", "mcmc-warmup", "chains", "mcmc-keep", "max-treedepth", "target-accept", "mcmc-draws"}

// config returns the zoo's MCMC configuration of the flags (nil without --mcmc), refusing, by flag, settings
// without --mcmc, an unknown method, counts below 1, a target outside (0, 1), a family NUTS does not sample and
// a draws file whose folder is missing.
func (m *mcmcFlagSet) config(set map[string]bool, family string) (*zoo.MCMCConfig, error) {
	if !set["mcmc"] {
		for _, name := range mcmcSettings {
			if set[name] {
				return nil, fmt.Errorf("train: --%s is a setting of --mcmc nuts: add --mcmc nuts", name)
			}
		}
		return nil, nil
	}
	if method := strings.ToLower(*m.method); method != "nuts" {
		return nil, fmt.Errorf("train: --mcmc %q: the sampler is nuts (the No-U-Turn Sampler)", *m.method)
	}
	if f := strings.ToLower(family); f != "gpr" && f != "sgpr" {
		return nil, fmt.Errorf("train: --mcmc nuts samples the hyperparameters of --model gpr or sgpr (gpr with a non-Gaussian --likelihood: GPMC), not %s", family)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"mcmc-samples", *m.samples}, {"mcmc-warmup", *m.warmup}, {"chains", *m.chains}, {"mcmc-keep", *m.keep}, {"max-treedepth", *m.maxDepth}} {
		if set[c.name] && c.v < 1 {
			return nil, fmt.Errorf("train: --%s %d: want a count of at least 1", c.name, c.v)
		}
	}
	if set["max-treedepth"] && *m.maxDepth > 30 {
		return nil, fmt.Errorf("train: --max-treedepth %d: want at most 30 (2^30 leapfrog steps per draw)", *m.maxDepth)
	}
	if set["target-accept"] && !(*m.targetAccept > 0 && *m.targetAccept < 1) {
		return nil, fmt.Errorf("train: --target-accept %g: want a value in (0, 1) (0.8 is Stan's default; 0.95–0.99 against divergences)", *m.targetAccept)
	}
	if *m.draws != "" {
		if err := atomicfile.CheckWritable(*m.draws); err != nil {
			return nil, fmt.Errorf("train: --mcmc-draws: %w", err)
		}
	}
	return &zoo.MCMCConfig{Chains: *m.chains, Warmup: *m.warmup, Samples: *m.samples, Keep: *m.keep, MaxDepth: *m.maxDepth, TargetAccept: *m.targetAccept}, nil
}

// parsePriors parses the --prior values, refusing the first malformed one with its position among the --prior
// flags, the parameter it names and the byte of the problem (gp.PriorSyntaxError).
func parsePriors(args []string) ([]gp.PriorRule, error) {
	rules := make([]gp.PriorRule, len(args))
	for i, a := range args {
		r, err := gp.ParsePriorRule(a)
		if err != nil {
			var se *gp.PriorSyntaxError
			if errors.As(err, &se) {
				param := ""
				if se.Param != "" {
					param = fmt.Sprintf(" (parameter %s)", se.Param)
				}
				return nil, fmt.Errorf("train: --prior %q (the %s --prior)%s: at byte %d: %s\n  %s\n  %s^", a, ordinal(i+1), param, se.Pos, se.Msg, a, strings.Repeat(" ", min(se.Pos, len(a))))
			}
			return nil, fmt.Errorf("train: --prior %q: %w", a, err)
		}
		rules[i] = r
	}
	return rules, nil
}

// ordinal returns 1st, 2nd, 3rd, 4th, ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// priorHelp lists the registered prior families, one a line with its Doc, for train's help.
func priorHelp() string {
	var b strings.Builder
	for _, f := range gp.PriorFamilies() {
		fmt.Fprintf(&b, "  %-18s  %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// writeDraws writes every draw of the run's hyperparameters as CSV to path (atomically).
func writeDraws(path string, r *bayes.Result) error {
	var buf bytes.Buffer
	if err := r.WriteDrawsCSV(&buf); err != nil {
		return fmt.Errorf("train: --mcmc-draws: %w", err)
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("train: --mcmc-draws: %w", err)
	}
	return nil
}
