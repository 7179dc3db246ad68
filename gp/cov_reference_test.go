package gp_test

// The generic half of every kernel's covariance-function test: gp/kernel_X_test.go gives its closed form
// (covRef, written out independently of the fused code) and calls checkCov, which compares the fused op
// (ops.CovMatrix, ops.CovDiag; serial and row-parallel paths, gradients blockwise) with it. The finite-difference
// checks of the same functions run in ops over every registered kernel.

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// covRef is a kernel's closed form k(a, b) for one pair of rows, given the hyperparameter values in the order
// of its CovFunc's Hypers().
type covRef func(a, b []float64, h [][]float64) float64

// checkCov runs the reference checks of f against ref.
func checkCov(t *testing.T, f ops.CovFunc, ref covRef) {
	t.Run("golden", func(t *testing.T) { checkCovGolden(t, f, ref) })
	t.Run("diag", func(t *testing.T) { checkCovDiag(t, f, ref) })
	t.Run("large", func(t *testing.T) { checkCovLarge(t, f, ref) })
}

// covReference returns K(x1, x2) [n,m] by the naive double loop over ref.
func covReference(ref covRef, x1, x2 []float64, n, m, d int, h [][]float64) []float64 {
	k := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			k[i*m+j] = ref(x1[i*d:(i+1)*d], x2[j*d:(j+1)*d], h)
		}
	}
	return k
}

// covIndex seeds f's random numbers from its name.
func covIndex(f ops.CovFunc) int {
	h := fnv.New32a()
	h.Write([]byte(f.Name()))
	return int(h.Sum32() % 1000)
}

// covHyperInputs returns random (constrained) hyperparameters of f for d input columns, shaped as f.Hypers() says.
func covHyperInputs(f ops.CovFunc, d int, rng *rand.Rand, _ bool) []gradcheck.Input {
	var h []gradcheck.Input
	for _, hp := range f.Hypers() {
		lo, hi := 0.5, 1.5
		switch hp.Name {
		case "alpha":
			lo, hi = 0.5, 2
		case "period":
			lo, hi = 1, 2
		}
		if hp.Vec {
			h = append(h, gradcheck.Random(hp.Name, rng, lo, hi, d))
		} else {
			h = append(h, gradcheck.Random(hp.Name, rng, lo, hi))
		}
	}
	return h
}

// covR2 returns Σ_q ((a_q − b_q)/ℓ_q)².
func covR2(a, b, ell []float64) float64 {
	r2 := 0.0
	for q := range a {
		z := (a[q] - b[q]) / ell[q]
		r2 += z * z
	}
	return r2
}

// checkCovGolden compares CovMatrix with the naive reference to 1e-12 (relative to max(1, |K|)) on random
// inputs, on K(X, X), on inputs with coincident rows, on inputs far from the origin (where the uncentred
// expansion ‖a‖² + ‖b‖² − 2a·b would lose ~6 digits), and on clustered inputs (pairs 1e-4 apart, far from the
// centroid: the expansion cancels, near pairs must be recomputed directly).
func checkCovGolden(t *testing.T, f ops.CovFunc, ref covRef) {
	{
		for _, d := range []int{1, 3} {
			for _, tc := range []struct {
				name    string
				offset  float64
				shared  bool
				cluster bool
			}{{"random", 0, false, false}, {"K(X,X)", 0, true, false}, {"offset=1e3", 1e3, false, false},
				{"clustered", 0, false, true}, {"clustered/K(X,X)", 0, true, true}} {
				t.Run(fmt.Sprintf("%v/D=%d/%s", f, d, tc.name), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(covIndex(f))+31, uint64(d)))
					n, m := 7, 5
					x1 := gradcheck.Random("x1", rng, -2, 2, n, d)
					x2 := gradcheck.Random("x2", rng, -2, 2, m, d)
					if tc.cluster { // all rows but one within 1e-4 of (3, 3, 3), far from the common centroid
						for _, x := range [][]float64{x1.Value, x2.Value} {
							for i := range x {
								x[i] = 3 + 1e-4*x[i]
							}
							for i := 0; i < d; i++ {
								x[i] = -3
							}
						}
					}
					copy(x2.Value[d:2*d], x1.Value[3*d:4*d]) // a coincident pair
					for i := range x1.Value {
						x1.Value[i] += tc.offset
					}
					for i := range x2.Value {
						x2.Value[i] += tc.offset
					}
					if tc.shared {
						x2, m = x1, n
					}
					h := covHyperInputs(f, d, rng, false)
					g := G.NewGraph()
					ns := gradcheck.Leaves(g, append([]gradcheck.Input{x1, x2}, h...))
					b := ns[1]
					if tc.shared {
						b = ns[0]
					}
					k, err := ops.CovMatrix(f, ns[0], b, ns[2:]...)
					if err != nil {
						t.Fatal(err)
					}
					got := gradcheck.Eval(t, g, k)[0]
					want := covReference(ref, x1.Value, x2.Value, n, m, d, covHyperValues(h))
					for i := range want {
						if !covClose(got[i], want[i], 1e-12) {
							t.Errorf("K[%d,%d] = %.17g, reference %.17g (diff %.3g)", i/m, i%m, got[i], want[i], got[i]-want[i])
						}
					}
				})
			}
		}
	}
}

