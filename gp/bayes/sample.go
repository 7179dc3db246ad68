package bayes

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/mcmc"
	"gonum.org/v1/gonum/mat"
)

// Config configures Sample. Zero values mean the defaults.
type Config struct {
	// Chains is the number of chains (default 4), run in parallel on up to GOMAXPROCS cores.
	Chains int
	// NUTS configures each chain: Warmup, Samples (defaults 1000 each), MaxDepth (10), TargetAccept (0.8), ...
	NUTS mcmc.Options
	// Seed seeds the chains (mcmc.ChainRand(Seed, c)) and their initial points.
	Seed uint64
	// InitJitter is the half-width of the uniform perturbation of the model's raw values each chain starts from
	// (default 0.5; negative: none, every chain starts at the model's values).
	InitJitter float64
	// Keep is the number of draws the Posterior keeps for prediction, spread evenly over the chains and their
	// iterations (default 200; at most Chains × Samples).
	Keep int
	// Graph configures the chains' graphs (the Cholesky jitter policy).
	Graph graph.Options
	// Progress, when set, is called after every iteration of every chain, from the chains' goroutines.
	Progress func(chain, iter int)
}

// DefaultKeep is the number of draws a Posterior keeps when Config.Keep is 0.
const DefaultKeep = 200

// maxInitTries bounds the perturbed starting points tried per chain before Sample gives up.
const maxInitTries = 100

// Result is the outcome of Sample.
type Result struct {
	// Chains are the sampler's chains: draws of the sampled raw values and each transition's statistics.
	Chains []*mcmc.Chain
	// Posterior is the model's posterior predictive: the mixture over Keep draws.
	Posterior *Posterior
	// Diagnostics summarises the run (what gpzoo prints and saves).
	Diagnostics Diagnostics
	lay         layout
}

// Diagnostics summarise a NUTS run: every sampled hyperparameter's posterior in constrained units with its
// convergence diagnostics (Vehtari et al. 2021), the worst over latent values, and the sampler's behaviour.
type Diagnostics struct {
	Chains  int `json:"chains"`
	Warmup  int `json:"warmup"`
	Samples int `json:"samples"`
	// Kept is the number of draws the Posterior predicts with.
	Kept int `json:"kept"`
	// Divergences counts the divergent transitions after warmup (any is a warning: the sampler could not follow
	// the posterior's geometry there; raise TargetAccept or reparameterise).
	Divergences int `json:"divergences"`
	// TreeDepthSaturated counts the transitions after warmup that hit MaxDepth (an efficiency warning).
	TreeDepthSaturated int `json:"treedepth_saturated"`
	MaxDepth           int `json:"max_treedepth"`
	// StepSizes are the chains' adapted step sizes; MeanAccept their mean acceptance statistic after warmup.
	StepSizes  []float64 `json:"step_sizes"`
	MeanAccept float64   `json:"mean_accept"`
	// Gradients counts the log-density evaluations of every chain; Seconds is the wall time of the sampling.
	Gradients int     `json:"gradients"`
	Seconds   float64 `json:"seconds"`
	// Params summarise each entry of each sampled hyperparameter (latent Params apart).
	Params []ParamSummary `json:"params"`
	// Latent summarises the latent values (GPMC's v): how many, the largest R̂ and the smallest bulk ESS.
	Latent *LatentSummary `json:"latent,omitempty"`
	// MaxRhat is the largest R̂ of any sampled value; MinESSBulk the smallest bulk ESS.
	MaxRhat    float64 `json:"max_rhat"`
	MinESSBulk float64 `json:"min_ess_bulk"`
}

// ParamSummary is one scalar hyperparameter's posterior summary, in constrained units (a length-scale, not its
// raw value), with its diagnostics.
type ParamSummary struct {
	Name string `json:"name"`
	mcmc.Summary
}

// LatentSummary is the worst of the latent values' diagnostics.
type LatentSummary struct {
	Count      int     `json:"count"`
	MaxRhat    float64 `json:"max_rhat"`
	MinESSBulk float64 `json:"min_ess_bulk"`
}

