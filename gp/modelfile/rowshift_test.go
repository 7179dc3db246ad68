package modelfile_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"gonum.org/v1/gonum/mat"
)

// TestPredictRowShiftInvariant: at a fixed chunk size, a row's prediction through gp.Predictor is a function of
// that row alone, bit for bit — the same whatever its neighbours in the chunk and wherever it sits among them
// (the property TestPredictRowIndependentOfBatch relies on, checked here on the models' own chunked prediction).
// Every golden family but the deep GPs (their propagation noise is drawn per position); for SVGP_softmax only f's
// marginals (its y's come from Monte-Carlo draws). 256 random rows, then the same rows moved cyclically by 1, 5,
// 13 and 63 positions, at ChunkRows 16, 64 and 256 (the last chunk padded with zero rows). The cause this pins:
// the covariance ops centred their inputs on the mean of both operands' rows, so each K(Z, X) depended on every
// row of the chunk; they centre on x1's rows alone (ops.CovCentred).
func TestPredictRowShiftInvariant(t *testing.T) {
	const n = 256
	for name, f := range goldenFiles(t) {
		if strings.HasPrefix(name, "DGP") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := f.Model.(gp.Predictor)
			x := randomRows(n, m.InputDim(), 17)
			parts := func(p *gp.Prediction) []*mat.Dense {
				if name == "SVGP_softmax" {
					return []*mat.Dense{p.FMean, p.FVar}
				}
				return []*mat.Dense{p.FMean, p.FVar, p.YMean, p.YVar, p.Probs}
			}
			for _, chunk := range []int{16, 64, 256} {
				o := gp.PredictOptions{ChunkRows: chunk}
				base, err := m.Predict(x, o)
				if err != nil {
					t.Fatal(err)
				}
				want := parts(base)
				for _, s := range []int{1, 5, 13, 63} {
					xs := mat.NewDense(n, m.InputDim(), nil)
					for i := 0; i < n; i++ {
						xs.SetRow((i+s)%n, x.RawRowView(i))
					}
					p, err := m.Predict(xs, o)
					if err != nil {
						t.Fatal(err)
					}
					for k, g := range parts(p) {
						w := want[k]
						if w == nil || g == nil {
							if (w == nil) != (g == nil) {
								t.Fatalf("part %d present in one prediction only", k)
							}
							continue
						}
						_, c := w.Dims()
						for i := 0; i < n; i++ {
							for j := 0; j < c; j++ {
								if a, b := w.At(i, j), g.At((i+s)%n, j); math.Float64bits(a) != math.Float64bits(b) {
									t.Fatalf("ChunkRows %d, rows moved by %d: part %d of row %d column %d = %v (%#x), %v (%#x) unmoved",
										chunk, s, k, i, j, b, math.Float64bits(b), a, math.Float64bits(a))
								}
							}
						}
					}
				}
			}
		})
	}
}
