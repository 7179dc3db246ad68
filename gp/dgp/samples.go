package dgp

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// LayerSamples draws s joint samples of every layer's output at the rows of x [N,D] by the propagation of
// eq. 7 (each layer sampled from its marginals at the previous layer's sample, the last layer too) and returns
// them as out[ℓ][k] [N, D_ℓ]: sample k of layer ℓ. As in training, each row is drawn from the marginals given
// the previous layer's sample of that row (no joint draw across rows), so a sample plotted against x is jagged
// where a layer is uncertain. It evaluates all rows in one run (meant for plotting toys, e.g.
// plots.LayerSamples); noise nil draws from rng (which must then be set).
func (d *DGP) LayerSamples(x *mat.Dense, s int, rng *rand.Rand, noise Noise) ([][]*mat.Dense, error) {
	if x == nil || s < 1 {
		return nil, fmt.Errorf("%w: LayerSamples needs inputs and s ≥ 1 (got %d)", ErrConfig, s)
	}
	n, dim := x.Dims()
	if dim != d.InputDim() {
		return nil, &ops.ShapeError{Op: "dgp.LayerSamples", Want: fmt.Sprintf("inputs with %d columns", d.InputDim()), Got: fmt.Sprint(dim)}
	}
	if err := ops.CheckFinite("dgp.LayerSamples inputs", x.RawMatrix().Data, dim); err != nil {
		return nil, err
	}
	if noise == nil {
		if rng == nil {
			return nil, fmt.Errorf("%w: LayerSamples needs a Rand (or a Noise)", ErrConfig)
		}
		noise = StandardNormalNoise(rng)
	}
	g := graph.New(graph.Options{})
	xs := g.Input("xs", n, dim)
	outs := map[string]*graph.Node{}
	d.sample(xs, s, noise, len(d.Layers), func(i int, f *graph.Node) { outs[fmt.Sprint("layer", i)] = f })
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, fmt.Errorf("dgp: LayerSamples graph: %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("xs"), mat.DenseCopyOf(x).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("dgp: LayerSamples: %w", err)
	}
	res := make([][]*mat.Dense, len(d.Layers))
	for i, l := range d.Layers {
		vals := prog.Output(fmt.Sprint("layer", i))
		q := l.OutputDim()
		res[i] = make([]*mat.Dense, s)
		for k := range res[i] { // sample-major rows: sample k of row r is row k·N + r
			res[i][k] = mat.NewDense(n, q, append([]float64(nil), vals[k*n*q:(k+1)*n*q]...))
		}
	}
	return res, nil
}
