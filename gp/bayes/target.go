package bayes

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/mcmc"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Model is what Sample samples and a Posterior predicts with: a gp.Model whose Loss(x, y) on the whole training
// set is the negative log density of the data given its Params (−log p(y | θ), an approximation of it, or a joint
// with latent Params of the model's own), differentiable through its graph; that describes itself, so that each
// chain and each prediction worker rebuilds its own copy (gp.BuildSpec); and that predicts given its Params. A
// gp.DataHolder's training data are copied into the copies. GPR, SGPR and GPMC are such models; so is a Laplace or
// EP model whose Loss is the approximate negative log marginal likelihood.
type Model interface {
	gp.Model
	gp.Describer
	gp.Predictor
}

// MissingPriorError is returned by Sample when sampled Params have no prior: a flat density on a length-scale or
// a variance makes the posterior improper, so the sampler would drift rather than converge.
type MissingPriorError struct {
	Params []string
}

func (e *MissingPriorError) Error() string {
	return fmt.Sprintf("bayes: every sampled parameter needs a prior; these have none: %s (set one with gp.AssignPriors, or gpzoo train --prior NAME=PRIOR; or freeze them)", strings.Join(e.Params, ", "))
}

// layout is the place of the sampled Params in the vector the sampler moves: Param index (in Model.Params())
// and offset of each, in order.
type layout struct {
	index  []int // into Params()
	offset []int
	names  []string
	size   int
}

// sampledLayout returns the layout of m's trainable Params, after checking that each has a prior (or is one of
// the model's latent Params) and an elementwise transform.
func sampledLayout(m Model) (layout, error) {
	latent := map[*graph.Param]bool{}
	if lh, ok := m.(gp.LatentHolder); ok {
		for _, p := range lh.LatentParams() {
			latent[p] = true
		}
	}
	var l layout
	var missing []string
	for i, p := range m.Params() {
		if !p.Trainable() {
			continue
		}
		if _, ok := p.Transform().(graph.Elementwise); !ok {
			return l, fmt.Errorf("bayes: Param %s has transform %v: %w", p.Name(), p.Transform(), graph.ErrPriorTransform)
		}
		if p.Prior() == nil && !latent[p] {
			missing = append(missing, p.Name())
		}
		l.index = append(l.index, i)
		l.offset = append(l.offset, l.size)
		l.names = append(l.names, p.Name())
		l.size += p.Size()
	}
	if missing != nil {
		return l, &MissingPriorError{Params: missing}
	}
	if l.size == 0 {
		return l, errors.New("bayes: the model has no trainable Param to sample")
	}
	return l, nil
}

// Check returns the error Sample would return for m's Params before sampling anything: a *MissingPriorError for
// trainable Params without a prior (latent Params of a gp.LatentHolder apart), an error wrapping
// graph.ErrPriorTransform for a trainable Param whose transform is not elementwise, or one for a model with
// nothing to sample. Callers check before a long MAP fit.
func Check(m Model) error {
	if m == nil {
		return errors.New("bayes: nil model")
	}
	_, err := sampledLayout(m)
	return err
}

// raw returns the sampled Params' raw values of ps (a model's Params()) as one vector.
func (l layout) raw(ps []*graph.Param) []float64 {
	out := make([]float64, 0, l.size)
	for _, i := range l.index {
		out = append(out, ps[i].Raw()...)
	}
	return out
}

// set writes the vector x into the sampled Params' raw values of ps.
func (l layout) set(ps []*graph.Param, x []float64) {
	for k, i := range l.index {
		copy(ps[i].Raw(), x[l.offset[k]:l.offset[k]+ps[i].Size()])
	}
}

