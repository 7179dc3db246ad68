package dgp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// ErrConfig is the sentinel of invalid deep-GP configurations.
var ErrConfig = errors.New("dgp: invalid configuration")

// Noise returns the reparameterisation noise ε [rows,cols] of hidden layer `layer` (0-based) in g: cols is the
// layer's OutputDim, or its NoiseDim for a gp.CorrelatedLayer. The training default (Config.Noise nil) draws
// each data row's ε from a counter-based generator keyed by (seed, layer, step, row) (see Config.Noise);
// StandardNormalNoise redraws one block from a seeded generator at every run; tests inject fixed noise.
type Noise func(g *graph.Graph, layer, rows, cols int) *graph.Node

// StandardNormalNoise returns a Noise that redraws ε ~ N(0, I) from rng at every run of the graph (rng must not
// be used elsewhere while the graph runs).
func StandardNormalNoise(rng *rand.Rand) Noise {
	return func(g *graph.Graph, _, rows, cols int) *graph.Node {
		return g.StandardNormal(g.Scalar("dgp.anchor", 0), rng, rows, cols)
	}
}

// Config configures a deep GP. Zero values mean defaults.
type Config struct {
	// Layers are the layers, input first (at least one). Layer ℓ+1's InputDim must equal layer ℓ's OutputDim,
	// and the last layer's OutputDim the likelihood's latent dimension. Any gp.Layer composes: coupled SVGP,
	// DECOUPLED, HYBRID, ORTH. Inner layers carry their own mean functions (see Build).
	Layers []gp.Layer
	// Likelihood is p(y | f^L) (required). Its VariationalExpectations is analytic where it can be (Gaussian)
	// and by Gauss–Hermite quadrature otherwise.
	Likelihood gp.Likelihood
	// NumData is N, the training-set size (required: the minibatch scale is N/B).
	NumData int
	// Samples is S, the number of propagated samples per training point (default 1).
	Samples int
	// Noise supplies ε; nil means row-keyed noise: in a graph of a batch of B rows, S samples each, ε of layer ℓ
	// is graph.RowNormal over the graph inputs gp.RowsInput [B] (the rows' global indices in the training set)
	// and gp.StepInput (the step), keyed by (NoiseSeed, ℓ): a row's S draws depend on (seed, ℓ, step, row) only,
	// never on the other rows of its batch, so a batch's loss and gradients are the sums of its parts' (a sharded
	// step equals a single-process one). train.Train fills both inputs; a checkpoint's step count resumes the
	// stream exactly. Other callers of Loss must fill them too (zero: every row reads as row 0 at step 0).
	Noise Noise
	// Rand seeds the default Noise: its first Uint64, drawn when the first training graph is built, is
	// NoiseSeed (required when Noise is nil and there is more than one layer).
	Rand *rand.Rand
}

// DGP is the doubly-stochastic deep GP of Salimbeni & Deisenroth (2017; MATH.md §9). Layer ℓ maps samples
// F^{ℓ−1} [S·B, D_{ℓ−1}] to
//
//	F^ℓ = μ_ℓ(F^{ℓ−1}) + √σ²_ℓ(F^{ℓ−1}) ⊙ ε,  ε ~ N(0, I)   (eq. 7; μ_ℓ includes the layer's mean function),
//
// using only the marginals of each layer (eq. 6; a gp.CorrelatedLayer, such as an LMC, draws its outputs jointly at
// each point from its own NoiseDim numbers per row: Sample), and the minibatch ELBO (eq. 8) is
//
//	ELBO = (N/B)(1/S) Σ_s Σ_b E_{q(f^L_{b,s})}[log p(y_b | f^L_{b,s})] − Σ_ℓ KL_ℓ,
//
// the last layer's expectation taken analytically in its Gaussian marginal (the likelihood's
// VariationalExpectations). With one layer there is no sampling and the DGP is exactly the SVGP model.
type DGP struct {
	Layers     []gp.Layer
	Likelihood gp.Likelihood
	NumData    int
	samples    int
	noise      Noise // nil: row-keyed noise (rowNoise)

	rand     *rand.Rand // the source of seed
	seedOnce sync.Once
	seed     uint64
}

var _ gp.Predictor = (*DGP)(nil)

