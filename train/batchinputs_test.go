package train_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// rowsModel's loss reads the batch inputs only: Σ rows + 10⁶·step (+ 0·p, so that it has a Param).
type rowsModel struct{ p *graph.Param }

func (m rowsModel) Loss(x, _ *graph.Node) *graph.Node {
	g := x.Graph()
	rows, step := g.Input(gp.RowsInput, x.Shape()[0]), g.Input(gp.StepInput)
	return g.Add(g.Add(g.Sum(rows), g.Scale(step, 1e6)), g.Scale(g.Param(m.p), 0))
}

func (m rowsModel) Params() []*graph.Param { return []*graph.Param{m.p} }

// TestTrainFeedsRowsAndStep: Train fills gp.RowsInput with the minibatch's global row indices (the Sampler's,
// from the same seed) and gp.StepInput with the 0-based step; with the whole data set, rows 0..N−1.
func TestTrainFeedsRowsAndStep(t *testing.T) {
	t.Parallel()
	const n, batch, iters = 50, 7, 9
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 1, nil)
	p, err := graph.NewParam("p", []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{batch, n} {
		res, err := train.Train(rowsModel{p}, x, y, rand.New(rand.NewPCG(3, 9)), train.Config{Iters: iters, BatchSize: b})
		if err != nil {
			t.Fatal(err)
		}
		s, err := datasets.NewSampler(n, b, rand.New(rand.NewPCG(3, 9)))
		if err != nil {
			t.Fatal(err)
		}
		idx := make([]int, b)
		for k, got := range res.Losses {
			for i := range idx {
				idx[i] = i
			}
			if b < n {
				idx = s.Next(idx)
			}
			want := 1e6 * float64(k)
			for _, r := range idx {
				want += float64(r)
			}
			if got != want {
				t.Errorf("batch %d, step %d: loss %v, want Σ rows + 10⁶·step = %v", b, k, got, want)
			}
		}
	}
}
