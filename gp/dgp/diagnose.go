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

// LayerDiagnostics makes one layer's contribution to a deep GP visible (issue 39): what its variational posterior
// costs (KL), its hyperparameters, and what it does to the samples it propagates, measured at a set of inputs
// with S samples per row pushed through the layers below by the propagation of eq. 7 (as in training).
type LayerDiagnostics struct {
	// Layer is the layer's index (0 = input layer); Inner is false for the last layer.
	Layer int  `json:"layer"`
	Inner bool `json:"inner"`
	// KL is KL[q(u_ℓ) ‖ p(u_ℓ)] in nats (summed over outputs); KLPerPoint is KL/NumData, the share of the ELBO
	// per training point the layer costs.
	KL         float64 `json:"kl"`
	KLPerPoint float64 `json:"kl_per_point"`
	// Hyper holds the layer's hyperparameters by Param name, constrained values: every Param of the layer of at
	// most InputDim numbers that is not a mean function's (the kernel's variances and length-scales, an inner
	// layer's white-noise variance, in the built-in layers).
	Hyper map[string][]float64 `json:"hyper"`
	// NoiseSD is √(mean σ²_ℓ) over rows, samples and outputs: the spread of the noise the layer adds to its
	// samples (f = μ + σ ε). An inner layer that starts at its mean function with this small stays close to it.
	NoiseSD float64 `json:"noise_sd"`
	// ShiftRMS is the root mean square over rows, samples and outputs of μ_ℓ − m_ℓ, the layer's mean less its
	// mean function at its input samples: how far the GP moves the layer away from its mean function (for an
	// inner layer with the identity mean, away from passing its input on). 0 for a layer still at its prior mean.
	ShiftRMS float64 `json:"shift_rms"`
	// OutputSD is the mean over outputs of the standard deviation of the layer's samples across rows and
	// samples: the scale of what the next layer sees.
	OutputSD float64 `json:"output_sd"`
}

// Diagnose returns every layer's diagnostics at the rows of x [N,D], with s samples per row (s ≥ 1) drawn from
// rng through the layers below. It runs one forward graph of s·N rows; callers choose N (a subset of the training
// rows: a few thousand suffice).
func (d *DGP) Diagnose(x *mat.Dense, s int, rng *rand.Rand) ([]LayerDiagnostics, error) {
	if x == nil || s < 1 || rng == nil {
		return nil, fmt.Errorf("%w: Diagnose needs inputs, s ≥ 1 (got %d) and a Rand", ErrConfig, s)
	}
	n, dim := x.Dims()
	if dim != d.InputDim() {
		return nil, &ops.ShapeError{Op: "dgp.Diagnose", Want: fmt.Sprintf("inputs with %d columns", d.InputDim()), Got: fmt.Sprint(dim)}
	}
	if err := ops.CheckFinite("dgp.Diagnose inputs", x.RawMatrix().Data, dim); err != nil {
		return nil, err
	}
	g := graph.New(graph.Options{})
	xs := g.Input("xs", n, dim)
	outs := map[string]*graph.Node{}
	// Layer ℓ's input samples: x tiled for layer 0, then the samples of the layer below.
	inputs := []*graph.Node{tile(xs, s)}
	d.sample(xs, s, StandardNormalNoise(rng), len(d.Layers)-1, func(i int, f *graph.Node) { inputs = append(inputs, f) })
	for i, l := range d.Layers {
		in := inputs[i]
		m, v := l.Predict(in)
		outs[fmt.Sprint("mean", i)], outs[fmt.Sprint("var", i)] = m, v
		outs[fmt.Sprint("kl", i)] = l.KL(g)
		if mf := meanFunction(l); mf != nil {
			outs[fmt.Sprint("shift", i)] = g.Sub(m, mf.Mean(in))
		} else {
			outs[fmt.Sprint("shift", i)] = m
		}
		if i+1 < len(inputs) {
			outs[fmt.Sprint("out", i)] = inputs[i+1]
		}
	}
	prog, err := g.CompileForward(outs)
	if err != nil {
		return nil, fmt.Errorf("dgp: Diagnose graph: %w", err)
	}
	defer prog.Close()
	copy(prog.InputData("xs"), mat.DenseCopyOf(x).RawMatrix().Data)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("dgp: Diagnose: %w", err)
	}
	res := make([]LayerDiagnostics, len(d.Layers))
	for i, l := range d.Layers {
		q := l.OutputDim()
		kl := prog.Output(fmt.Sprint("kl", i))[0]
		r := LayerDiagnostics{Layer: i, Inner: i < len(d.Layers)-1, KL: kl, KLPerPoint: kl / float64(d.NumData),
			Hyper: hyperparameters(l)}
		r.NoiseSD = math.Sqrt(max(meanOf(prog.Output(fmt.Sprint("var", i))), 0))
		r.ShiftRMS = math.Sqrt(meanOf(squares(prog.Output(fmt.Sprint("shift", i)))))
		if r.Inner {
			r.OutputSD = meanColumnSD(prog.Output(fmt.Sprint("out", i)), q)
		} else {
			r.OutputSD = meanColumnSD(prog.Output(fmt.Sprint("mean", i)), q)
		}
		res[i] = r
	}
	return res, nil
}

// meanFunction returns l's prior mean function, or nil for a zero mean or a layer that does not say
// (gp.MeanFunctionLayer).
func meanFunction(l gp.Layer) gp.MeanFunction {
	if m, ok := l.(gp.MeanFunctionLayer); ok {
		return m.MeanFunction()
	}
	return nil
}

// hyperparameters returns the Params of l of at most InputDim numbers that are not its mean function's, by name.
func hyperparameters(l gp.Layer) map[string][]float64 {
	var skip []*graph.Param
	if mf := meanFunction(l); mf != nil {
		skip = mf.Params()
	}
	out := map[string][]float64{}
	for _, p := range l.Params() {
		if p.Size() <= max(l.InputDim(), 1) && !slices.Contains(skip, p) {
			out[p.Name()] = p.Value()
		}
	}
	return out
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func squares(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * x
	}
	return out
}

// meanColumnSD returns the mean over the q columns of row-major v of each column's standard deviation.
func meanColumnSD(v []float64, q int) float64 {
	rows := len(v) / q
	if rows < 2 {
		return 0
	}
	total := 0.0
	for j := 0; j < q; j++ {
		mean := 0.0
		for r := 0; r < rows; r++ {
			mean += v[r*q+j]
		}
		mean /= float64(rows)
		ss := 0.0
		for r := 0; r < rows; r++ {
			d := v[r*q+j] - mean
			ss += d * d
		}
		total += math.Sqrt(ss / float64(rows-1))
	}
	return total / float64(q)
}
