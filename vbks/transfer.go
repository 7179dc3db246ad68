package vbks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Transfer lets every live candidate start again from the fitted hyperparameters of the c.Donors candidates
// with the largest ℒ_i* (those better than itself), and keeps a start if its polished ℒ_i* is larger.
//
// Local ELBOs of periodic kernels have many local optima (on the PER×LIN×RQ set, 20 random starts of
// PER×LIN×RQ with L-BFGS ended between 969 and 1861 nats, the period at 1, 2 or 3 times the true one), and each
// candidate searches its own landscape from scratch, while the base kernels they share see the same data: a
// period or length-scale one kernel has found is a good start for another. A start copies, leaf by leaf, the
// donor's values into the receiver's leaves of the same base (in canonical order; SE and RQ also match each
// other, since SE is RQ's α → ∞ limit), and the donor's inducing inputs and noise variance; the receiver's
// other values stay, except that an RQ leaf taking an SE leaf's values gets α = seLimitAlpha (SE is RQ's
// α → ∞ limit). A receiver that contains the donor as a special case (PER×LIN×RQ and PER×LIN×SE) so starts at
// the donor's optimum, and L-BFGS only climbs from there: its ℒ_i* cannot end below the smaller kernel's by a
// failure of the optimiser alone. On that set PER×LIN×RQ's own start ended at 1665 nats, and 20 random starts
// had not passed 1861, where PER×LIN×SE reached 1974.
//
// The donors' values are read before any start, and each receiver runs its starts in turn on c.Workers
// goroutines, so the result does not depend on the number of workers. A candidate whose start is kept has its
// last ELBOs entry replaced and its Adam state reset.
func Transfer(cands []*Candidate, x, y *mat.Dense, seed uint64, c LocalConfig) (FitStats, error) {
	c = c.withDefaults()
	st := FitStats{Workers: c.Workers}
	if c.Donors < 0 || c.PolishIters < 0 {
		return st, nil
	}
	if nx, _ := x.Dims(); nx == 0 {
		return st, fmt.Errorf("vbks: Transfer: no rows")
	}
	live, elbos := liveELBOs(cands)
	rank := Rank(elbos)
	var donors []int
	for _, r := range rank[:min(c.Donors, len(rank))] {
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
		cands[i].receive(i, donors, states, x, y, rand.New(rand.NewPCG(seed, uint64(i))), c)
		secs[i] = time.Since(t0).Seconds()
		cands[i].Seconds += secs[i]
	})
	st.Seconds, st.CPUSeconds = time.Since(start).Seconds(), floats.Sum(secs)
	return st, nil
}

// receive tries the starts of the donors better than cd (candidate self), keeping the best polished one. It
// reads the donors only through states: a donor may itself be taking a start, and changing, meanwhile.
func (cd *Candidate) receive(self int, donors []int, states map[int]fitState, x, y *mat.Dense, rng *rand.Rand, c LocalConfig) {
	ps := cd.Model.Params()
	best, bestState := cd.ELBO(), snapshot(ps)
	kept := false
	for _, d := range donors {
		if d == self || !(states[d].elbo > cd.ELBO()) {
			continue
		}
		if !cd.adopt(states[d]) {
			continue
		}
		v := cd.refit(x, y, rng, c)
		if v > best {
			best, bestState, kept = v, snapshot(ps), true
		}
		restore(ps, bestState)
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
	l := cd.Model.Layer.(*layers.SVGP)
	st := fitState{z: append([]float64(nil), l.Z.Raw()...), noise: append([]float64(nil), cd.Model.Likelihood.Params()[0].Raw()...), elbo: cd.ELBO()}
	for _, lp := range leafParams(l.Kernel.Params()) {
		ls := leafState{base: lp.base, values: map[string][]float64{}}
		for f, p := range lp.params {
			ls.values[f] = p.Value()
		}
		st.leaves = append(st.leaves, ls)
	}
	return st
}

// adopt copies st into cd's leaves (same base first, then SE↔RQ), inducing inputs and noise variance; it
// reports whether any leaf matched.
func (cd *Candidate) adopt(st fitState) bool {
	l := cd.Model.Layer.(*layers.SVGP)
	mine := leafParams(l.Kernel.Params())
	used := make([]bool, len(st.leaves))
	matched := false
	for _, compatible := range []func(a, b grammar.Base) bool{
		func(a, b grammar.Base) bool { return a == b },
		func(a, b grammar.Base) bool { return a != b && smooth(a) && smooth(b) },
	} {
		for i := range mine {
			if mine[i].matched {
				continue
			}
			for j, d := range st.leaves {
				if used[j] || !compatible(mine[i].base, d.base) {
					continue
				}
				used[j], mine[i].matched, matched = true, true, true
				for f, p := range mine[i].params {
					if v, ok := d.values[f]; ok && p.Trainable() && len(v) == p.Size() {
						_ = p.Set(v) // a value another Param of the same kind held is valid here
					}
				}
				if p, ok := mine[i].params["alpha"]; ok && d.base == grammar.SE && p.Trainable() {
					_ = p.Set([]float64{seLimitAlpha})
				}
				break
			}
		}
	}
	if matched {
		copy(l.Z.Raw(), st.z)
		copy(cd.Model.Likelihood.Params()[0].Raw(), st.noise)
	}
	return matched
}

// seLimitAlpha is the α an RQ leaf takes from an SE leaf: (1 + r²/2αℓ²)^(−α) = exp(−r²/2ℓ²)(1 + O(r⁴/αℓ⁴)), so
// the start reproduces the donor's kernel to about 10⁻⁶ for r ≤ 10ℓ (the kernel evaluates it through log1p).
const seLimitAlpha = 1e8

// smooth reports whether b is SE or RQ (SE is RQ's α → ∞ limit).
func smooth(b grammar.Base) bool { return b == grammar.SE || b == grammar.RQ }

type leafParam struct {
	base    grammar.Base
	params  map[string]*graph.Param
	matched bool
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
