package models

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultChunk is the number of test rows per prediction run when gp.PredictOptions.ChunkRows is zero: memory
// is O(M·Chunk) for a sparse layer.
const DefaultChunk = 1000

// chunked evaluates outputs built by build on an input "xs" [chunk,D] over the rows of x, and returns each
// output's rows stacked: out[name] is row-major [N, cols(name)]. fixed names further inputs that build declares
// (with the same names and shapes) and that are set once, such as training data.
func chunked(name string, x *mat.Dense, o gp.PredictOptions, fixed map[string]*mat.Dense, build func(g *graph.Graph, xs *graph.Node) map[string]*graph.Node) (map[string][]float64, map[string]int, error) {
	if x == nil {
		return nil, nil, fmt.Errorf("models: nil inputs")
	}
	n, d := x.Dims()
	if err := ops.CheckFinite("prediction inputs", mat.DenseCopyOf(x).RawMatrix().Data, d); err != nil {
		return nil, nil, err
	}
	chunk := o.ChunkRows
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	chunk = min(chunk, n)
	// key names what the program bakes in: the caller's graph and the shapes (fixed inputs included).
	key := fmt.Sprintf("models.%s/%d,%d", name, chunk, d)
	for _, k := range slices.Sorted(maps.Keys(fixed)) {
		r, c := fixed[k].Dims()
		key += fmt.Sprintf("/%s:%d,%d", k, r, c)
	}
	compile := func() (*graph.Program, any, error) {
		g := graph.New(o.Graph)
		prog, err := g.CompileForward(build(g, g.Input("xs", chunk, d)))
		if err != nil {
			return nil, nil, fmt.Errorf("models: prediction graph: %w", err)
		}
		for name, v := range fixed {
			if err := prog.Set(name, mat.DenseCopyOf(v).RawMatrix().Data); err != nil {
				prog.Close()
				return nil, nil, err
			}
		}
		return prog, nil, nil
	}
	res := map[string][]float64{}
	cols := map[string]int{}
	err := o.Programs.Use(key, compile, func(prog *graph.Program, _ any) error {
		for _, name := range prog.OutputNames() {
			s := prog.OutputShape(name)
			c := 1
			if len(s) == 2 {
				c = s[1]
			}
			cols[name] = c
			res[name] = make([]float64, n*c)
		}
		buf := prog.InputData("xs")
		for lo := 0; lo < n; lo += chunk {
			hi := min(lo+chunk, n)
			clear(buf)
			for i := lo; i < hi; i++ {
				copy(buf[(i-lo)*d:], x.RawRowView(i))
			}
			if err := prog.Run(); err != nil {
				return fmt.Errorf("models: predicting rows %d..%d: %w", lo, hi, err)
			}
			for name, c := range cols {
				copy(res[name][lo*c:hi*c], prog.Output(name)[:(hi-lo)*c])
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return res, cols, nil
}

// PredictLayer returns the marginal means and variances [N,Dout] of layer l at the rows of x, in chunks.
func PredictLayer(l gp.Layer, x *mat.Dense, o gp.PredictOptions) (mean, variance *mat.Dense, err error) {
	if l == nil {
		return nil, nil, fmt.Errorf("models: nil layer")
	}
	if x != nil {
		if _, d := x.Dims(); d != l.InputDim() {
			return nil, nil, &ops.ShapeError{Op: "models.PredictLayer", Want: fmt.Sprintf("inputs with %d columns", l.InputDim()), Got: fmt.Sprint(d)}
		}
	}
	res, _, err := chunked("PredictLayer", x, o, nil, func(g *graph.Graph, xs *graph.Node) map[string]*graph.Node {
		m, v := l.Predict(xs)
		return map[string]*graph.Node{"mean": m, "var": v}
	})
	if err != nil {
		return nil, nil, err
	}
	n, _ := x.Dims()
	mean = mat.NewDense(n, l.OutputDim(), res["mean"])
	variance = mat.NewDense(n, l.OutputDim(), res["var"])
	for i, v := range variance.RawMatrix().Data {
		variance.RawMatrix().Data[i] = math.Max(v, 0) // round-off can make a tiny variance negative
	}
	return mean, variance, nil
}

// predictFull returns the means [N,Dout] of layer l at the rows of x and the full covariance [N,N] of each
// output, in one run (memory O(N²)).
func predictFull(l gp.Layer, x *mat.Dense, o graph.Options) (*mat.Dense, []*mat.SymDense, error) {
	n, d := x.Dims()
	g := graph.New(o)
	xs := g.Input("xs", n, d)
	mean, covs := l.PredictFull(xs)
	outs := map[string]*graph.Node{"mean": mean}
	for p, c := range covs {
		outs[fmt.Sprint("cov", p)] = c
	}
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, nil, fmt.Errorf("models: full-covariance prediction graph: %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("xs"), mat.DenseCopyOf(x).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, nil, fmt.Errorf("models: full-covariance prediction: %w", err)
	}
	out := make([]*mat.SymDense, l.OutputDim())
	for p := range out {
		out[p] = gp.SymFromRowMajor(prog.Output(fmt.Sprint("cov", p)), n)
	}
	return mat.NewDense(n, l.OutputDim(), append([]float64(nil), prog.Output("mean")...)), out, nil
}

// predictLayerModel is Predict of the single-layer models (SVGP, ADVGP through it): the layer's marginals, the
// likelihood's predictive, and on request the full covariances and joint draws.
func predictLayerModel(op string, l gp.Layer, lik gp.Likelihood, x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if l == nil || lik == nil {
		return nil, fmt.Errorf("models: %s: incomplete model (nil layer or likelihood)", op)
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs(op, x, l.InputDim()); err != nil {
		return nil, err
	}
	rng := o.Rng()
	lik, err := gp.LikelihoodWithRand(lik, rng)
	if err != nil {
		return nil, err
	}
	fm, fv, err := PredictLayer(l, x, o)
	if err != nil {
		return nil, err
	}
	out := &gp.Prediction{FMean: fm, FVar: fv}
	if out.YMean, out.YVar, out.Probs, err = gp.LikelihoodPredictive(lik, fm, fv); err != nil {
		return nil, err
	}
	if o.OutputCov {
		if out.OutputCov, err = predictOutputCov(l, x, fv, o); err != nil {
			return nil, err
		}
	}
	if !o.Full && o.Draws == 0 {
		return out, nil
	}
	corr, correlated := l.(gp.CorrelatedLayer)
	var covs []*mat.SymDense
	if o.Full || !correlated {
		if _, covs, err = predictFull(l, x, o.Graph); err != nil {
			return nil, err
		}
	}
	if o.Full {
		out.FCov = covs
	}
	if o.Draws > 0 {
		if correlated { // joint across the outputs too: through the layer's latents
			out.Draws, err = drawCorrelated(corr, x, o.Draws, rng, o.Graph)
		} else {
			out.Draws, err = gp.DrawJoint(fm, covs, o.Draws, rng, o.Graph.Jitter)
		}
		if err != nil {
			return nil, fmt.Errorf("models: %s: %w", op, err)
		}
	}
	return out, nil
}

// predictOutputCov returns the covariance between the outputs of layer l at each row of x (fv [N,Dout] its
// marginal variances): a gp.CorrelatedLayer's PredictOutputCov in chunks, with the diagonal set to fv (the same
// numbers, bit for bit), or diag(fv) for independent outputs.
func predictOutputCov(l gp.Layer, x, fv *mat.Dense, o gp.PredictOptions) ([]*mat.SymDense, error) {
	c, ok := l.(gp.CorrelatedLayer)
	if !ok {
		return gp.DiagonalOutputCov(fv), nil
	}
	res, _, err := chunked("PredictOutputCov", x, o, nil, func(g *graph.Graph, xs *graph.Node) map[string]*graph.Node {
		_, cov := c.PredictOutputCov(xs)
		return map[string]*graph.Node{"cov": cov}
	})
	if err != nil {
		return nil, err
	}
	n, p := fv.Dims()
	out := gp.OutputCovFromRows(res["cov"], n, p)
	for i, s := range out {
		for j := 0; j < p; j++ {
			s.SetSym(j, j, fv.At(i, j))
		}
	}
	return out, nil
}

// drawCorrelated returns s joint draws [N,Dout] of a correlated layer's outputs at the rows of x (SampleJoint),
// each from NoiseDim standard normal numbers per row drawn from rng, row by row.
func drawCorrelated(l gp.CorrelatedLayer, x *mat.Dense, s int, rng *rand.Rand, o graph.Options) ([]*mat.Dense, error) {
	n, d := x.Dims()
	k := l.NoiseDim()
	g := graph.New(o)
	f := l.SampleJoint(g.Input("xs", n, d), g.Input("eps", n, k))
	prog, err := g.CompileForward(map[string]*graph.Node{"f": f})
	if err != nil {
		return nil, fmt.Errorf("models: joint sampling graph: %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("xs"), mat.DenseCopyOf(x).RawMatrix().Data)
	eps := prog.InputData("eps")
	out := make([]*mat.Dense, s)
	for j := range out {
		for i := range eps {
			eps[i] = rng.NormFloat64()
		}
		if err := prog.Run(); err != nil {
			return nil, fmt.Errorf("models: joint draws: %w", err)
		}
		out[j] = mat.NewDense(n, l.OutputDim(), append([]float64(nil), prog.Output("f")...))
	}
	return out, nil
}
