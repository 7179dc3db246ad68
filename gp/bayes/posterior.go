package bayes

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindPosterior is the Spec kind of a Posterior.
const KindPosterior = "model/posterior"

// drawsName is the name of the Param holding a Posterior's draws.
const drawsName = "posterior.draws"

// Posterior is a model's posterior predictive after NUTS: the model and K draws of its sampled Params' raw
// values, predicting the equal-weight mixture of the model's predictions at the draws,
//
//	p(f* | y) ≈ (1/K) Σₖ p(f* | y, θₖ)
//
// (gp.Prediction.Components: one component per draw; FMean, FVar, YMean and YVar the mixture's moments, Probs its
// class probabilities; FCov the mixture's covariance; Draws from a component drawn at random). It is a model of its
// own for model files: its Params are the model's followed by the draws ("posterior.draws" [K, d], frozen), and its
// Loss is the model's at the model's own Params.
//
// Predict is safe for concurrent use: each concurrent caller predicts with its own copy of the model (rebuilt from
// its Spec), whose sampled Params it sets to one draw after another, keeping that copy's compiled programs when
// the caller passes a program cache (gp.PredictOptions.Programs; the Posterior keeps its own per copy).
type Posterior struct {
	// Model is the sampled model, with its Params as they were before sampling.
	Model Model
	// Draws holds the K kept draws of the sampled raw values, one row each.
	Draws *graph.Param
	lay   layout

	mu   sync.Mutex
	idle []*instance
	gen  int // bumped when the training data change: older copies are dropped
}

// instance is one copy of the model for predictions.
type instance struct {
	m     Model
	ps    []*graph.Param
	cache *graph.ProgramCache
	gen   int
}

var (
	_ Model         = (*Posterior)(nil)
	_ gp.DataHolder = (*Posterior)(nil)
)

// NewPosterior returns the Posterior of m over draws of the raw values of the Params of m.Params() at the
// indices sampled (in order; each draw their raw values concatenated).
func NewPosterior(m Model, sampled []int, draws [][]float64) (*Posterior, error) {
	if m == nil || len(draws) == 0 {
		return nil, errors.New("bayes: NewPosterior: nil model or no draws")
	}
	lay, err := layoutOf(m.Params(), sampled)
	if err != nil {
		return nil, err
	}
	flat := make([]float64, 0, len(draws)*lay.size)
	for i, d := range draws {
		if len(d) != lay.size {
			return nil, &ops.ShapeError{Op: "bayes.NewPosterior", Want: fmt.Sprintf("draws of %d values", lay.size), Got: fmt.Sprintf("draw %d has %d", i, len(d))}
		}
		flat = append(flat, d...)
	}
	p, err := graph.NewParam(drawsName, flat, graph.Identity{}, len(draws), lay.size)
	if err != nil {
		return nil, fmt.Errorf("bayes: NewPosterior: %w", err)
	}
	p.SetTrainable(false)
	return &Posterior{Model: m, Draws: p, lay: lay}, nil
}

// layoutOf returns the layout of the Params of ps at the indices sampled.
func layoutOf(ps []*graph.Param, sampled []int) (layout, error) {
	var l layout
	for k, i := range sampled {
		if i < 0 || i >= len(ps) || k > 0 && i <= sampled[k-1] {
			return l, fmt.Errorf("%w: sampled Param indices %v (want increasing indices below %d)", gp.ErrConfig, sampled, len(ps))
		}
		l.index = append(l.index, i)
		l.offset = append(l.offset, l.size)
		l.names = append(l.names, ps[i].Name())
		l.size += ps[i].Size()
	}
	if l.size == 0 {
		return l, fmt.Errorf("%w: no sampled Param", gp.ErrConfig)
	}
	return l, nil
}

// NumDraws returns K.
func (p *Posterior) NumDraws() int { return p.Draws.Shape()[0] }

// Draw returns draw k's raw values of the sampled Params (a copy).
func (p *Posterior) Draw(k int) []float64 {
	return slices.Clone(p.Draws.Raw()[k*p.lay.size : (k+1)*p.lay.size])
}

// Sampled returns the indices in Model.Params() of the sampled Params.
func (p *Posterior) Sampled() []int { return slices.Clone(p.lay.index) }

// Params returns the model's Params followed by the draws.
func (p *Posterior) Params() []*graph.Param { return append(slices.Clone(p.Model.Params()), p.Draws) }

// Loss returns the model's loss at its own Params.
func (p *Posterior) Loss(x, y *graph.Node) *graph.Node { return p.Model.Loss(x, y) }

