package vbks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Run defaults.
const (
	DefaultFractions = 10
	DefaultTop       = 10
)

// Config configures Run. Zero values mean the defaults.
type Config struct {
	// Kernels are the candidates (required; distinct).
	Kernels []*grammar.Expr
	// Local configures the candidates' sparse GPs and their training.
	Local LocalConfig
	// Fractions is the number of growing data fractions F (default DefaultFractions): the rows are shuffled
	// once (seeded), and fraction f = 1..F trains on the first ⌈N·f/F⌉ of them.
	Fractions int
	// Posterior configures the fits of q(g).
	Posterior PosteriorConfig
	// Top is the size of the pruned set BMA averages over (default DefaultTop; at most the live candidates).
	Top int
	// Seed seeds every random choice: the shuffle, the inducing inputs, the minibatches and q(g)'s draws.
	Seed uint64
	// Progress, if set, is called after each fraction with its record.
	Progress func(Step)
}

// Step records one data fraction.
type Step struct {
	Fraction float64
	Rows     int
	// ELBOs[i] is candidate i's ℒ_i* on the rows seen so far (NaN once it has failed).
	ELBOs []float64
	// Probs[i] is q*(k_i) (eq. 13) of the posterior fitted after this fraction (0 for failed candidates).
	Probs            []float64
	Fit              FitStats
	PosteriorSeconds float64
}

// Result is a VBKS run.
type Result struct {
	Candidates []*Candidate
	Steps      []Step
	// Posterior is q(g) after the last fraction over the live candidates Live (its coordinate j is candidate
	// Live[j]).
	Posterior *Posterior
	Live      []int
	// Top are the candidates kept after pruning, ranked by Posterior, and Pruned is q(g) refitted over them
	// (its coordinate j is candidate Top[j]); BMA uses Pruned.Probs and VBKS-s the candidate Best returns.
	Top    []int
	Pruned *Posterior
	// Order is the shuffle of the training rows; fraction f used Order[:Steps[f].Rows].
	Order []int
}

// ErrAllFailed is returned when no candidate survives a fraction.
var ErrAllFailed = errors.New("vbks: every candidate failed")

// Run fits the candidates on growing fractions of (x [N,D], y [N,1]), the kernel posterior after each
// fraction, and the pruned posterior at the end. Invalid data give typed errors (a *datasets.NonFiniteError
// names the row and column); candidates that fail are recorded in their Err and left out of the posteriors.
func Run(x, y *mat.Dense, c Config) (*Result, error) {
	if len(c.Kernels) == 0 {
		return nil, errors.New("vbks: no candidate kernels")
	}
	if x == nil || y == nil {
		return nil, errors.New("vbks: nil data")
	}
	if err := (&datasets.Dataset{X: x, Y: y}).Validate(); err != nil {
		return nil, fmt.Errorf("vbks: %w", err)
	}
	n, _ := x.Dims()
	if _, p := y.Dims(); p != 1 {
		return nil, &ops.ShapeError{Op: "vbks.Run", Want: "one target column", Got: fmt.Sprint(p)}
	}
	seen := map[string]int{}
	for i, e := range c.Kernels {
		if j, dup := seen[e.String()]; dup {
			return nil, fmt.Errorf("vbks: kernels %d and %d are both %s", j, i, e)
		}
		seen[e.String()] = i
	}
	frac := orDefaultInt(c.Fractions, DefaultFractions)
	top := orDefaultInt(c.Top, DefaultTop)
	local := c.Local.withDefaults()

	order := rand.New(rand.NewPCG(c.Seed, 0x5ee0)).Perm(n)
	rows := func(f int) int { return int(math.Ceil(float64(n) * float64(f) / float64(frac))) }
	first := rows(1)
	if first < 1 {
		return nil, fmt.Errorf("vbks: %d rows cannot make %d fractions", n, frac)
	}
	x1, y1 := gather(x, y, order[:first])
	z, err := SharedInducing(x1, local.NumInducing, rand.New(rand.NewPCG(c.Seed, 0x2a)))
	if err != nil {
		return nil, fmt.Errorf("vbks: inducing inputs: %w", err)
	}
	cands, st1, err := firstFit(c, z, x1, y1, local)
	if err != nil {
		return nil, err
	}
	res := &Result{Candidates: cands, Order: order}
	qrng := rand.New(rand.NewPCG(c.Seed, 0x9))
	var warm *Posterior
	var warmLive []int
	for f := 1; f <= frac; f++ {
		nf := rows(f)
		xf, yf := gather(x, y, order[:nf])
		st := st1
		if f > 1 {
			if st, err = FitFraction(cands, xf, yf, local.Iters, c.Seed+uint64(f)<<32, local); err != nil {
				return res, err
			}
		}
		tr, err := Restart(cands, xf, yf, c.Seed+uint64(f)<<32+0x7f, local)
		if err != nil {
			return res, err
		}
		st.Seconds, st.CPUSeconds = st.Seconds+tr.Seconds, st.CPUSeconds+tr.CPUSeconds
		step := Step{Fraction: float64(f) / float64(frac), Rows: nf, Fit: st, ELBOs: make([]float64, len(cands)), Probs: make([]float64, len(cands))}
		live, elbos := liveELBOs(cands)
		for i, cd := range cands {
			step.ELBOs[i] = cd.ELBO()
		}
		if len(live) == 0 {
			res.Steps = append(res.Steps, step)
			return res, ErrAllFailed
		}
		if !slices.Equal(live, warmLive) {
			warm = nil
		}
		t0 := time.Now()
		q, err := fitBest(elbos, warm, qrng, c.Posterior)
		if err != nil {
			return res, err
		}
		step.PosteriorSeconds = time.Since(t0).Seconds()
		for j, i := range live {
			step.Probs[i] = q.Probs[j]
		}
		res.Steps = append(res.Steps, step)
		res.Posterior, res.Live = q, live
		warm, warmLive = q, live
		if c.Progress != nil {
			c.Progress(step)
		}
	}
	// Prune to the top-ranked kernels and refit q(g) over them (Sec. 5), warm-started from q(g)'s marginal.
	// Rank by ℒ_i*: the exact optimum of eq. 8 orders q*(k_i) as ℒ_i* (the objective is symmetric in the
	// coordinates and increasing in each ℒ_i), while the Monte Carlo q*(k) of the kernels far below the best
	// are equal up to sampling noise and would prune at random.
	_, liveL := liveELBOs(cands)
	rank := Rank(liveL)
	keep := rank[:min(top, len(rank))]
	sub := res.Posterior.Subset(keep)
	elbos := make([]float64, len(keep))
	for j, r := range keep {
		res.Top = append(res.Top, res.Live[r])
		elbos[j] = cands[res.Live[r]].ELBO()
	}
	if res.Pruned, err = fitBest(elbos, sub, qrng, c.Posterior); err != nil {
		return res, err
	}
	return res, nil
}

