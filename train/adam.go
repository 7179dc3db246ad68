package train

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Adam defaults (Kingma & Ba 2015, Algorithm 1).
const (
	DefaultAdamLR      = 0.01
	DefaultAdamBeta1   = 0.9
	DefaultAdamBeta2   = 0.999
	DefaultAdamEpsilon = 1e-8
)

// Schedule maps a step (0-based) and a base learning rate to the rate used at that step.
type Schedule func(step int, base float64) float64

// Constant is the schedule that always returns the base rate.
func Constant(_ int, base float64) float64 { return base }

// Adam is the Adam optimiser with per-Param state and optional parameter groups with their own rates.
// Zero-valued fields take the defaults above.
type Adam struct {
	LR, Beta1, Beta2, Epsilon float64
	// Groups overrides the base rate for chosen Params (a parameter group); the Schedule applies to it too.
	Groups map[*graph.Param]float64
	// Schedule, if set, scales rates per step.
	Schedule Schedule

	state map[*graph.Param]*adamState
}

type adamState struct {
	m, v []float64
	t    int
}

func orDefault(x, d float64) float64 {
	if x == 0 {
		return d
	}
	return x
}

// Step applies one Adam update to each Param from its gradient (same order as params).
func (a *Adam) Step(step int, params []*graph.Param, grads [][]float64) error {
	if len(params) != len(grads) {
		return fmt.Errorf("train: Adam: %d params but %d gradients", len(params), len(grads))
	}
	if a.state == nil {
		a.state = map[*graph.Param]*adamState{}
	}
	b1, b2 := orDefault(a.Beta1, DefaultAdamBeta1), orDefault(a.Beta2, DefaultAdamBeta2)
	eps := orDefault(a.Epsilon, DefaultAdamEpsilon)
	for i, p := range params {
		raw, g := p.Raw(), grads[i]
		if len(raw) != len(g) {
			return fmt.Errorf("train: Adam: param %q has %d entries, gradient %d", p.Name(), len(raw), len(g))
		}
		s := a.state[p]
		if s == nil {
			s = &adamState{m: make([]float64, len(raw)), v: make([]float64, len(raw))}
			a.state[p] = s
		}
		lr := orDefault(a.LR, DefaultAdamLR)
		if r, ok := a.Groups[p]; ok {
			lr = r
		}
		if a.Schedule != nil {
			lr = a.Schedule(step, lr)
		}
		s.t++
		c1 := 1 - math.Pow(b1, float64(s.t))
		c2 := 1 - math.Pow(b2, float64(s.t))
		// Entry by entry, large Params split over the cores (q(u)'s M×M factors): the same bits either way.
		_ = ops.ForRows(len(g), adamMinEntries, func(lo, hi int) error {
			m, v := s.m[lo:hi], s.v[lo:hi]
			for j, gj := range g[lo:hi] {
				m[j] = b1*m[j] + (1-b1)*gj
				v[j] = b2*v[j] + (1-b2)*gj*gj
				raw[lo+j] -= lr * (m[j] / c1) / (math.Sqrt(v[j]/c2) + eps)
			}
			return nil
		})
	}
	return nil
}

// adamMinEntries is the least number of a Param's entries each core's share of an Adam update gets.
const adamMinEntries = 4096

var _ Stateful = (*Adam)(nil)

// adamSaved is one Param's Adam state in a checkpoint: its position in the params slice and, as a check, its
// name (names need not be unique).
type adamSaved struct {
	Index int
	Name  string
	M, V  []float64
	T     int
}

// MarshalState encodes the first and second moments and the step count of every Param of params that has
// Adam state (Stateful). State held for Params outside params is not saved.
func (a *Adam) MarshalState(params []*graph.Param) ([]byte, error) {
	var saved []adamSaved
	for i, p := range params {
		if s := a.state[p]; s != nil {
			saved = append(saved, adamSaved{Index: i, Name: p.Name(), M: s.m, V: s.v, T: s.t})
		}
	}
	return EncodeState("Adam", saved)
}

// UnmarshalState replaces the Adam state by the one MarshalState encoded for the Params at the same positions
// of params (Stateful); Params without saved state start fresh. It fails, leaving the state unchanged, on
// undecodable data, a saved position outside params or given twice, a name that differs from the Param's at
// that position, or moments whose length differs from the Param's size.
func (a *Adam) UnmarshalState(params []*graph.Param, data []byte) error {
	var saved []adamSaved
	if err := DecodeState("Adam", data, &saved); err != nil {
		return err
	}
	state := make(map[*graph.Param]*adamState, len(saved))
	for _, s := range saved {
		if s.Index < 0 || s.Index >= len(params) {
			return fmt.Errorf("train: Adam: saved state for Param %d (%q), but this run optimises %d Params", s.Index, s.Name, len(params))
		}
		p := params[s.Index]
		if p.Name() != s.Name {
			return fmt.Errorf("train: Adam: saved state for Param %d is %q's, this run's is %q", s.Index, s.Name, p.Name())
		}
		if state[p] != nil {
			return fmt.Errorf("train: Adam: state for Param %d (%q) saved twice", s.Index, s.Name)
		}
		if len(s.M) != p.Size() || len(s.V) != p.Size() || s.T < 0 {
			return fmt.Errorf("train: Adam: saved state for %q has %d and %d moments (step %d), want %d",
				s.Name, len(s.M), len(s.V), s.T, p.Size())
		}
		state[p] = &adamState{m: append([]float64(nil), s.M...), v: append([]float64(nil), s.V...), t: s.T}
	}
	a.state = state
	return nil
}