// InputDim, OutputDim and PredictiveDim are the model's.
func (p *Posterior) InputDim() int      { return p.Model.InputDim() }
func (p *Posterior) OutputDim() int     { return p.Model.OutputDim() }
func (p *Posterior) PredictiveDim() int { return p.Model.PredictiveDim() }

// TrainingData returns the model's training data (nil when it holds none).
func (p *Posterior) TrainingData() (x, y *mat.Dense) {
	if dh, ok := p.Model.(gp.DataHolder); ok {
		return dh.TrainingData()
	}
	return nil, nil
}

// SetTrainingData sets the model's training data (an error for a model that holds none and data given).
func (p *Posterior) SetTrainingData(x, y *mat.Dense) error {
	dh, ok := p.Model.(gp.DataHolder)
	if !ok {
		if x == nil && y == nil {
			return nil
		}
		return fmt.Errorf("%w: bayes: a %T holds no training data", gp.ErrConfig, p.Model)
	}
	if err := dh.SetTrainingData(x, y); err != nil {
		return err
	}
	p.mu.Lock()
	p.gen++
	for _, in := range p.idle {
		in.cache.Close()
	}
	p.idle = nil
	p.mu.Unlock()
	return nil
}

// get returns an idle copy of the model (or a new one) with the model's current raw values.
func (p *Posterior) get() (*instance, error) {
	p.mu.Lock()
	gen := p.gen
	if n := len(p.idle); n > 0 {
		in := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		for i, q := range p.Model.Params() {
			copy(in.ps[i].Raw(), q.Raw())
		}
		return in, nil
	}
	p.mu.Unlock()
	m, err := clone(p.Model, gp.BuildOptions{})
	if err != nil {
		return nil, fmt.Errorf("bayes: a copy of the model for prediction: %w", err)
	}
	return &instance{m: m, ps: m.Params(), cache: graph.NewProgramCache(0), gen: gen}, nil
}

func (p *Posterior) put(in *instance) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in.gen != p.gen {
		in.cache.Close()
		return
	}
	p.idle = append(p.idle, in)
}

// predictDraw returns the model's prediction at x with the sampled Params at draw k.
func (p *Posterior) predictDraw(in *instance, k int, x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	p.lay.set(in.ps, p.Draws.Raw()[k*p.lay.size:(k+1)*p.lay.size])
	pr, err := in.m.Predict(x, o)
	if err != nil {
		return nil, fmt.Errorf("bayes: posterior draw %d: %w", k, err)
	}
	return pr, nil
}

