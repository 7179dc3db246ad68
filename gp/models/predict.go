package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultChunk is the number of test rows per prediction run when PredictOptions.Chunk is zero: memory is
// O(M·Chunk) for a sparse layer.
const DefaultChunk = 1000

// PredictOptions configures prediction. Zero values mean defaults.
type PredictOptions struct {
	Chunk int           // test rows per run (default DefaultChunk)
	Graph graph.Options // jitter policy
}

// chunked evaluates outputs built by build on an input "xs" [chunk,D] over the rows of x, and returns each
// output's rows stacked: out[name] is row-major [N, cols(name)]. fixed names further inputs that build declares
// (with the same names and shapes) and that are set once, such as training data.
func chunked(x *mat.Dense, o PredictOptions, fixed map[string]*mat.Dense, build func(g *graph.Graph, xs *graph.Node) map[string]*graph.Node) (map[string][]float64, map[string]int, error) {
	if x == nil {
		return nil, nil, fmt.Errorf("models: nil inputs")
	}
	n, d := x.Dims()
	if err := ops.CheckFinite("prediction inputs", x.RawMatrix().Data, d); err != nil {
		return nil, nil, err
	}
	chunk := o.Chunk
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	chunk = min(chunk, n)
	g := graph.New(o.Graph)
	outs := build(g, g.Input("xs", chunk, d))
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, nil, fmt.Errorf("models: prediction graph: %w", err)
	}
	defer prog.Close()
	for name, v := range fixed {
		if err := prog.Set(name, mat.DenseCopyOf(v).RawMatrix().Data); err != nil {
			return nil, nil, err
		}
	}
	res := map[string][]float64{}
	cols := map[string]int{}
	for name := range outs {
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
			return nil, nil, fmt.Errorf("models: predicting rows %d..%d: %w", lo, hi, err)
		}
		for name, c := range cols {
			copy(res[name][lo*c:hi*c], prog.Output(name)[:(hi-lo)*c])
		}
	}
	return res, cols, nil
}

// PredictLayer returns the marginal means and variances [N,Dout] of layer l at the rows of x, in chunks.
func PredictLayer(l gp.Layer, x *mat.Dense, o PredictOptions) (mean, variance *mat.Dense, err error) {
	if l == nil {
		return nil, nil, fmt.Errorf("models: nil layer")
	}
	if x != nil {
		if _, d := x.Dims(); d != l.InputDim() {
			return nil, nil, &ops.ShapeError{Op: "models.PredictLayer", Want: fmt.Sprintf("inputs with %d columns", l.InputDim()), Got: fmt.Sprint(d)}
		}
	}
	res, _, err := chunked(x, o, nil, func(g *graph.Graph, xs *graph.Node) map[string]*graph.Node {
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

// SampleLayer draws s joint samples of f at the rows of x [N,Din] from q(f): for each output, the mean plus
// L·ε with L the Cholesky factor of the full predictive covariance (jitter-retried). It returns s matrices
// [N,Dout]. Memory is O(N²): use it for modest test sets.
func SampleLayer(l gp.Layer, x *mat.Dense, s int, rng *rand.Rand, o graph.Options) ([]*mat.Dense, error) {
	if l == nil || x == nil || rng == nil || s <= 0 {
		return nil, fmt.Errorf("models: SampleLayer needs a layer, inputs, an rng and s > 0")
	}
	n, d := x.Dims()
	if d != l.InputDim() {
		return nil, &ops.ShapeError{Op: "models.SampleLayer", Want: fmt.Sprintf("inputs with %d columns", l.InputDim()), Got: fmt.Sprint(d)}
	}
	if err := ops.CheckFinite("sample inputs", x.RawMatrix().Data, d); err != nil {
		return nil, err
	}
	g := graph.New(o)
	xs := g.Input("xs", n, d)
	mean, covs := l.PredictFull(xs)
	outs := map[string]*graph.Node{"mean": mean}
	for p, c := range covs {
		outs[fmt.Sprint("chol", p)] = g.Cholesky(c)
	}
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, err
	}
	defer prog.Close()
	copy(prog.InputData("xs"), x.RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("models: SampleLayer: %w", err)
	}
	dout := l.OutputDim()
	mu := prog.Output("mean")
	out := make([]*mat.Dense, s)
	eps := make([]float64, n)
	for k := range out {
		f := mat.NewDense(n, dout, append([]float64(nil), mu...))
		for p := 0; p < dout; p++ {
			lc := prog.Output(fmt.Sprint("chol", p))
			for i := range eps {
				eps[i] = rng.NormFloat64()
			}
			for i := 0; i < n; i++ {
				acc := 0.0
				for j := 0; j <= i; j++ {
					acc += lc[i*n+j] * eps[j]
				}
				f.Set(i, p, f.At(i, p)+acc)
			}
		}
		out[k] = f
	}
	return out, nil
}
