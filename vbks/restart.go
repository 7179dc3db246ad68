package vbks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Restart lets every live candidate start again on the current rows (x, y) and keeps a start if its polished
// ℒ_i* is larger. The starts are, in turn:
//
//   - c.FreshStarts fresh starts: the candidate's configured initial hyperparameters and noise variance (the
//     first; the others scaled by log-normal factors, as firstFit's restarts), with inducing inputs at the k-means
//     centres of x, shared by all candidates (a candidate with another number of them keeps its own);
//   - the fitted hyperparameters of the c.Donors candidates with the largest ℒ_i* that are better than itself.
//
// Warm starts alone keep a fit in the basin it found on the first, small fraction. Local ELBOs of periodic
// kernels have many local optima, and a period that 100 rows leave ambiguous is pinned down by 1000. On the
// PER×LIN×RQ set (seed 1, |U| = 16) the warm-started fits of the whole schedule had ended at ℒ* = 1425.5 for both
// PER×LIN×RQ and PER×LIN×SE; with one fresh start per fraction they end at 1552.1. (The landscape also depends
// on Z: 300 L-BFGS iterations from the configured hyperparameters on all rows reach 1758 for PER×LIN×RQ with
// one k-means draw of Z and 882 or 1453 with two others.)
//
// A donor start shares what one kernel has found with the others: the base kernels they share see the same
// data. It copies, leaf by leaf, the donor's values into the receiver's leaves of the same base (in canonical
// order; SE and RQ also match each other), and the donor's inducing inputs and noise variance; the receiver's
// other values stay, except that an RQ leaf taking an SE leaf's values gets α = seLimitAlpha (SE is RQ's
// α → ∞ limit). A receiver that contains the donor as a special case (PER×LIN×RQ and PER×LIN×SE) so starts at
// the donor's optimum, and L-BFGS only climbs from there: its ℒ_i* cannot end below the smaller kernel's by a
// failure of the optimiser alone.
//
// The donors' values are read before any start, and each candidate runs its starts in turn on c.Workers
// goroutines, candidate i's random factors from rand.NewPCG(seed, i), so the result does not depend on the
// number of workers. A candidate whose start is kept has its last ELBOs entry replaced and its Adam state reset.
func Restart(cands []*Candidate, x, y *mat.Dense, seed uint64, c LocalConfig) (FitStats, error) {
	c = c.withDefaults()
	st := FitStats{Workers: c.Workers}
	fresh, donorsN := max(c.FreshStarts, 0), max(c.Donors, 0)
	if c.PolishIters < 0 || fresh+donorsN == 0 {
		return st, nil
	}
	if nx, _ := x.Dims(); nx == 0 {
		return st, fmt.Errorf("vbks: Restart: no rows")
	}
	live, elbos := liveELBOs(cands)
	if len(live) == 0 {
		return st, nil
	}
	var z []float64
	if fresh > 0 {
		m := cands[live[0]].layer().Z.Shape()[0] // Run's candidates all have the same number
		zm, err := SharedInducing(x, m, rand.New(rand.NewPCG(seed, 0x2a)))
		if err != nil {
			return st, fmt.Errorf("vbks: Restart: inducing inputs: %w", err)
		}
		z = zm.RawMatrix().Data
	}
	rank := Rank(elbos)
	var donors []int
	for _, r := range rank[:min(donorsN, len(rank))] {
		donors = append(donors, live[r])
	}
	states := make(map[int]fitState, len(donors))
	for _, d := range donors {
		states[d] = stateOf(cands[d])
	}
	start := time.Now()
	secs := make([]float64, len(cands))
	parallel(c.Workers, live, func(i int) {
		t0 := time.Now()
		cands[i].restart(i, fresh, z, donors, states, x, y, rand.New(rand.NewPCG(seed, uint64(i))), c)
		secs[i] = time.Since(t0).Seconds()
		cands[i].Seconds += secs[i]
	})
	st.Seconds, st.CPUSeconds = time.Since(start).Seconds(), floats.Sum(secs)
	return st, nil
}

// restart tries cd's fresh starts (inducing inputs z) and the starts of the donors better than cd (candidate
// self), keeping the best polished one. It reads the donors only through states: a donor may itself be taking
// a start, and changing, meanwhile.
func (cd *Candidate) restart(self, fresh int, z []float64, donors []int, states map[int]fitState, x, y *mat.Dense, rng *rand.Rand, c LocalConfig) {
	ps := cd.Model.Params()
	was := cd.ELBO()
	best, bestState := was, graph.SnapshotRaw(ps)
	kept := false
	try := func(st fitState, scale bool) {
		if !cd.adopt(st) {
			return
		}
		if scale {
			perturb(cd, rng)
		}
		if v := cd.refit(x, y, rng, c); v > best {
			best, bestState, kept = v, graph.SnapshotRaw(ps), true
		}
		graph.RestoreRaw(ps, bestState)
	}
	for r := range fresh {
		st := cd.initial // without inducing inputs: a candidate with another number of them keeps its own
		if len(z) == cd.layer().Z.Size() {
			st.z = z
		}
		try(st, r > 0)
	}
	for _, d := range donors {
		if d != self && states[d].elbo > was {
			try(states[d], false)
		}
	}
	if kept {
		cd.ELBOs[len(cd.ELBOs)-1] = best
		cd.opt = &train.Adam{LR: c.LR}
	}
}