// Sample runs NUTS over the trainable Params of m given the training data (x [N,D], y [N,P]) and returns the
// chains, their diagnostics and the Posterior. Every trainable Param needs a prior (a *MissingPriorError names
// those without), but latent Params of a gp.LatentHolder; frozen Params stay at their values. m itself is not
// changed: each chain samples a copy.
func Sample(m Model, x, y *mat.Dense, cfg Config) (*Result, error) {
	if m == nil || x == nil || y == nil {
		return nil, errors.New("bayes: Sample: nil model or data")
	}
	if cfg.Chains == 0 {
		cfg.Chains = 4
	}
	if cfg.Chains < 1 {
		return nil, fmt.Errorf("bayes: Sample: %d chains", cfg.Chains)
	}
	if cfg.InitJitter == 0 {
		cfg.InitJitter = 0.5
	}
	nuts, err := cfg.NUTS.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	if cfg.Keep == 0 {
		cfg.Keep = DefaultKeep
	}
	cfg.Keep = min(cfg.Keep, cfg.Chains*nuts.Samples)
	if cfg.Keep < 1 {
		return nil, fmt.Errorf("bayes: Sample: keep %d draws", cfg.Keep)
	}
	lay, err := sampledLayout(m)
	if err != nil {
		return nil, err
	}
	if err := graph.CheckPriorSupport(m.Params()); err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	copies := make([]Model, cfg.Chains)
	targets := make([]*target, cfg.Chains)
	inits := make([][]float64, cfg.Chains)
	for c := range copies {
		if copies[c], err = clone(m, gp.BuildOptions{Rand: rand.New(rand.NewPCG(cfg.Seed, 0x636c6f6e65+uint64(c)))}); err != nil {
			return nil, err
		}
		if targets[c], err = newTarget(copies[c], lay, x, y, cfg.Graph); err != nil {
			return nil, err
		}
		if inits[c], err = startingPoint(targets[c], lay.raw(m.Params()), cfg.InitJitter, initRand(cfg.Seed, c)); err != nil {
			return nil, fmt.Errorf("bayes: chain %d: %w", c, err)
		}
	}
	t0 := time.Now()
	chains, err := mcmc.Run(func(c int) (mcmc.Density, error) { return targets[c], nil }, inits, cfg.Seed, nuts, cfg.Progress)
	if err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	res := &Result{Chains: chains, lay: lay}
	res.Diagnostics = diagnose(m, lay, chains, nuts, time.Since(t0).Seconds())
	if res.Posterior, err = NewPosterior(m, lay.index, keepDraws(chains, cfg.Keep)); err != nil {
		return nil, err
	}
	res.Diagnostics.Kept = cfg.Keep
	return res, nil
}

// startingPoint returns x0 perturbed uniformly by ±jitter where the target has a finite log density, trying up
// to maxInitTries perturbations (x0 itself when jitter < 0).
func startingPoint(t *target, x0 []float64, jitter float64, rng *rand.Rand) ([]float64, error) {
	x := make([]float64, len(x0))
	grad := make([]float64, len(x0))
	for try := 0; try < maxInitTries; try++ {
		for i, v := range x0 {
			x[i] = v
			if jitter > 0 {
				x[i] += jitter * (2*rng.Float64() - 1)
			}
		}
		lp, err := t.LogDensity(x, grad)
		if err != nil {
			return nil, err
		}
		finite := !math.IsInf(lp, 0) && !math.IsNaN(lp)
		for _, g := range grad {
			finite = finite && !math.IsInf(g, 0) && !math.IsNaN(g)
		}
		if finite {
			return x, nil
		}
		if jitter <= 0 {
			break
		}
	}
	return nil, fmt.Errorf("%w: no finite log posterior within ±%v of the model's raw values after %d tries", mcmc.ErrInit, jitter, maxInitTries)
}