// firstFit trains Restarts+1 sets of candidates on the first fraction — the first from the configured initial
// hyperparameters, the others from those multiplied by log-normal factors (periods and length-scales are where
// local optima bite) — and keeps, for every kernel, the start with the best ℒ_i*. Its FitStats add up all starts.
func firstFit(c Config, z, x, y *mat.Dense, local LocalConfig) ([]*Candidate, FitStats, error) {
	var best []*Candidate
	var st FitStats
	rng := rand.New(rand.NewPCG(c.Seed, 0x5747))
	n, _ := x.Dims()
	for r := 0; r <= max(local.Restarts, 0); r++ {
		cands, err := NewCandidates(c.Kernels, z, n, local)
		if err != nil {
			return nil, st, err
		}
		if r > 0 {
			for _, cd := range cands {
				perturb(cd, rng)
			}
		}
		s, err := FitFraction(cands, x, y, local.FirstIters, c.Seed+uint64(r)<<16+1<<32, local)
		if err != nil {
			return nil, st, err
		}
		st.Workers, st.Seconds, st.CPUSeconds = s.Workers, st.Seconds+s.Seconds, st.CPUSeconds+s.CPUSeconds
		if best == nil {
			best = cands
			continue
		}
		for i, cd := range cands {
			if cd.Err == nil && (best[i].Err != nil || cd.ELBO() > best[i].ELBO()) {
				cd.Seconds += best[i].Seconds
				best[i] = cd
			} else {
				best[i].Seconds += cd.Seconds
			}
		}
	}
	return best, st, nil
}

// restartSpread is the standard deviation of the log-normal factors of a restart's initial hyperparameters.
const restartSpread = 0.7

// perturb multiplies every trainable kernel hyperparameter of cd by exp(restartSpread·ε), ε ~ N(0, 1).
func perturb(cd *Candidate, rng *rand.Rand) {
	for _, p := range cd.layer().Kernel.Params() {
		if !p.Trainable() {
			continue
		}
		v := p.Value()
		for j := range v {
			v[j] *= math.Exp(restartSpread * rng.NormFloat64())
		}
		_ = p.Set(v) // positive values scaled by positive factors stay valid
	}
}

// fitBest fits q(g) from several starts and returns the fit with the largest global ELBO: the prior, an
// informed start (m_i = max(ℒ_i* − max_j ℒ_j*, −10), C = I) and, if given, the warm start. The objective is
// not concave in (m_g, C_g): from one start alone q(g) can settle on a kernel whose ℒ_i* is not the largest
// (for example the previous fraction's winner after another kernel has overtaken it).
func fitBest(elbos []float64, warm *Posterior, rng *rand.Rand, c PosteriorConfig) (*Posterior, error) {
	k := len(elbos)
	hi := slices.Max(elbos)
	informed := &Posterior{M: make([]float64, k), C: make([]float64, k*k)}
	for i, l := range elbos {
		informed.M[i] = math.Max(l-hi, -10)
		informed.C[i*k+i] = 1
	}
	var best *Posterior
	for _, start := range []*Posterior{nil, informed, warm} {
		if start == nil && best != nil {
			continue
		}
		q, err := FitPosterior(elbos, start, rng, c)
		if err != nil {
			return nil, err
		}
		if best == nil || q.ELBO > best.ELBO {
			best = q
		}
	}
	return best, nil
}

func liveELBOs(cands []*Candidate) (live []int, elbos []float64) {
	for i, cd := range cands {
		if cd.Err == nil {
			live = append(live, i)
			elbos = append(elbos, cd.ELBO())
		}
	}
	return live, elbos
}

// gather copies the rows idx of x and y.
func gather(x, y *mat.Dense, idx []int) (*mat.Dense, *mat.Dense) {
	_, d := x.Dims()
	_, p := y.Dims()
	xs, ys := mat.NewDense(len(idx), d, nil), mat.NewDense(len(idx), p, nil)
	for r, i := range idx {
		xs.SetRow(r, x.RawRowView(i))
		ys.SetRow(r, y.RawRowView(i))
	}
	return xs, ys
}

// Rank returns the indices of p sorted by value, largest first (ties: lower index first).
func Rank(p []float64) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	return idx
}

// Best returns the candidate with the largest pruned posterior probability (VBKS-s in the paper).
func (r *Result) Best() int {
	j := r.Pruned.Ranking()[0]
	return r.Top[j]
}