// refit polishes and settles cd and returns its ℒ_i* (−Inf if that fails).
func (cd *Candidate) refit(x, y *mat.Dense, rng *rand.Rand, c LocalConfig) float64 {
	if err := cd.polish(x, y, c); err != nil {
		return math.Inf(-1)
	}
	if err := cd.settle(x, y, rng, c); err != nil {
		return math.Inf(-1)
	}
	v, err := WholeELBO(cd.Model, x, y, c.Graph)
	if err != nil {
		return math.Inf(-1)
	}
	return v
}

// fitState is a candidate's fitted values that another candidate can start from, and its ℒ_i*.
type fitState struct {
	leaves   []leafState
	z, noise []float64 // raw values
	elbo     float64
}

// leafState holds one kernel leaf's hyperparameter values by field ("lengthscales", "period", …).
type leafState struct {
	base   grammar.Base
	values map[string][]float64
}

func stateOf(cd *Candidate) fitState {
	st := fitState{z: slices.Clone(cd.layer().Z.Raw()), noise: slices.Clone(cd.noise().Raw()), elbo: cd.ELBO()}
	for _, lp := range leafParams(cd.layer().Kernel.Params()) {
		ls := leafState{base: lp.base, values: map[string][]float64{}}
		for f, p := range lp.params {
			ls.values[f] = p.Value()
		}
		st.leaves = append(st.leaves, ls)
	}
	return st
}

// adopt copies st into cd's leaves matched by matchLeaves, inducing inputs and noise variance; it reports
// whether any leaf matched (and copies nothing otherwise).
func (cd *Candidate) adopt(st fitState) bool {
	mine := leafParams(cd.layer().Kernel.Params())
	from := matchLeaves(mine, st.leaves)
	if !slices.ContainsFunc(from, func(j int) bool { return j >= 0 }) {
		return false
	}
	for i, j := range from {
		if j < 0 {
			continue
		}
		d := st.leaves[j]
		for f, p := range mine[i].params {
			if v, ok := d.values[f]; ok && p.Trainable() && len(v) == p.Size() {
				_ = p.Set(v) // a value another Param of the same kind held is valid here
			}
		}
		if p, ok := mine[i].params["alpha"]; ok && d.base == grammar.SE && p.Trainable() {
			_ = p.Set([]float64{seLimitAlpha})
		}
	}
	copy(cd.layer().Z.Raw(), st.z)
	copy(cd.noise().Raw(), st.noise)
	return true
}

// matchLeaves pairs the receiver's leaves with the donor's, each donor leaf used once: first by equal base, in
// leaf order, then the rest SE with RQ. from[i] is the donor leaf of receiver leaf i, or −1.
func matchLeaves(mine []leafParam, donor []leafState) (from []int) {
	from = make([]int, len(mine))
	for i := range from {
		from[i] = -1
	}
	used := make([]bool, len(donor))
	for _, compatible := range []func(a, b grammar.Base) bool{
		func(a, b grammar.Base) bool { return a == b },
		func(a, b grammar.Base) bool { return smooth(a) && smooth(b) },
	} {
		for i := range mine {
			if from[i] >= 0 {
				continue
			}
			for j, d := range donor {
				if !used[j] && compatible(mine[i].base, d.base) {
					from[i], used[j] = j, true
					break
				}
			}
		}
	}
	return from
}

// seLimitAlpha is the α an RQ leaf takes from an SE leaf: (1 + r²/2αℓ²)^(−α) = exp(−r²/2ℓ²)(1 + O(r⁴/αℓ⁴)), so
// the start reproduces the donor's kernel to about 10⁻⁶ for r ≤ 10ℓ (the kernel evaluates it through log1p).
const seLimitAlpha = 1e8

// smooth reports whether b is SE or RQ (SE is RQ's α → ∞ limit).
func smooth(b grammar.Base) bool { return b == grammar.SE || b == grammar.RQ }

type leafParam struct {
	base   grammar.Base
	params map[string]*graph.Param
}

// leafParams groups a grammar-built kernel's Params by leaf, in leaf order.
func leafParams(ps []*graph.Param) []leafParam {
	var out []leafParam
	for _, p := range ps {
		lp, ok := grammar.ParseParamName(p.Name())
		if !ok {
			continue
		}
		for len(out) <= lp.Leaf {
			out = append(out, leafParam{params: map[string]*graph.Param{}})
		}
		out[lp.Leaf].base = lp.Base
		out[lp.Leaf].params[lp.Field] = p
	}
	return out
}
