package train

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
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
		for j, gj := range g {
			s.m[j] = b1*s.m[j] + (1-b1)*gj
			s.v[j] = b2*s.v[j] + (1-b2)*gj*gj
			raw[j] -= lr * (s.m[j] / c1) / (math.Sqrt(s.v[j]/c2) + eps)
		}
	}
	return nil
}