// New validates c and returns the deep GP.
func New(c Config) (*DGP, error) {
	if len(c.Layers) == 0 {
		return nil, fmt.Errorf("%w: no layers", ErrConfig)
	}
	if c.Likelihood == nil {
		return nil, fmt.Errorf("%w: nil Likelihood", ErrConfig)
	}
	if c.NumData <= 0 {
		return nil, fmt.Errorf("%w: NumData must be positive, got %d", ErrConfig, c.NumData)
	}
	for i, l := range c.Layers {
		if l == nil {
			return nil, fmt.Errorf("%w: layer %d is nil", ErrConfig, i)
		}
		if i > 0 && l.InputDim() != c.Layers[i-1].OutputDim() {
			return nil, &ops.ShapeError{Op: "dgp.New", Want: fmt.Sprintf("layer %d with InputDim %d (layer %d's OutputDim)", i, c.Layers[i-1].OutputDim(), i-1), Got: fmt.Sprint(l.InputDim())}
		}
	}
	s := c.Samples
	if s == 0 {
		s = 1
	}
	if s < 0 {
		return nil, fmt.Errorf("%w: Samples %d", ErrConfig, c.Samples)
	}
	if c.Noise == nil && c.Rand == nil && len(c.Layers) > 1 {
		return nil, fmt.Errorf("%w: a deep GP needs a Rand (or a Noise) for its samples", ErrConfig)
	}
	return &DGP{Layers: c.Layers, Likelihood: c.Likelihood, NumData: c.NumData, samples: s, noise: c.Noise, rand: c.Rand}, nil
}

// NoiseSeed returns the seed of the default row-keyed training noise (Config.Noise nil): the first Uint64 of
// Config.Rand, drawn on the first call (the first training graph built calls it) and fixed from then on. Two deep
// GPs built with equally seeded Rands (a worker and a server, a run and its resumption) draw the same ε for the
// same row and step. 0 without a Rand.
func (d *DGP) NoiseSeed() uint64 {
	d.seedOnce.Do(func() {
		if d.rand != nil {
			d.seed = d.rand.Uint64()
		}
	})
	return d.seed
}

// SetNoiseSeed fixes NoiseSeed to seed (Config.Rand is then not drawn from): a cluster's workers rebuild the
// deep GP from its Spec and take their server's seed, so that every process draws the same ε for a row and step.
// Graphs built before the call keep the seed they read.
func (d *DGP) SetNoiseSeed(seed uint64) {
	d.seedOnce.Do(func() {})
	d.seed = seed
}

// rowNoise returns the default training Noise of a graph whose batch has b rows tiled s times: layer ℓ's ε
// [s·b, cols] is graph.RowNormal over the inputs gp.RowsInput [b] and gp.StepInput (declared on first use),
// keyed by (NoiseSeed, ℓ); sample k of batch row i (row k·b + i) is copy k of that data row's draws.
func (d *DGP) rowNoise(b, s int) Noise {
	var rows, step *graph.Node
	return func(g *graph.Graph, layer, n, cols int) *graph.Node {
		if n != b*s {
			return g.Fail(&ops.ShapeError{Op: "dgp: row noise", Want: fmt.Sprintf("%d×%d rows", s, b), Got: fmt.Sprint(n)})
		}
		if rows == nil {
			rows, step = g.Input(gp.RowsInput, b), g.Input(gp.StepInput)
		}
		return g.RowNormal(rows, step, ops.RowKey{Seed: d.NoiseSeed(), Stream: uint64(layer)}, cols, s)
	}
}

// Samples returns S, the number of training samples per point.
func (d *DGP) Samples() int { return d.samples }

// Params returns every layer's and the likelihood's parameters, without duplicates.
func (d *DGP) Params() []*graph.Param {
	ps := make([][]*graph.Param, 0, len(d.Layers)+1)
	for _, l := range d.Layers {
		ps = append(ps, l.Params())
	}
	return gp.UniqueParams(append(ps, d.Likelihood.Params())...)
}

// KL returns Σ_ℓ KL_ℓ (scalar).
func (d *DGP) KL(g *graph.Graph) *graph.Node {
	kl := d.Layers[0].KL(g)
	for _, l := range d.Layers[1:] {
		kl = g.Add(kl, l.KL(g))
	}
	return kl
}

// Propagate tiles x [B,D] s times (sample-major: row s·B+b is x_b) and pushes it through every layer but the
// last by sampling (eq. 7); it returns the last layer's marginal means and variances [s·B, D_L].
// Its noise is Config.Noise, or by default row-keyed (the graph's gp.RowsInput and gp.StepInput).
func (d *DGP) Propagate(x *graph.Node, s int) (mean, variance *graph.Node) {
	noise := d.noise
	if noise == nil {
		noise = d.rowNoise(rowsOf(x), s)
	}
	return d.propagate(x, s, noise)
}

func (d *DGP) propagate(x *graph.Node, s int, noise Noise) (mean, variance *graph.Node) {
	return d.Layers[len(d.Layers)-1].Predict(d.sample(x, s, noise, len(d.Layers)-1, nil))
}

