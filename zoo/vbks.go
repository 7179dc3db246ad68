package zoo

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/plots"
	"github.com/gpzoo/gpzoo/vbks"
)

// SyntheticPrefix names the paper's synthetic data sets in VBKSConfig.Data: "synthetic:" followed by one of
// vbks.Truths() (any spelling the grammar parses to it, e.g. "synthetic:(PER+RQ)*LIN").
const SyntheticPrefix = "synthetic:"

// VBKSSyntheticTest is the number of held-out rows generated with a synthetic data set (posterior means at
// further inputs, the same function as the training rows).
const VBKSSyntheticTest = 1000

// VBKSConfig configures a VBKS experiment (Teng et al. 2020). Zero values mean the vbks package's defaults.
type VBKSConfig struct {
	// Data is SyntheticPrefix+truth or the name of a regression data set the zoo knows (e.g. airfoil).
	Data    string
	DataDir string
	Split   int
	// Kernels is "K12", "K144" or a comma-separated list of expressions (grammar.ParseList).
	Kernels string
	// Local configures the candidates' SVGPs (inducing points, minibatch, Adam steps, workers).
	Local vbks.LocalConfig
	// Fractions, Top, Posterior and Seed are passed to vbks.Run.
	Fractions int
	Top       int
	Posterior vbks.PosteriorConfig
	Seed      uint64
	// Progress is called after every data fraction with the candidates' canonical expressions.
	Progress func(s vbks.Step, kernels []string)
}

// VBKSKernel is one kernel's line of a posterior table.
type VBKSKernel struct {
	Kernel string  `json:"kernel"`
	Prob   float64 `json:"prob"`
	ELBO   float64 `json:"-"`
	Error  string  `json:"error,omitempty"`
	// PolishFailures counts the L-BFGS polishes that failed and were undone (vbks.Candidate.PolishErrors).
	PolishFailures int `json:"polish_failures,omitempty"`
	// Ties lists the other kernels whose ℒ_i* is within VBKSTieNats of this one's (Ranking only). Eq. 8 with
	// its N(0, I) prior gives almost all the mass to one kernel of a tied pair (raising one coordinate of g
	// costs less KL than raising two), the one with the larger ℒ_i* however small the difference
	// (vbks.FitPosterior orders q*(k) as ℒ_i*), so q*(k) between tied kernels is a tie-break, not evidence.
	Ties []string `json:"ties,omitempty"`
}

// VBKSTieNats is the largest difference of local ELBOs (nats, a likelihood ratio of 1.01) reported as a tie.
const VBKSTieNats = 0.01

// VBKSMetrics are test metrics in the data's original units.
type VBKSMetrics struct {
	RMSE float64 `json:"rmse"`
	LL   float64 `json:"ll"` // mean log predictive density (a mixture's for BMA)
}

// VBKSFraction is the posterior after one data fraction.
type VBKSFraction struct {
	Fraction         float64 `json:"fraction"`
	Rows             int     `json:"rows"`
	Probs            floats  `json:"probs"`
	ELBOs            floats  `json:"elbos"`
	FitSeconds       float64 `json:"fit_seconds"`
	FitCPUSeconds    float64 `json:"fit_cpu_seconds"`
	PosteriorSeconds float64 `json:"posterior_seconds"`
}

// VBKSReport summarises a VBKS experiment.
type VBKSReport struct {
	Data    string   `json:"data"`
	Kernels []string `json:"kernels"`
	Train   int      `json:"train"`
	Test    int      `json:"test"`
	Workers int      `json:"workers"`
	// Fractions are the posteriors against the data seen so far (Kernels order).
	Fractions []VBKSFraction `json:"fractions"`
	// Ranking is the posterior over all candidates after the last fraction, most probable first; Pruned the
	// refitted posterior over the kept candidates that BMA uses.
	Ranking []VBKSKernel `json:"ranking"`
	Pruned  []VBKSKernel `json:"pruned"`
	Best    string       `json:"best"`
	// BMA averages the pruned candidates (eq. 15); Single is the most probable kernel alone (VBKS-s).
	BMA    VBKSMetrics `json:"bma"`
	Single VBKSMetrics `json:"single"`
	// Truth is the generating kernel of a synthetic set, TruthRank its 1-based rank in Ranking.
	Truth     string  `json:"truth,omitempty"`
	TruthRank int     `json:"truth_rank,omitempty"`
	TruthProb float64 `json:"truth_prob,omitempty"`
	// FitSeconds is the wall time of all local fits, FitCPUSeconds the sum of the candidates' own times.
	FitSeconds       float64 `json:"fit_seconds"`
	FitCPUSeconds    float64 `json:"fit_cpu_seconds"`
	PosteriorSeconds float64 `json:"posterior_seconds"`
}