// clone returns a copy of m rebuilt from its Spec (priors included), with m's raw values, trainable flags and
// training data.
func clone(m Model, o gp.BuildOptions) (Model, error) {
	s, err := gp.Describe(m)
	if err != nil {
		return nil, err
	}
	v, err := gp.BuildSpec(s, o)
	if err != nil {
		return nil, err
	}
	c, ok := v.(Model)
	if !ok {
		return nil, fmt.Errorf("bayes: the Spec of a %T rebuilds a %T, not a Model", m, v)
	}
	ps, qs := m.Params(), c.Params()
	if len(ps) != len(qs) {
		return nil, fmt.Errorf("bayes: a %T rebuilt with %d Params, want %d", m, len(qs), len(ps))
	}
	for i, p := range ps {
		if err := qs[i].SetRaw(p.Raw()); err != nil {
			return nil, err
		}
		qs[i].SetTrainable(p.Trainable())
	}
	if dh, ok := m.(gp.DataHolder); ok {
		if x, y := dh.TrainingData(); x != nil {
			if err := c.(gp.DataHolder).SetTrainingData(x, y); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// target is the log posterior density of one chain's model copy over its sampled raw values (mcmc.Density).
type target struct {
	lay  layout
	ps   []*graph.Param
	prog *graph.Program
}

var _ mcmc.Density = (*target)(nil)

// newTarget compiles m's negative log posterior −log π(r) = Loss − Σ log p(c) − Σ log t′(r) on (x, y).
func newTarget(m Model, lay layout, x, y *mat.Dense, o graph.Options) (*target, error) {
	n, d := x.Dims()
	_, p := y.Dims()
	g := graph.New(o)
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	ps := m.Params()
	sampled := make([]*graph.Param, len(lay.index))
	for k, i := range lay.index {
		sampled[k] = ps[i]
	}
	neg := gp.WithLogPrior(m.Loss(xn, yn), ps)
	if lj := g.LogJacobian(sampled); lj != nil {
		neg = g.Sub(neg, lj)
	}
	prog, err := g.Compile(neg, nil)
	if err != nil {
		return nil, fmt.Errorf("bayes: building the log posterior: %w", err)
	}
	if prog.InputData(gp.RowsInput) != nil || prog.InputData(gp.StepInput) != nil {
		return nil, errors.New("bayes: the model's loss draws Monte-Carlo noise per row (a deep GP): it has no log density to sample")
	}
	if got := prog.Params(); len(got) != len(sampled) {
		return nil, fmt.Errorf("bayes: the log posterior differentiates %d Params, %d are sampled", len(got), len(sampled))
	}
	copy(prog.InputData("x"), mat.DenseCopyOf(x).RawMatrix().Data)
	copy(prog.InputData("y"), mat.DenseCopyOf(y).RawMatrix().Data)
	return &target{lay: lay, ps: ps, prog: prog}, nil
}

func (t *target) Dim() int { return t.lay.size }

// LogDensity sets the sampled raw values to x and returns log π(x) with its gradient; a covariance that is not
// positive definite, a non-finite value on the way or a Laplace mode or EP fixed point not reached
// (ops.ErrNotConverged) is a point of zero density (−Inf): as Stan does with a log density it cannot evaluate,
// the proposal is rejected, and NUTS counts the trajectory as divergent.
func (t *target) LogDensity(x, grad []float64) (float64, error) {
	t.lay.set(t.ps, x)
	if err := t.prog.Run(); err != nil {
		if errors.Is(err, ops.ErrNotPD) || errors.Is(err, ops.ErrNonFinite) || errors.Is(err, ops.ErrNotConverged) {
			return math.Inf(-1), nil
		}
		return 0, err
	}
	for k, i := range t.lay.index {
		g := t.prog.Grad(t.ps[i])
		dst := grad[t.lay.offset[k] : t.lay.offset[k]+len(g)]
		for j, v := range g {
			dst[j] = -v
		}
	}
	return -t.prog.Loss(), nil
}

// initRand returns the generator of chain c's initial point.
func initRand(seed uint64, c int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x696e6974, uint64(c)))
}
