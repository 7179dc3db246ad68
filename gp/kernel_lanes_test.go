package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// Every built-in kernel (and the sum and product combinators): column j of K(Z, X) and entry j of KDiag(X) are
// functions of row j of X alone (and of Z and the hyperparameters), bit for bit — the same whatever X's other
// rows are and wherever row j sits. Prediction computes K(Z, X*) and K(X_train, X*) on chunks of test rows, and
// a row's prediction must not depend on its chunk. (The covariance ops centre their inputs on Z's rows only:
// centred on both operands' rows, every entry depended on the whole chunk.)
func TestKernelColumnsIndependentOfOtherRows(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		for name, k := range kernels(t, d) {
			for _, s := range [][2]int{{6, 16}, {30, 64}, {13, 257}} {
				m, c := s[0], s[1]
				t.Run(fmt.Sprintf("%s/D=%d/M=%d/C=%d", name, d, m, c), func(t *testing.T) {
					g := graph.New(graph.Options{})
					z, x := g.Input("z", m, d), g.Input("x", c, d)
					prog, err := g.CompileForward(map[string]*graph.Node{"kzx": k.K(z, x), "kd": k.KDiag(x)})
					if err != nil {
						t.Fatal(err)
					}
					defer prog.Close()
					rng := rand.New(rand.NewPCG(uint64(d), uint64(m)))
					zv, xv := make([]float64, m*d), make([]float64, c*d)
					for i := range zv {
						zv[i] = 3 + rng.NormFloat64() // off-centre: a centring on x's rows would matter
					}
					for i := range xv {
						xv[i] = 3 + 2*rng.NormFloat64()
					}
					for _, cat := range gp.CategoricalInputs(k) { // category indices in a task column
						for _, v := range [][]float64{zv, xv} {
							for i := cat.Column; i < len(v); i += d {
								v[i] = float64(rng.IntN(cat.Levels))
							}
						}
					}
					copy(prog.InputData("z"), zv)
					run := func(shift int) (kzx, kd []float64) {
						buf := prog.InputData("x")
						for i := 0; i < c; i++ {
							copy(buf[((i+shift)%c)*d:], xv[i*d:(i+1)*d])
						}
						if err := prog.Run(); err != nil {
							t.Fatal(err)
						}
						return append([]float64(nil), prog.Output("kzx")...), append([]float64(nil), prog.Output("kd")...)
					}
					wk, wd := run(0)
					for _, shift := range []int{1, 5, 13} {
						gk, gd := run(shift)
						for j := 0; j < c; j++ {
							js := (j + shift) % c
							if math.Float64bits(gd[js]) != math.Float64bits(wd[j]) {
								t.Fatalf("shift %d: KDiag of row %d = %v, %v unshifted", shift, j, gd[js], wd[j])
							}
							for i := 0; i < m; i++ {
								if a, b := gk[i*c+js], wk[i*c+j]; math.Float64bits(a) != math.Float64bits(b) {
									t.Fatalf("shift %d: K(Z,X)[%d,%d] = %v (%#x), %v (%#x) unshifted", shift, i, j, a, math.Float64bits(a), b, math.Float64bits(b))
								}
							}
						}
					}
				})
			}
		}
	}
}