// RunVBKS loads the data, runs VBKS and scores BMA and VBKS-s on the test rows.
func RunVBKS(c VBKSConfig) (*VBKSReport, *vbks.Result, error) {
	exprs, err := grammar.ParseList(c.Kernels)
	if err != nil {
		return nil, nil, err
	}
	tr, te, std, truth, err := vbksData(c)
	if err != nil {
		return nil, nil, err
	}
	rep := &VBKSReport{Data: c.Data, Train: tr.N(), Test: te.N(), Truth: truth}
	for _, e := range exprs {
		rep.Kernels = append(rep.Kernels, e.String())
	}
	var progress func(vbks.Step)
	if c.Progress != nil {
		progress = func(s vbks.Step) { c.Progress(s, rep.Kernels) }
	}
	res, err := vbks.Run(tr.X, tr.Y, vbks.Config{Kernels: exprs, Local: c.Local, Fractions: c.Fractions,
		Posterior: c.Posterior, Top: c.Top, Seed: c.Seed, Progress: progress})
	if err != nil {
		return nil, res, err
	}
	for _, s := range res.Steps {
		rep.Workers = s.Fit.Workers
		rep.FitSeconds += s.Fit.Seconds
		rep.FitCPUSeconds += s.Fit.CPUSeconds
		rep.PosteriorSeconds += s.PosteriorSeconds
		rep.Fractions = append(rep.Fractions, VBKSFraction{Fraction: s.Fraction, Rows: s.Rows, Probs: s.Probs, ELBOs: s.ELBOs,
			FitSeconds: s.Fit.Seconds, FitCPUSeconds: s.Fit.CPUSeconds, PosteriorSeconds: s.PosteriorSeconds})
	}
	last := res.Steps[len(res.Steps)-1]
	// Ranked by ℒ_i*, the order of the exact q*(k) (see vbks.Run); the Monte Carlo q*(k) is printed beside it.
	for _, i := range vbks.Rank(last.ELBOs) {
		k := VBKSKernel{Kernel: rep.Kernels[i], Prob: last.Probs[i], ELBO: last.ELBOs[i], PolishFailures: res.Candidates[i].PolishErrors}
		if err := res.Candidates[i].Err; err != nil {
			k.Error = err.Error()
		}
		rep.Ranking = append(rep.Ranking, k)
		if k.Kernel == truth {
			rep.TruthRank, rep.TruthProb = len(rep.Ranking), k.Prob
		}
	}
	markTies(rep.Ranking)
	for j, i := range res.Top {
		rep.Pruned = append(rep.Pruned, VBKSKernel{Kernel: rep.Kernels[i], Prob: res.Pruned.Probs[j], ELBO: res.Candidates[i].ELBO()})
	}
	slices.SortStableFunc(rep.Pruned, func(a, b VBKSKernel) int { return cmp.Compare(b.Prob, a.Prob) })
	rep.Best = rep.Kernels[res.Best()]
	if rep.BMA, err = scoreVBKS(res, te, std); err != nil {
		return nil, res, err
	}
	if rep.Single, err = scoreVBKS(res.Candidates[res.Best()].Model, te, std); err != nil { // VBKS-s
		return nil, res, err
	}
	return rep, res, nil
}

// markTies fills the Ties of every kernel that did not fail.
func markTies(r []VBKSKernel) {
	for a := range r {
		for b := range r {
			if a != b && r[a].Error == "" && r[b].Error == "" && math.Abs(r[a].ELBO-r[b].ELBO) <= VBKSTieNats {
				r[a].Ties = append(r[a].Ties, r[b].Kernel)
			}
		}
	}
}

// scoreVBKS returns the test RMSE and mixture log density of m's predictions (the BMA's, or one kernel's).
func scoreVBKS(m gp.Predictor, te *datasets.Dataset, std *datasets.Standardizer) (VBKSMetrics, error) {
	p, err := m.Predict(te.X, gp.PredictOptions{})
	if err != nil {
		return VBKSMetrics{}, err
	}
	mean := p.YMean.RawMatrix().Data
	y := te.Y.RawMatrix().Data
	ld, err := vbks.LogDensity(p, y)
	if err != nil {
		return VBKSMetrics{}, err
	}
	var se, ll float64
	for i, m := range mean {
		d := std.InverseMean(0, m) - std.InverseMean(0, y[i])
		se += d * d
		ll += ld[i] + std.LogDensityOffset(0)
	}
	n := float64(len(mean))
	return VBKSMetrics{RMSE: math.Sqrt(se / n), LL: ll / n}, nil
}