// keepDraws returns k draws spread over the chains: chain c contributes its share of k, evenly spaced over its
// iterations, chains in order.
func keepDraws(chains []*mcmc.Chain, k int) [][]float64 {
	out := make([][]float64, 0, k)
	for c, ch := range chains {
		share := k/len(chains) + btoi(c < k%len(chains))
		n := len(ch.Draws)
		for j := 0; j < share; j++ {
			out = append(out, ch.Draws[(2*j+1)*n/(2*share)])
		}
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// diagnose summarises the chains: the hyperparameters entry by entry in constrained units, the latent values'
// worst diagnostics, and the transitions.
func diagnose(m Model, lay layout, chains []*mcmc.Chain, o mcmc.Options, seconds float64) Diagnostics {
	d := Diagnostics{Chains: len(chains), Warmup: o.Warmup, Samples: o.Samples, MaxDepth: o.MaxDepth, Seconds: seconds, MinESSBulk: math.Inf(1)}
	acc, n := 0.0, 0
	for _, ch := range chains {
		d.StepSizes = append(d.StepSizes, ch.StepSize)
		d.Gradients += ch.Gradients
		for _, st := range ch.Stats {
			acc += st.AcceptStat
			n++
			if st.Divergent {
				d.Divergences++
			}
			if st.TreeDepth >= o.MaxDepth {
				d.TreeDepthSaturated++
			}
		}
	}
	d.MeanAccept = acc / float64(n)
	latent := map[*graph.Param]bool{}
	if lh, ok := m.(gp.LatentHolder); ok {
		for _, p := range lh.LatentParams() {
			latent[p] = true
		}
	}
	ps := m.Params()
	for k, i := range lay.index {
		p := ps[i]
		for e := 0; e < p.Size(); e++ {
			draws := make([][]float64, len(chains))
			for c, ch := range chains {
				draws[c] = make([]float64, len(ch.Draws))
				for s, x := range ch.Draws {
					draws[c][s] = x[lay.offset[k]+e]
				}
			}
			if latent[p] {
				if d.Latent == nil {
					d.Latent = &LatentSummary{MinESSBulk: math.Inf(1)}
				}
				d.Latent.Count++
				r, ess := mcmc.Rhat(draws), mcmc.ESSBulk(draws)
				d.Latent.MaxRhat, d.Latent.MinESSBulk = maxNaN(d.Latent.MaxRhat, r), math.Min(d.Latent.MinESSBulk, ess)
				d.MaxRhat, d.MinESSBulk = maxNaN(d.MaxRhat, r), math.Min(d.MinESSBulk, ess)
				continue
			}
			for c := range draws { // constrained units
				draws[c] = constrained(p, draws[c])
			}
			s := mcmc.Summarize(draws)
			name := p.Name()
			if p.Size() > 1 {
				name = fmt.Sprintf("%s[%d]", name, e)
			}
			d.Params = append(d.Params, ParamSummary{Name: name, Summary: s})
			d.MaxRhat, d.MinESSBulk = maxNaN(d.MaxRhat, s.Rhat), math.Min(d.MinESSBulk, s.ESSBulk)
		}
	}
	return d
}

// maxNaN returns the larger of a and b, NaN if either is (an undefined R̂ is not a good one).
func maxNaN(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

// constrained maps raw draws of one entry of p to its constrained values (p's transform is elementwise).
func constrained(p *graph.Param, raw []float64) []float64 {
	return p.Transform().Apply(raw, []int{len(raw)})
}

// Report returns the diagnostics as text: one line per hyperparameter (mean, sd, 5%, 50%, 95%, R̂, bulk and tail
// ESS), the latent values' worst, and the sampler's warnings.
func (d Diagnostics) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  NUTS: %d chains × %d draws after %d warmup iterations (%d kept for prediction), %.1f s, %d gradients\n",
		d.Chains, d.Samples, d.Warmup, d.Kept, d.Seconds, d.Gradients)
	fmt.Fprintf(&b, "  %-32s %10s %10s %10s %10s %10s %7s %8s %8s\n", "parameter", "mean", "sd", "5%", "50%", "95%", "R-hat", "ESS bulk", "ESS tail")
	for _, p := range d.Params {
		fmt.Fprintf(&b, "  %-32s %10.4g %10.4g %10.4g %10.4g %10.4g %7.4f %8.0f %8.0f\n", p.Name, p.Mean, p.SD, p.Q5, p.Median, p.Q95, p.Rhat, p.ESSBulk, p.ESSTail)
	}
	if l := d.Latent; l != nil {
		fmt.Fprintf(&b, "  %d latent values: largest R-hat %.4f, smallest bulk ESS %.0f\n", l.Count, l.MaxRhat, l.MinESSBulk)
	}
	steps := make([]string, len(d.StepSizes))
	for i, s := range d.StepSizes {
		steps[i] = fmt.Sprintf("%.3g", s)
	}
	fmt.Fprintf(&b, "  step sizes %s, mean acceptance %.3f; %d divergent transitions; %d of %d at the maximum tree depth %d\n",
		strings.Join(steps, " "), d.MeanAccept, d.Divergences, d.TreeDepthSaturated, d.Chains*d.Samples, d.MaxDepth)
	if w := d.Warnings(); len(w) > 0 {
		fmt.Fprintf(&b, "  warning: %s\n", strings.Join(w, "; "))
	}
	return b.String()
}

// Warnings lists what the diagnostics advise against trusting: R̂ ≥ 1.01, bulk ESS below 100 per chain,
// divergences, saturated tree depths.
func (d Diagnostics) Warnings() []string {
	var w []string
	if !(d.MaxRhat < 1.01) {
		w = append(w, fmt.Sprintf("largest R-hat %.3f ≥ 1.01: the chains disagree (run longer warmup or more draws)", d.MaxRhat))
	}
	if d.MinESSBulk < 100*float64(d.Chains) {
		w = append(w, fmt.Sprintf("smallest bulk ESS %.0f < %d (100 per chain: run more draws)", d.MinESSBulk, 100*d.Chains))
	}
	if d.Divergences > 0 {
		w = append(w, fmt.Sprintf("%d divergent transitions (raise --target-accept)", d.Divergences))
	}
	if d.TreeDepthSaturated > 0 {
		w = append(w, fmt.Sprintf("%d transitions hit the maximum tree depth (raise --max-treedepth)", d.TreeDepthSaturated))
	}
	return w
}

// WriteDrawsCSV writes every draw after warmup as CSV: a header "chain,draw,<hyperparameter entries>" (named as
// in Diagnostics.Params) and one row per draw of every chain, the hyperparameters in constrained units; latent
// Params (GPMC's v) are left out.
func (r *Result) WriteDrawsCSV(w io.Writer) error {
	m := r.Posterior.Model
	latent := map[*graph.Param]bool{}
	if lh, ok := m.(gp.LatentHolder); ok {
		for _, p := range lh.LatentParams() {
			latent[p] = true
		}
	}
	ps := m.Params()
	cw := csv.NewWriter(w)
	header := []string{"chain", "draw"}
	type col struct {
		p   *graph.Param
		off int
	}
	var cols []col
	for k, i := range r.lay.index {
		p := ps[i]
		if latent[p] {
			continue
		}
		for e := 0; e < p.Size(); e++ {
			name := p.Name()
			if p.Size() > 1 {
				name = fmt.Sprintf("%s[%d]", name, e)
			}
			header = append(header, name)
			cols = append(cols, col{p, r.lay.offset[k] + e})
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for c, ch := range r.Chains {
		for s, d := range ch.Draws {
			row[0], row[1] = strconv.Itoa(c), strconv.Itoa(s)
			for j, cl := range cols {
				row[2+j] = strconv.FormatFloat(cl.p.Transform().Apply([]float64{d[cl.off]}, []int{1})[0], 'g', -1, 64)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