// Predict returns the mixture over the draws of the model's predictions at x (see Posterior). The model's
// errors pass through; a model that cannot honour Full or Draws (gp.ErrUnsupported) makes the mixture refuse
// them too.
func (p *Posterior) Predict(x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if p == nil || p.Model == nil || p.Draws == nil {
		return nil, errors.New("bayes: Posterior.Predict: incomplete model")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs("bayes.Posterior.Predict", x, p.InputDim()); err != nil {
		return nil, err
	}
	in, err := p.get()
	if err != nil {
		return nil, err
	}
	defer p.put(in)
	rng := o.Rng()
	base := o
	base.Full, base.Draws, base.Rand = false, 0, rng
	base.Programs = nil
	if o.Programs != nil {
		base.Programs = in.cache
	}
	k := p.NumDraws()
	w := 1 / float64(k)
	parts := make([]*gp.Prediction, k)
	for j := range parts {
		if parts[j], err = p.predictDraw(in, j, x, base); err != nil {
			return nil, err
		}
	}
	out := &gp.Prediction{Components: make([]gp.Component, k)}
	for j, pr := range parts {
		out.Components[j] = gp.Component{Weight: w, Label: fmt.Sprintf("draw %d", j), FMean: pr.FMean, FVar: pr.FVar, YMean: pr.YMean, YVar: pr.YVar}
	}
	out.FMean, out.FVar = mixtureMoments(parts, func(pr *gp.Prediction) (*mat.Dense, *mat.Dense) { return pr.FMean, pr.FVar })
	out.YMean, out.YVar = mixtureMoments(parts, func(pr *gp.Prediction) (*mat.Dense, *mat.Dense) { return pr.YMean, pr.YVar })
	if parts[0].Probs != nil {
		r, c := parts[0].Probs.Dims()
		out.Probs = mat.NewDense(r, c, nil)
		for _, pr := range parts {
			out.Probs.Add(out.Probs, pr.Probs)
		}
		out.Probs.Scale(w, out.Probs)
	}
	if o.OutputCov {
		ws := make([]float64, k)
		means := make([]*mat.Dense, k)
		covs := make([][]*mat.SymDense, k)
		for j, pr := range parts {
			ws[j], means[j], covs[j] = w, pr.FMean, pr.OutputCov
		}
		out.OutputCov = gp.MixtureOutputCov(ws, means, covs, out.FMean)
	}
	if o.Full {
		if out.FCov, err = p.mixtureCov(in, x, base, out.FMean, parts); err != nil {
			return nil, err
		}
	}
	for s := 0; s < o.Draws; s++ {
		j := rng.IntN(k)
		one := base
		one.Draws, one.Rand = 1, rng
		pr, err := p.predictDraw(in, j, x, one)
		if err != nil {
			return nil, err
		}
		out.Draws = append(out.Draws, pr.Draws[0])
	}
	return out, nil
}

// mixtureMoments returns the mean and variance of the equal-weight mixture of the parts' Gaussians (or of their
// predictive moments): μ = mean of the μₖ, σ² = mean of σ²ₖ + (μₖ − μ)² (the law of total variance).
func mixtureMoments(parts []*gp.Prediction, get func(*gp.Prediction) (*mat.Dense, *mat.Dense)) (*mat.Dense, *mat.Dense) {
	m0, _ := get(parts[0])
	r, c := m0.Dims()
	w := 1 / float64(len(parts))
	mean, variance := mat.NewDense(r, c, nil), mat.NewDense(r, c, nil)
	md := mean.RawMatrix().Data
	for _, pr := range parts {
		m, _ := get(pr)
		for i, v := range m.RawMatrix().Data {
			md[i] += w * v
		}
	}
	vd := variance.RawMatrix().Data
	for _, pr := range parts {
		m, v := get(pr)
		mdk, vdk := m.RawMatrix().Data, v.RawMatrix().Data
		for i := range vd {
			dm := mdk[i] - md[i]
			vd[i] += w * (vdk[i] + dm*dm)
		}
	}
	for i, v := range vd {
		vd[i] = math.Max(v, 0)
	}
	return mean, variance
}

// mixtureCov returns the mixture's full covariance of each latent function: (1/K) Σₖ Cₖ + (μₖ − μ)(μₖ − μ)ᵀ.
func (p *Posterior) mixtureCov(in *instance, x *mat.Dense, base gp.PredictOptions, mean *mat.Dense, parts []*gp.Prediction) ([]*mat.SymDense, error) {
	n, l := mean.Dims()
	w := 1 / float64(len(parts))
	out := make([]*mat.SymDense, l)
	for c := range out {
		out[c] = mat.NewSymDense(n, nil)
	}
	full := base
	full.Full = true
	d := make([]float64, n)
	for j := range parts {
		pr, err := p.predictDraw(in, j, x, full)
		if err != nil {
			return nil, err
		}
		for c := range out {
			for i := range d {
				d[i] = pr.FMean.At(i, c) - mean.At(i, c)
			}
			for a := 0; a < n; a++ {
				for b := a; b < n; b++ {
					out[c].SetSym(a, b, out[c].At(a, b)+w*(pr.FCov[c].At(a, b)+d[a]*d[b]))
				}
			}
		}
	}
	return out, nil
}

// posteriorSpec is the Config of model/posterior: the sampled Params' indices in the model's Params() and the
// number of draws; the child is the model.
type posteriorSpec struct {
	Sampled []int `json:"sampled"`
	Draws   int   `json:"draws"`
}

// Spec describes the Posterior: the model's Spec as its child (its priors are the Posterior's Params' and go
// with gp.Describe), the sampled Params and the number of draws (whose values are a Param).
func (p *Posterior) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindPosterior, posteriorSpec{Sampled: p.lay.index, Draws: p.NumDraws()}, p.Model)
}

func init() { gp.RegisterKind(KindPosterior, buildPosterior) }

func buildPosterior(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c posteriorSpec
	if err := gp.DecodeConfig(KindPosterior, raw, &c); err != nil {
		return nil, err
	}
	m, err := gp.ChildAs[Model](KindPosterior, children, 0)
	if err != nil {
		return nil, err
	}
	if len(children) != 1 {
		return nil, fmt.Errorf("%w: %s has %d children, want 1", gp.ErrConfig, KindPosterior, len(children))
	}
	lay, err := layoutOf(m.Params(), c.Sampled)
	if err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindPosterior, c.Draws, lay.size); err != nil {
		return nil, err
	}
	draws := make([][]float64, c.Draws)
	for i := range draws {
		draws[i] = make([]float64, lay.size)
	}
	return NewPosterior(m, c.Sampled, draws)
}