// vbksData returns the standardised training and test sets, the standardiser (targets in original units) and,
// for a synthetic set, its true kernel's canonical expression.
func vbksData(c VBKSConfig) (tr, te *datasets.Dataset, std *datasets.Standardizer, truth string, err error) {
	if rest, ok := strings.CutPrefix(c.Data, SyntheticPrefix); ok {
		e, err := grammar.Parse(rest)
		if err != nil {
			return nil, nil, nil, "", err
		}
		truth = e.String()
		if !slices.Contains(vbks.Truths(), truth) {
			return nil, nil, nil, "", fmt.Errorf("zoo: the synthetic data sets are %s%s and %s%s, not %q", SyntheticPrefix, vbks.Truths()[0], SyntheticPrefix, vbks.Truths()[1], c.Data)
		}
		x, y, xt, yt, err := vbks.Synthetic{Truth: truth, NTest: VBKSSyntheticTest, Seed: c.Seed}.Generate()
		if err != nil {
			return nil, nil, nil, "", err
		}
		// The data are a zero-mean GP's posterior mean on a domain centred at 0, and LIN (a product with LIN
		// vanishes at x = 0) has its meaning at the origin: scale inputs and targets, do not centre them.
		train := &datasets.Dataset{Name: c.Data, X: x, Y: y}
		if std, err = datasets.FitStandardizer(train, true); err != nil {
			return nil, nil, nil, "", err
		}
		clear(std.XMean)
		clear(std.YMean)
		if tr, err = std.Apply(train); err != nil {
			return nil, nil, nil, "", err
		}
		if te, err = std.Apply(&datasets.Dataset{Name: c.Data, X: xt, Y: yt}); err != nil {
			return nil, nil, nil, "", err
		}
		return tr, te, std, truth, nil
	}
	if _, ok := sources[c.Data]; !ok {
		return nil, nil, nil, "", fmt.Errorf("zoo: unknown data set %q (a regression set of `gpzoo data list`, or %s%s)", c.Data, SyntheticPrefix, vbks.Truths()[0])
	}
	s, err := loadSplit(c.Data, c.DataDir, c.Split)
	if err != nil {
		return nil, nil, nil, "", err
	}
	if s.train.NumClasses > 0 {
		return nil, nil, nil, "", fmt.Errorf("zoo: VBKS needs a regression data set; %s is a classification set", c.Data)
	}
	tr, te, std, err = s.standardised(false)
	return tr, te, std, "", err
}

// WriteCSV writes the posterior against the data fraction: fraction, rows, then one q*(k) column per kernel.
func (r *VBKSReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"fraction", "rows"}, r.Kernels...)); err != nil {
		return err
	}
	for _, f := range r.Fractions {
		row := []string{strconv.FormatFloat(f.Fraction, 'g', -1, 64), strconv.Itoa(f.Rows)}
		for _, p := range f.Probs {
			row = append(row, strconv.FormatFloat(p, 'g', 6, 64))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Plot draws the posterior against the data fraction (the paper's Fig. 2) to path (.png or .svg): every
// kernel when there are at most 12, otherwise those ranked in the top two after some fraction (Fig. 2c–d).
func (r *VBKSReport) Plot(path string) error {
	show := map[int]bool{}
	for _, f := range r.Fractions {
		for j, i := range vbks.Rank(f.Probs) {
			if len(r.Kernels) <= 12 || j < 2 {
				show[i] = true
			}
		}
	}
	var series []plots.Series
	for i, k := range r.Kernels {
		if !show[i] {
			continue
		}
		s := plots.Series{Name: k}
		for _, f := range r.Fractions {
			s.X = append(s.X, f.Fraction)
			s.Y = append(s.Y, f.Probs[i])
		}
		series = append(series, s)
	}
	return plots.Curves(path, "VBKS kernel posterior: "+r.Data, "fraction of the data", "q*(k)", series)
}

// MarshalJSON writes a failed kernel's NaN ELBO as null.
func (k VBKSKernel) MarshalJSON() ([]byte, error) {
	type plain VBKSKernel
	return json.Marshal(struct {
		plain
		ELBO *float64 `json:"elbo"`
	}{plain(k), finiteOrNil(k.ELBO)})
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// floats is a []float64 whose non-finite entries (failed candidates) are written to JSON as null.
type floats []float64

// MarshalJSON writes NaN and ±Inf as null.
func (f floats) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(f))
	for i, v := range f {
		out[i] = finiteOrNil(v)
	}
	return json.Marshal(out)
}
