package dgp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Defaults of PredictOptions.
const (
	// DefaultTestSamples is S at test time (Salimbeni & Deisenroth use 100 for the UCI tables).
	DefaultTestSamples = 100
	// DefaultChunkRows bounds S·(test rows) per prediction run: memory is O(M·DefaultChunkRows) per layer.
	DefaultChunkRows = 20000
)

// PredictOptions configures prediction. Zero values mean defaults.
type PredictOptions struct {
	// Samples is the number of propagated test samples S (default DefaultTestSamples; 1 for a one-layer DGP,
	// which has nothing to sample).
	Samples int
	// Rand draws the test noise (required for a deep GP unless Noise is set). Use a generator of its own:
	// prediction must not consume the training stream.
	Rand *rand.Rand
	// Noise overrides the noise source (tests); nil means StandardNormalNoise(Rand).
	Noise Noise
	// ChunkRows bounds S·rows per run (default DefaultChunkRows).
	ChunkRows int
	// Graph sets the jitter policy of the prediction graph.
	Graph graph.Options
}

// Prediction holds the last layer's latent marginals for each of S propagated samples: SampleMean[s] and
// SampleVar[s] are [N,L]. A DGP's predictive distribution is the mixture (1/S) Σ_s N(μ_s, diag v_s) in f, pushed
// through the likelihood.
type Prediction struct {
	SampleMean, SampleVar []*mat.Dense
}

// Samples returns S.
func (p *Prediction) Samples() int { return len(p.SampleMean) }

// MomentMatched returns the mean and variance [N,L] of the Gaussian that matches the first two moments of the
// latent mixture: mean = (1/S)Σ μ_s, var = (1/S)Σ (v_s + μ_s²) − mean².
func (p *Prediction) MomentMatched() (mean, variance *mat.Dense) {
	n, l := p.SampleMean[0].Dims()
	ms, vs := make([][]float64, p.Samples()), make([][]float64, p.Samples())
	for s := range ms {
		ms[s], vs[s] = p.SampleMean[s].RawMatrix().Data, p.SampleVar[s].RawMatrix().Data
	}
	mu, v := mixtureMoments(ms, vs)
	return mat.NewDense(n, l, mu), mat.NewDense(n, l, v)
}

// mixtureMoments returns the mean and variance of the equally weighted mixture of Gaussians N(ms[s], vs[s]),
// entry by entry: mean = (1/S)Σ ms[s], var = (1/S)Σ (vs[s] + ms[s]²) − mean² (law of total variance).
func mixtureMoments(ms, vs [][]float64) (mean, variance []float64) {
	mean, variance = make([]float64, len(ms[0])), make([]float64, len(ms[0]))
	inv := 1 / float64(len(ms))
	for s := range ms {
		for i, m := range ms[s] {
			mean[i] += inv * m
			variance[i] += inv * (vs[s][i] + m*m)
		}
	}
	for i := range variance {
		variance[i] = math.Max(variance[i]-mean[i]*mean[i], 0)
	}
	return mean, variance
}

// PredictF propagates S samples of every test row through the hidden layers (each sample its own noise) and
// returns the last layer's marginals per sample.
func (d *DGP) PredictF(x *mat.Dense, o PredictOptions) (*Prediction, error) {
	if x == nil {
		return nil, fmt.Errorf("dgp: nil inputs")
	}
	n, dim := x.Dims()
	if dim != d.InputDim() {
		return nil, &ops.ShapeError{Op: "dgp.PredictF", Want: fmt.Sprintf("inputs with %d columns", d.InputDim()), Got: fmt.Sprint(dim)}
	}
	if err := ops.CheckFinite("dgp prediction inputs", x.RawMatrix().Data, dim); err != nil {
		return nil, err
	}
	s := o.Samples
	if len(d.Layers) == 1 {
		s = 1
	} else if s == 0 {
		s = DefaultTestSamples
	}
	if s < 0 {
		return nil, fmt.Errorf("%w: %d test samples", ErrConfig, o.Samples)
	}
	noise := o.Noise
	if noise == nil {
		if o.Rand == nil && len(d.Layers) > 1 {
			return nil, fmt.Errorf("%w: prediction of a deep GP needs a Rand (or a Noise)", ErrConfig)
		}
		noise = StandardNormalNoise(o.Rand)
	}
	budget := o.ChunkRows
	if budget <= 0 {
		budget = DefaultChunkRows
	}
	chunk := min(max(1, budget/s), n)
	g := graph.New(o.Graph)
	xs := g.Input("xs", chunk, dim)
	fm, fv := d.propagate(xs, s, noise)
	prog, err := g.CompileForward(map[string]*graph.Node{"mean": fm, "var": fv})
	if err != nil {
		return nil, fmt.Errorf("dgp: prediction graph: %w", err)
	}
	defer prog.Close()
	l := d.Layers[len(d.Layers)-1].OutputDim()
	p := &Prediction{SampleMean: make([]*mat.Dense, s), SampleVar: make([]*mat.Dense, s)}
	for k := range p.SampleMean {
		p.SampleMean[k], p.SampleVar[k] = mat.NewDense(n, l, nil), mat.NewDense(n, l, nil)
	}
	buf := prog.InputData("xs")
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		clear(buf)
		for i := lo; i < hi; i++ {
			copy(buf[(i-lo)*dim:], x.RawRowView(i))
		}
		if err := prog.Run(); err != nil {
			return nil, fmt.Errorf("dgp: predicting rows %d..%d: %w", lo, hi, err)
		}
		mean, variance := prog.Output("mean"), prog.Output("var")
		for k := 0; k < s; k++ { // sample-major rows: sample k of row i is row k·chunk + i
			for i := lo; i < hi; i++ {
				r := (k*chunk + i - lo) * l
				copy(p.SampleMean[k].RawRowView(i), mean[r:r+l])
				vr := p.SampleVar[k].RawRowView(i)
				for j := range vr {
					vr[j] = math.Max(variance[r+j], 0) // round-off can make a tiny variance negative
				}
			}
		}
	}
	return p, nil
}

