package dgp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Defaults of gp.PredictOptions for deep GPs.
const (
	// DefaultTestSamples is S at test time (Salimbeni & Deisenroth use 100 for the UCI tables).
	DefaultTestSamples = 100
	// DefaultChunkRows bounds S·(test rows) per prediction run: memory is O(M·DefaultChunkRows) per layer.
	DefaultChunkRows = 20000
)

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

// Predict returns the predictive distribution at x [N,D] (gp.Predictor): o.Samples (S, default
// DefaultTestSamples; 1 for a one-layer DGP) samples of every test row are propagated through the hidden layers
// (each sample its own noise, drawn from o.Rand) in runs of at most o.ChunkRows (default DefaultChunkRows)
// samples × rows, and the last layer's marginals of each sample pushed through the likelihood. The result is the
// equally weighted mixture of the S samples, kept in Components (weight 1/S; FMean, FVar: the last layer's
// marginals given the sample; YMean, YVar: the likelihood's predictive of each). FMean and FVar are the mixture's
// mean and variance in f (the moment-matched Gaussian: mean = (1/S)Σ μ_s, var = (1/S)Σ (v_s + μ_s²) − mean²),
// YMean and YVar the mixture's in y (the same law of total variance over the per-sample predictives; for
// classifiers YMean is the mixture's class probabilities, and Probs follow from it). o.Draws adds samples of f^L
// propagated through every layer (each row given the previous layer's sample of that row: not joint across rows).
// o.OutputCov adds the mixture's covariance between the outputs at each row (outputCov). o.Full returns
// ErrUnsupported: the predictive is not Gaussian.
func (d *DGP) Predict(x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	return d.PredictWithNoise(x, o, nil)
}