// sample tiles x s times and pushes it through the first n layers, drawing each layer's output from its
// marginals (eq. 7) with noise (a gp.CorrelatedLayer jointly over its outputs, from NoiseDim numbers per row);
// each, if set, sees every layer's sample [s·B, D_ℓ].
func (d *DGP) sample(x *graph.Node, s int, noise Noise, n int, each func(layer int, f *graph.Node)) *graph.Node {
	g := x.Graph()
	f := tile(x, s)
	b := rowsOf(f)
	for i, l := range d.Layers[:n] {
		if c, ok := l.(gp.CorrelatedLayer); ok {
			// Outputs correlated at each point (an LMC): the layer draws them jointly from its NoiseDim numbers.
			f = c.Sample(f, noise(g, i, b, c.NoiseDim()))
		} else {
			m, v := l.Predict(f)
			eps := noise(g, i, b, l.OutputDim())
			// The clamp keeps √· defined where round-off leaves a variance just below zero.
			f = g.Add(m, g.Mul(g.Sqrt(g.ClampMin(v, 0)), eps))
		}
		if each != nil {
			each(i, f)
		}
	}
	return f
}

// ELBO returns the whole-data-set ELBO estimated from the batch x [B,D], y [B,P] and S samples (scalar).
func (d *DGP) ELBO(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	b := x.Shape()
	if len(b) != 2 || b[0] > d.NumData {
		return g.Fail(&ops.ShapeError{Op: "dgp.ELBO", Want: fmt.Sprintf("a batch of at most NumData = %d rows", d.NumData), Got: fmt.Sprint(b)})
	}
	return g.Sub(g.Scale(d.expectedLogLik(x, y), float64(d.NumData)/float64(b[0]*d.samples)), d.KL(g))
}

// Loss returns −ELBO (gp.Model).
func (d *DGP) Loss(x, y *graph.Node) *graph.Node { return x.Graph().Neg(d.ELBO(x, y)) }

// DataLoss returns −(1/S) Σ_{b,s} E[log p(y_b | f_b^(s))] over the batch's rows and their S samples, with
// the training noise keyed by row and step as in Loss (gp.RowSum).
func (d *DGP) DataLoss(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	return g.Neg(g.Scale(d.expectedLogLik(x, y), 1/float64(d.samples)))
}

// expectedLogLik returns Σ_{b,s} E[log p(y_b | f_b^(s))] over the batch's rows and their S propagated samples:
// the ELBO's and DataLoss's data term.
func (d *DGP) expectedLogLik(x, y *graph.Node) *graph.Node {
	fm, fv := d.Propagate(x, d.samples)
	return x.Graph().Sum(d.Likelihood.VariationalExpectations(fm, fv, tile(y, d.samples)))
}

// GlobalLoss returns the layers' KL divergences (gp.RowSum).
func (d *DGP) GlobalLoss(g *graph.Graph) *graph.Node { return d.KL(g) }

// DataSize returns NumData (gp.RowSum).
func (d *DGP) DataSize() int { return d.NumData }

// tile returns x stacked s times along its rows (x itself for s = 1).
func tile(x *graph.Node, s int) *graph.Node {
	if s == 1 {
		return x
	}
	n := rowsOf(x)
	idx := make([]float64, s*n)
	for i := range idx {
		idx[i] = float64(i % n)
	}
	g := x.Graph()
	return g.TakeRows(x, g.Const("dgp.tile", idx, s*n))
}

func rowsOf(x *graph.Node) int {
	if s := x.Shape(); len(s) > 0 {
		return s[0]
	}
	return 1
}

// ZeroNoise is the Noise ε = 0: every layer passes on its mean (a deterministic composition, for tests and for
// the noise-free comparisons of the equivalence tests).
func ZeroNoise(g *graph.Graph, _, rows, cols int) *graph.Node { return g.Zeros("dgp.eps", rows, cols) }

// FixedNoise returns a Noise that yields the same draws at every run: ε of hidden layer ℓ is eps[ℓ] (row-major
// [rows,cols]; a run with other sizes fails). It makes the sampled ELBO a deterministic function of the
// parameters, for finite-difference checks.
func FixedNoise(eps [][]float64) Noise {
	return func(g *graph.Graph, layer, rows, cols int) *graph.Node {
		if layer >= len(eps) || len(eps[layer]) != rows*cols {
			return g.Fail(&ops.ShapeError{Op: "dgp.FixedNoise", Want: fmt.Sprintf("%d×%d draws for layer %d", rows, cols, layer), Got: "other"})
		}
		return g.Const("dgp.eps", eps[layer], rows, cols)
	}
}