// PredictY returns the mean and variance [N,P] of the predictive mixture of y at x (class probabilities for
// classifiers); see YMoments.
func (d *DGP) PredictY(x *mat.Dense, o PredictOptions) (mean, variance *mat.Dense, err error) {
	p, err := d.PredictF(x, o)
	if err != nil {
		return nil, nil, err
	}
	return d.YMoments(p)
}

// YMoments returns the mean and variance [N,P] of y under the predictive mixture p: the per-sample likelihood
// predictives combined by the law of total variance.
func (d *DGP) YMoments(p *Prediction) (mean, variance *mat.Dense, err error) {
	n, _ := p.SampleMean[0].Dims()
	ms, vs := make([][]float64, p.Samples()), make([][]float64, p.Samples())
	for s := range ms {
		if ms[s], vs[s], err = d.Likelihood.PredictMeanVar(p.SampleMean[s].RawMatrix().Data, p.SampleVar[s].RawMatrix().Data, n); err != nil {
			return nil, nil, err
		}
	}
	mu, v := mixtureMoments(ms, vs)
	c := len(mu) / n
	return mat.NewDense(n, c, mu), mat.NewDense(n, c, v), nil
}

// LogDensities are per-row test log densities log p(y_n | x_n) under the two summaries of a DGP's predictive.
type LogDensities struct {
	// Mixture is log((1/S) Σ_s p(y_n | μ_s, v_s)): the DGP's own predictive density, the number Salimbeni &
	// Deisenroth and Havasi et al. report.
	Mixture []float64
	// MomentMatched is log p(y_n) under the likelihood applied to the moment-matched Gaussian of the latent
	// mixture (Prediction.MomentMatched): a Gaussian summary, never higher on average for multimodal
	// predictives.
	MomentMatched []float64
}

// LogDensity returns the test log densities of y [N,P] at x under the S-sample mixture and its moment-matched
// Gaussian.
func (d *DGP) LogDensity(x, y *mat.Dense, o PredictOptions) (*LogDensities, error) {
	p, err := d.PredictF(x, o)
	if err != nil {
		return nil, err
	}
	return d.Score(p, y)
}

// Score returns the log densities of y [N,P] under the predictive mixture p (made at the inputs of y's rows)
// and under its moment-matched Gaussian.
func (d *DGP) Score(p *Prediction, y *mat.Dense) (*LogDensities, error) {
	n, _ := p.SampleMean[0].Dims()
	var err error
	if y == nil {
		return nil, fmt.Errorf("dgp: nil targets")
	}
	if ny, _ := y.Dims(); ny != n {
		return nil, &ops.ShapeError{Op: "dgp.LogDensity", Want: fmt.Sprintf("%d target rows", n), Got: fmt.Sprint(ny)}
	}
	yd := mat.DenseCopyOf(y).RawMatrix().Data
	per := make([][]float64, p.Samples())
	for s := range per {
		if per[s], err = d.Likelihood.PredictLogDensity(p.SampleMean[s].RawMatrix().Data, p.SampleVar[s].RawMatrix().Data, yd, n); err != nil {
			return nil, err
		}
	}
	out := &LogDensities{Mixture: make([]float64, n)}
	col := make([]float64, len(per))
	logS := math.Log(float64(len(per)))
	for i := range out.Mixture {
		for s := range per {
			col[s] = per[s][i]
		}
		out.Mixture[i] = ops.LogSumExp(col) - logS
	}
	mm, mv := p.MomentMatched()
	if out.MomentMatched, err = d.Likelihood.PredictLogDensity(mm.RawMatrix().Data, mv.RawMatrix().Data, yd, n); err != nil {
		return nil, err
	}
	return out, nil
}