// PredictWithNoise is Predict with the propagation noise taken from noise instead of o.Rand (nil: o.Rand), for
// tests and noise-free comparisons (ZeroNoise, FixedNoise).
func (d *DGP) PredictWithNoise(x *mat.Dense, o gp.PredictOptions, noise Noise) (*gp.Prediction, error) {
	if d == nil || len(d.Layers) == 0 || d.Likelihood == nil {
		return nil, fmt.Errorf("%w: Predict with an incomplete deep GP (no layers or no likelihood)", ErrConfig)
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs("dgp.Predict", x, d.InputDim()); err != nil {
		return nil, err
	}
	if o.Full {
		return nil, fmt.Errorf("%w: a deep GP's predictive is a mixture, it has no full covariance (PredictOptions.Full)", gp.ErrUnsupported)
	}
	s := o.Samples
	if len(d.Layers) == 1 {
		s = 1
	} else if s == 0 {
		s = DefaultTestSamples
	}
	rng := o.Rng()
	lik, err := gp.LikelihoodWithRand(d.Likelihood, rng)
	if err != nil {
		return nil, err
	}
	sm, sv, sc, err := d.sampleMarginals(x, s, noise, rng, o)
	if err != nil {
		return nil, err
	}
	n, l := sm[0].Dims()
	fms, fvs := make([][]float64, s), make([][]float64, s)
	yms, yvs := make([][]float64, s), make([][]float64, s)
	for k := range fms {
		fms[k], fvs[k] = sm[k].RawMatrix().Data, sv[k].RawMatrix().Data
	}
	for k := range yms {
		if yms[k], yvs[k], err = lik.PredictMeanVar(fms[k], fvs[k], n); err != nil {
			return nil, err
		}
	}
	out := &gp.Prediction{Components: make([]gp.Component, s)}
	fm, fv := mixtureMoments(fms, fvs)
	out.FMean, out.FVar = mat.NewDense(n, l, fm), mat.NewDense(n, l, fv)
	ym, yv := mixtureMoments(yms, yvs)
	c := len(ym) / n
	out.YMean, out.YVar = mat.NewDense(n, c, ym), mat.NewDense(n, c, yv)
	if cl, ok := lik.(gp.ClassLikelihood); ok {
		out.Probs = cl.ClassProbs(out.YMean)
	}
	if o.OutputCov {
		out.OutputCov = outputCov(sm, sv, sc, out.FMean, out.FVar)
	}
	for k := range out.Components {
		out.Components[k] = gp.Component{Weight: 1 / float64(s), FMean: sm[k], FVar: sv[k],
			YMean: mat.NewDense(n, c, yms[k]), YVar: mat.NewDense(n, c, yvs[k])}
	}
	if o.Draws > 0 {
		if noise == nil {
			noise = StandardNormalNoise(rng)
		}
		if out.Draws, err = d.drawLast(x, o.Draws, noise, o.Graph); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// InputDim returns the first layer's input width (0 without layers).
func (d *DGP) InputDim() int {
	if d == nil || len(d.Layers) == 0 || d.Layers[0] == nil {
		return 0
	}
	return d.Layers[0].InputDim()
}

// PredictiveDim returns Y, the width of the predictive YMean and YVar: gp.PredictiveDim of the likelihood and
// OutputDim (0 without layers or a likelihood, or when the likelihood does not take OutputDim latents).
func (d *DGP) PredictiveDim() int {
	if d == nil || d.Likelihood == nil || d.OutputDim() == 0 {
		return 0
	}
	y, err := gp.PredictiveDim(d.Likelihood, d.OutputDim())
	if err != nil {
		return 0
	}
	return y
}

// OutputDim returns the last layer's output width L (the likelihood's latent functions; 0 without layers).
func (d *DGP) OutputDim() int {
	if d == nil || len(d.Layers) == 0 || d.Layers[len(d.Layers)-1] == nil {
		return 0
	}
	return d.Layers[len(d.Layers)-1].OutputDim()
}

// outputCov returns the covariance between the outputs at each row of the equally weighted mixture of the samples'
// predictives (means sm, variances sv [N,L] and, for a correlated last layer, covariances between the outputs sc,
// row-major [N·L·L], per sample; diagonal otherwise): (1/S) Σ_s (C_s + (μ_s − μ)(μ_s − μ)ᵀ), the law of total
// covariance, which couples the outputs through the shared hidden samples even when the last layer's are
// independent. The diagonal is set to fvar, the mixture's variances (the same quantity).
func outputCov(sm, sv []*mat.Dense, sc [][]float64, fmean, fvar *mat.Dense) []*mat.SymDense {
	n, l := fmean.Dims()
	w := make([]float64, len(sm))
	covs := make([][]*mat.SymDense, len(sm))
	for k := range sm {
		w[k] = 1 / float64(len(sm))
		if sc != nil {
			covs[k] = gp.OutputCovFromRows(sc[k], n, l)
			for i, c := range covs[k] {
				for j := 0; j < l; j++ {
					c.SetSym(j, j, sv[k].At(i, j))
				}
			}
		} else {
			covs[k] = gp.DiagonalOutputCov(sv[k])
		}
	}
	out := gp.MixtureOutputCov(w, sm, covs, fmean)
	for i, c := range out {
		for j := 0; j < l; j++ {
			c.SetSym(j, j, fvar.At(i, j))
		}
	}
	return out
}

// sampleMarginals propagates s samples of every row of x through the hidden layers and returns the last layer's
// marginals per sample, [N,L] each, and, when o.OutputCov is set and the last layer is a gp.CorrelatedLayer, its
// covariances between the outputs per sample (row-major [N·L·L] each; nil otherwise). The propagation noise comes from noise, or (nil) is drawn from rng: then a
// program kept in o.Programs draws through a switchable source set to rng for this call, so that a cached
// program gives the bits a fresh one would.
func (d *DGP) sampleMarginals(x *mat.Dense, s int, noise Noise, rng *rand.Rand, o gp.PredictOptions) (means, variances []*mat.Dense, covs [][]float64, err error) {
	corr, withCov := d.Layers[len(d.Layers)-1].(gp.CorrelatedLayer)
	withCov = withCov && o.OutputCov
	n, dim := x.Dims()
	budget := o.ChunkRows
	if budget <= 0 {
		budget = DefaultChunkRows
	}
	chunk := min(max(1, budget/s), n)
	var inputs []noiseInput // the propagation noise as inputs, filled per run (o.RowRand)
	build := func() (*graph.Program, *switchSource, error) {
		var src *switchSource
		nz := noise
		switch {
		case nz == nil && o.RowRand != nil:
			inputs = inputs[:0]
			nz = func(g *graph.Graph, layer, rows, cols int) *graph.Node {
				name := fmt.Sprintf("dgp.eps%d", layer)
				inputs = append(inputs, noiseInput{name: name, cols: cols})
				return g.Input(name, rows, cols)
			}
		case nz == nil:
			src = &switchSource{}
			nz = StandardNormalNoise(rand.New(src))
		}
		g := graph.New(o.Graph)
		xs := g.Input("xs", chunk, dim)
		f := d.sample(xs, s, nz, len(d.Layers)-1, nil)
		fm, fv := d.Layers[len(d.Layers)-1].Predict(f) // propagate's
		outs := map[string]*graph.Node{"mean": fm, "var": fv}
		if withCov {
			_, outs["cov"] = corr.PredictOutputCov(f)
		}
		prog, err := g.CompileForward(outs)
		if err != nil {
			return nil, nil, fmt.Errorf("dgp: prediction graph: %w", err)
		}
		return prog, src, nil
	}
	programs := o.Programs
	if noise != nil {
		programs = nil // a caller's Noise is baked into the graph: never cached
	}
	l := d.Layers[len(d.Layers)-1].OutputDim()
	means, variances = make([]*mat.Dense, s), make([]*mat.Dense, s)
	for k := range means {
		means[k], variances[k] = mat.NewDense(n, l, nil), mat.NewDense(n, l, nil)
	}
	if withCov {
		covs = make([][]float64, s)
		for k := range covs {
			covs[k] = make([]float64, n*l*l)
		}
	}
	key := fmt.Sprintf("dgp.marginals/%d,%d,%d", s, chunk, dim)
	if withCov {
		key += "/outputcov"
	}
	var rows []*rand.Rand
	if noise == nil && o.RowRand != nil {
		key += "/rows"
		rows = make([]*rand.Rand, n)
		for i := range rows {
			rows[i] = o.RowRand(i)
		}
	}
	err = programs.Use(key, func() (*graph.Program, any, error) {
		prog, src, err := build()
		return prog, programAux{src: src, noise: slices.Clone(inputs)}, err
	}, func(prog *graph.Program, a any) error {
		aux := a.(programAux)
		if aux.src != nil {
			aux.src.r = rng
			defer func() { aux.src.r = nil }()
		}
		buf := prog.InputData("xs")
		for lo := 0; lo < n; lo += chunk {
			hi := min(lo+chunk, n)
			clear(buf)
			for i := lo; i < hi; i++ {
				copy(buf[(i-lo)*dim:], x.RawRowView(i))
			}
			fillRowNoise(prog, aux.noise, rows, lo, hi, chunk, s)
			if err := prog.Run(); err != nil {
				return fmt.Errorf("dgp: predicting rows %d..%d: %w", lo, hi, err)
			}
			mean, variance := prog.Output("mean"), prog.Output("var")
			for k := 0; k < s; k++ { // sample-major rows: sample k of row i is row k·chunk + i
				for i := lo; i < hi; i++ {
					r := (k*chunk + i - lo) * l
					copy(means[k].RawRowView(i), mean[r:r+l])
					vr := variances[k].RawRowView(i)
					for j := range vr {
						vr[j] = math.Max(variance[r+j], 0) // round-off can make a tiny variance negative
					}
					if withCov {
						copy(covs[k][i*l*l:(i+1)*l*l], prog.Output("cov")[r*l:(r+l)*l])
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return means, variances, covs, nil
}

// noiseInput is the input node of one hidden layer's propagation noise [s·chunk, cols].
type noiseInput struct {
	name string
	cols int
}

// programAux is what a cached prediction program keeps beside it: the switchable source its noise op draws
// from, or its noise inputs.
type programAux struct {
	src   *switchSource
	noise []noiseInput
}

// fillRowNoise draws the noise inputs of the run over rows lo … hi−1 (sample-major: sample k of row i is row
// k·chunk + i − lo) from the rows' own generators, layer by layer, sample by sample, so that each row's
// generator is consumed in the same order whatever rows share its run; padding rows get zeros.
func fillRowNoise(prog *graph.Program, inputs []noiseInput, rows []*rand.Rand, lo, hi, chunk, s int) {
	for _, in := range inputs {
		eps := prog.InputData(in.name)
		clear(eps)
		for i := lo; i < hi; i++ {
			r := rows[i]
			for k := 0; k < s; k++ {
				row := eps[(k*chunk+i-lo)*in.cols:][:in.cols]
				for c := range row {
					row[c] = r.NormFloat64()
				}
			}
		}
	}
}

// switchSource is a rand.Source that draws from the generator r set for the current use of a cached program:
// rand.New(src) then yields exactly the numbers r itself would (math/rand/v2's Rand keeps no state of its own).
type switchSource struct{ r *rand.Rand }

// Uint64 draws from the current generator.
func (s *switchSource) Uint64() uint64 { return s.r.Uint64() }

// drawLast returns s samples [N,L] of the last layer's output at the rows of x, each propagated through every
// layer (LayerSamples' last layer), in one run.
func (d *DGP) drawLast(x *mat.Dense, s int, noise Noise, o graph.Options) ([]*mat.Dense, error) {
	n, dim := x.Dims()
	g := graph.New(o)
	f := d.sample(g.Input("xs", n, dim), s, noise, len(d.Layers), nil)
	prog, err := g.CompileForward(map[string]*graph.Node{"f": f})
	if err != nil {
		return nil, fmt.Errorf("dgp: sampling graph: %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("xs"), mat.DenseCopyOf(x).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("dgp: drawing samples: %w", err)
	}
	vals, q := prog.Output("f"), d.OutputDim()
	out := make([]*mat.Dense, s)
	for k := range out { // sample-major rows: sample k of row r is row k·N + r
		out[k] = mat.NewDense(n, q, append([]float64(nil), vals[k*n*q:(k+1)*n*q]...))
	}
	return out, nil
}

// LogDensities are per-row test log densities log p(y_n | x_n) under the two summaries of a DGP's predictive.
type LogDensities struct {
	// Mixture is log((1/S) Σ_s p(y_n | μ_s, v_s)): the DGP's own predictive density, the number Salimbeni &
	// Deisenroth and Havasi et al. report.
	Mixture []float64
	// MomentMatched is log p(y_n) under the likelihood applied to the moment-matched Gaussian of the latent
	// mixture (the Prediction's FMean and FVar): a Gaussian summary, never higher on average for multimodal
	// predictives.
	MomentMatched []float64
}

// LogDensity returns the test log densities of y [N,P] at x under the S-sample mixture and its moment-matched
// Gaussian (Predict with o, then Score).
func (d *DGP) LogDensity(x, y *mat.Dense, o gp.PredictOptions) (*LogDensities, error) {
	p, err := d.Predict(x, o)
	if err != nil {
		return nil, err
	}
	return d.Score(p, y)
}

// Score returns the log densities of y [N,P] under the predictive mixture p (Predict's, made at the inputs of
// y's rows) and under its moment-matched Gaussian. A Monte-Carlo likelihood draws from its own generator.
func (d *DGP) Score(p *gp.Prediction, y *mat.Dense) (*LogDensities, error) {
	if p == nil || len(p.Components) == 0 {
		return nil, fmt.Errorf("%w: Score needs a deep GP's prediction (with its sample components)", ErrConfig)
	}
	n, _ := p.Components[0].FMean.Dims()
	var err error
	if y == nil {
		return nil, fmt.Errorf("dgp: nil targets")
	}
	if ny, _ := y.Dims(); ny != n {
		return nil, &ops.ShapeError{Op: "dgp.LogDensity", Want: fmt.Sprintf("%d target rows", n), Got: fmt.Sprint(ny)}
	}
	yd := mat.DenseCopyOf(y).RawMatrix().Data
	per := make([][]float64, len(p.Components))
	for s := range per {
		c := p.Components[s]
		if per[s], err = d.Likelihood.PredictLogDensity(c.FMean.RawMatrix().Data, c.FVar.RawMatrix().Data, yd, n); err != nil {
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
	mm, mv := p.FMean, p.FVar
	if out.MomentMatched, err = d.Likelihood.PredictLogDensity(mm.RawMatrix().Data, mv.RawMatrix().Data, yd, n); err != nil {
		return nil, err
	}
	return out, nil
}
