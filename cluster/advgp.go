package cluster

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
)

// Defaults of ADVGPRule.
const (
	DefaultQStep     = 0.01
	DefaultHyperStep = 0.01
)

// ADVGPRule configures ADVGP's server update (Peng, Zhe & Qi 2017, Algorithm 1). Zero values mean the defaults.
type ADVGPRule struct {
	// QRule steps q(w) = N(μ, UᵀU) before its proximal map (eqs. 18–20): "adam" (default: Adam's bias-corrected
	// first moment as the direction and its per-coordinate steps QStep/(√v̂+ε) as the γ of the proximal map, a
	// diagonal-metric proximal gradient step like the paper's ADADELTA) or "plain" (γ_t = QStep).
	QRule string
	// QStep is the base step of q (default DefaultQStep).
	QStep float64
	// HyperRule steps the kernel hyperparameters, Z and the noise: "adam" (default) or "plain" (gradient descent
	// with HyperStep); h does not depend on them, so theirs are plain delayed gradient steps.
	HyperRule string
	// HyperStep is their rate (default DefaultHyperStep).
	HyperStep float64
}

// ADVGPUpdate returns the Optimizer and Hooks of ADVGP's server update for m, for ServerConfig with
// DataGradOnly (h, the KL term of eq. 15, enters through the proximal map, not through a gradient) and
// ReuseGradients (Algorithm 1 aggregates every worker's newest gradient): a hook that
// claims μ and the factor and takes the proximal gradient step of q(w) (advgp.Model.ProxStep), and a step of the
// other Params; both on per-point gradients (the data term's gradient divided by n), as Algorithm 1 does.
func ADVGPUpdate(m *advgp.Model, r ADVGPRule) (train.Optimizer, []train.Hook, error) {
	if m == nil {
		return nil, nil, errors.New("cluster: ADVGPUpdate: nil model")
	}
	for _, rule := range []string{r.QRule, r.HyperRule} {
		if rule != "" && rule != "adam" && rule != "plain" {
			return nil, nil, fmt.Errorf("cluster: unknown step rule %q (want adam or plain)", rule)
		}
	}
	n := float64(m.SVGP.NumData)
	var opt train.Optimizer = &train.Adam{LR: orDefault(r.HyperStep, DefaultHyperStep)}
	if r.HyperRule == "plain" {
		opt = plainStep{lr: orDefault(r.HyperStep, DefaultHyperStep)}
	}
	return perPoint{opt: opt, n: n}, []train.Hook{&proxHook{m: m, n: n, plain: r.QRule == "plain", step: orDefault(r.QStep, DefaultQStep)}}, nil
}

func orDefault(x, d float64) float64 {
	if x == 0 {
		return d
	}
	return x
}

// perPoint hands opt the gradients divided by n (the objective per training point).
type perPoint struct {
	opt train.Optimizer
	n   float64
}

func (p perPoint) Step(step int, params []*graph.Param, grads [][]float64) error {
	scaled := make([][]float64, len(grads))
	for i, g := range grads {
		if g == nil {
			continue
		}
		scaled[i] = make([]float64, len(g))
		for j, v := range g {
			scaled[i][j] = v / p.n
		}
	}
	return p.opt.Step(step, params, scaled)
}

func (p perPoint) MarshalState(params []*graph.Param) ([]byte, error) {
	if st, ok := p.opt.(train.Stateful); ok {
		return st.MarshalState(params)
	}
	return nil, nil
}

func (p perPoint) UnmarshalState(params []*graph.Param, data []byte) error {
	if st, ok := p.opt.(train.Stateful); ok {
		return st.UnmarshalState(params, data)
	}
	return nil
}

// plainStep is gradient descent with a fixed rate.
type plainStep struct{ lr float64 }

func (p plainStep) Step(_ int, params []*graph.Param, grads [][]float64) error {
	for i, q := range params {
		raw := q.Raw()
		for k := range grads[i] {
			raw[k] -= p.lr * grads[i][k]
		}
	}
	return nil
}

// proxHook is ADVGP's update of q(w): the per-point data-term gradients of μ and the factor, converted to value
// space (advgp.Model.QGrads), stepped by Adam's direction or plainly, then the proximal map of h/n.
type proxHook struct {
	m       *advgp.Model
	n       float64
	plain   bool
	step    float64
	adam    qAdam
	clamped int
}

func (h *proxHook) Claims() []*graph.Param { return []*graph.Param{h.m.Mu(), h.m.Sqrt()} }

func (h *proxHook) AfterBackward(s *train.Step) error {
	gm, gs := s.Grads.Grad(h.m.Mu()), s.Grads.Grad(h.m.Sqrt())
	if gm == nil || gs == nil {
		return errors.New("cluster: ADVGP: no gradient of μ or of the factor")
	}
	scale := func(g []float64) []float64 {
		out := make([]float64, len(g))
		for i, v := range g {
			out[i] = v / h.n
		}
		return out
	}
	gMu, gL, err := h.m.QGrads(scale(gm), scale(gs))
	if err != nil {
		return err
	}
	var clamped int
	if h.plain {
		clamped, err = h.m.ProxStep(gMu, gL, []float64{h.step}, []float64{h.step}, 1/h.n)
	} else {
		dMu, dL, eMu, eL := h.adam.step(gMu, gL, h.step)
		clamped, err = h.m.ProxStep(dMu, dL, eMu, eL, 1/h.n)
	}
	h.clamped += clamped
	return err
}

// proxState is what a checkpoint keeps of the hook.
type proxState struct {
	Adam    qAdam
	Clamped int
}

func (h *proxHook) MarshalState([]*graph.Param) ([]byte, error) {
	return encode(proxState{Adam: h.adam, Clamped: h.clamped})
}

func (h *proxHook) UnmarshalState(_ []*graph.Param, data []byte) error {
	var st proxState
	if err := decode(data, &st); err != nil {
		return err
	}
	h.adam, h.clamped = st.Adam, st.Clamped
	return nil
}

// qAdam is Adam's state for q(w): moments of the value-space gradients of μ and of the lower factor.
type qAdam struct {
	T    int
	M, V []float64
}

// step returns the bias-corrected first moment as the direction and lr/(√v̂ + ε) as the per-coordinate step.
func (a *qAdam) step(gMu, gL []float64, lr float64) (dMu, dL, eMu, eL []float64) {
	n := len(gMu) + len(gL)
	if len(a.M) != n {
		a.M, a.V, a.T = make([]float64, n), make([]float64, n), 0
	}
	a.T++
	b1, b2, eps := train.DefaultAdamBeta1, train.DefaultAdamBeta2, train.DefaultAdamEpsilon
	c1, c2 := 1-math.Pow(b1, float64(a.T)), 1-math.Pow(b2, float64(a.T))
	d, e := make([]float64, n), make([]float64, n)
	for i := range n {
		g := 0.0
		if i < len(gMu) {
			g = gMu[i]
		} else {
			g = gL[i-len(gMu)]
		}
		a.M[i] = b1*a.M[i] + (1-b1)*g
		a.V[i] = b2*a.V[i] + (1-b2)*g*g
		d[i] = a.M[i] / c1
		e[i] = lr / (math.Sqrt(a.V[i]/c2) + eps)
	}
	return d[:len(gMu)], d[len(gMu):], e[:len(gMu)], e[len(gMu):]
}