// checkCovDiag checks CovDiag(X) against diag CovMatrix(X, X) and the reference.
func checkCovDiag(t *testing.T, f ops.CovFunc, ref covRef) {
	{
		t.Run(f.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, uint64(covIndex(f))))
			n, d := 9, 3
			x := gradcheck.Random("x", rng, -2, 2, n, d)
			h := covHyperInputs(f, d, rng, false)
			g := G.NewGraph()
			ns := gradcheck.Leaves(g, append([]gradcheck.Input{x}, h...))
			k, err := ops.CovMatrix(f, ns[0], ns[0], ns[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			dg, err := ops.CovDiag(f, ns[0], ns[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			if !dg.Shape().Eq(tensor.Shape{n}) {
				t.Fatalf("CovDiag shape %v, want [%d]", dg.Shape(), n)
			}
			vs := gradcheck.Eval(t, g, k, dg)
			ref := covReference(ref, x.Value, x.Value, n, n, d, covHyperValues(h))
			for i := 0; i < n; i++ {
				if !covClose(vs[1][i], vs[0][i*n+i], 1e-14) || !covClose(vs[1][i], ref[i*n+i], 1e-12) {
					t.Errorf("diag[%d] = %.17g, CovMatrix %.17g, reference %.17g", i, vs[1][i], vs[0][i*n+i], ref[i*n+i])
				}
			}
		})
	}
}

// ----- graph helpers (gradcheck.Leaves and gradcheck.Eval build and run the graphs) -----

func covHyperValues(h []gradcheck.Input) [][]float64 {
	v := make([][]float64, len(h))
	for i, x := range h {
		v[i] = x.Value
	}
	return v
}

func covClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// covGrads evaluates K = CovMatrix(f, x1, x2, h...) and the gradients of Σ w⊙K with respect to x1, x2 and h.
func covGrads(t *testing.T, f ops.CovFunc, in []gradcheck.Input, w []float64) (k []float64, grads [][]float64) {
	t.Helper()
	g := G.NewGraph()
	ns := gradcheck.Leaves(g, in)
	kn, err := ops.CovMatrix(f, ns[0], ns[1], ns[2:]...)
	if err != nil {
		t.Fatal(err)
	}
	wn := gradcheck.Leaves(g, []gradcheck.Input{{Name: "w", Shape: kn.Shape().Clone(), Value: w}})[0]
	loss, err := ops.Dot(wn, kn)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := G.Grad(loss, ns...)
	if err != nil {
		t.Fatal(err)
	}
	vs := gradcheck.Eval(t, g, append(G.Nodes{kn}, gs...)...)
	return vs[0], vs[1:]
}

// checkCovLarge runs the row-parallel paths (N·M above the parallel threshold, several row blocks, coincident
// pairs in different blocks): K against the reference, and every gradient against the sum of the gradients of
// small problems over blocks of x1 rows (each below the threshold, so computed serially; the serial path is
// checked by finite differences above). The loss Σ W⊙K decomposes over rows of x1, so the sums must agree.
func checkCovLarge(t *testing.T, f ops.CovFunc, ref covRef) {
	{
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(61, uint64(covIndex(f))))
			n, m, d, block := 240, 170, 3, 40
			x1 := gradcheck.Random("x1", rng, -1, 1, n, d)
			x2 := gradcheck.Random("x2", rng, -1, 1, m, d)
			for _, r := range []int{0, 60, 110, 169} { // x2[r] = x1[r+20]
				copy(x2.Value[r*d:(r+1)*d], x1.Value[(r+20)*d:(r+21)*d])
			}
			h := covHyperInputs(f, d, rng, false)
			w := gradcheck.Random("w", rng, -1, 1, n, m).Value
			k, grads := covGrads(t, f, append([]gradcheck.Input{x1, x2}, h...), w)
			want := covReference(ref, x1.Value, x2.Value, n, m, d, covHyperValues(h))
			for i := range want {
				if !covClose(k[i], want[i], 1e-12) {
					t.Fatalf("K[%d,%d] = %.17g, reference %.17g", i/m, i%m, k[i], want[i])
				}
			}
			sum := make([][]float64, len(grads))
			for i := range grads {
				sum[i] = make([]float64, len(grads[i]))
			}
			for lo := 0; lo < n; lo += block {
				xb := gradcheck.Input{Name: "x1b", Shape: []int{block, d}, Value: x1.Value[lo*d : (lo+block)*d]}
				_, gb := covGrads(t, f, append([]gradcheck.Input{xb, x2}, h...), w[lo*m:(lo+block)*m])
				copy(sum[0][lo*d:], gb[0])
				for i := 1; i < len(gb); i++ {
					for j, v := range gb[i] {
						sum[i][j] += v
					}
				}
			}
			names := []string{"x1", "x2"}
			names = append(names, ops.CovHyperNames(f)...)
			for i := range grads {
				scale := 0.0
				for _, v := range sum[i] {
					scale = math.Max(scale, math.Abs(v))
				}
				for j, v := range grads[i] {
					if math.Abs(v-sum[i][j]) > 1e-12*math.Max(1, scale) {
						t.Errorf("∂/∂%s[%d] = %.17g, blockwise %.17g", names[i], j, v, sum[i][j])
					}
				}
			}
		})
	}
}
