package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// spd returns an n×n symmetric positive definite matrix (stride ld, canaries in the padding): B·Bᵀ/n + I.
func spd(rng *rand.Rand, n, ld int) []float64 {
	b := operand(rng, n, n, n)
	a := operand(rng, n, n, ld)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += b[i*n+k] * b[j*n+k]
			}
			a[i*ld+j] = s / float64(n)
			if i == j {
				a[i*ld+j]++
			}
		}
	}
	return a
}

// potrfSizes are every size 0…33 and sizes straddling the recursion's leaf (32), its panel (12) and its halves.
func potrfSizes() []int {
	return append(upTo33(), 34, 35, 36, 37, 47, 48, 49, 63, 64, 65, 66, 67, 97, 130, 257, 300)
}

func TestDpotrf(t *testing.T) {
	var im LAPACK
	var gl lapackgonum.Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 11))
		for i, n := range potrfSizes() {
			for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
				ld := n + []int{0, 1, 5}[i%3]
				if n == 0 {
					ld = 3
				}
				a := spd(rng, n, ld)
				// The triangle not referenced holds NaN: it must be neither read nor written.
				for r := 0; r < n; r++ {
					for c := 0; c < n; c++ {
						if ul == blas.Lower && c > r || ul == blas.Upper && c < r {
							a[r*ld+c] = math.NaN()
						}
					}
				}
				orig := append([]float64(nil), a...)
				want := append([]float64(nil), a...)
				ok1, ok2 := im.Dpotrf(ul, n, a, ld), gl.Dpotrf(ul, n, want, ld)
				if !ok1 || !ok2 {
					t.Fatalf("Dpotrf(%c) n=%d: ok %v, reference %v", ul, n, ok1, ok2)
				}
				what := fmt.Sprintf("Dpotrf(%c) n=%d ld=%d", ul, n, ld)
				untouchedTriangle(t, what, a, orig, n, ld, ul)
				closeTo(t, what, a, want, n, n, ld, 1e-12)
			}
		}
		// n = 0 with a leading dimension beyond it: true, nothing touched.
		a := []float64{canary, canary}
		if !im.Dpotrf(blas.Lower, 0, a, 2) || !im.Dpotrf(blas.Lower, 0, nil, 5) || a[0] != canary || a[1] != canary {
			t.Errorf("n=0: not a no-op returning true")
		}
	})
}

// firstBadPivot returns the first j whose diagonal entry is not positive (or NaN), n if none: where a failed
// Cholesky factorisation stopped (LAPACK's info − 1), both ours and gonum's leaving the failed pivot there and
// the positive square roots before it.
func firstBadPivot(a []float64, n, ld int) int {
	for j := 0; j < n; j++ {
		if !(a[j*ld+j] > 0) {
			return j
		}
	}
	return n
}

// A matrix whose leading minors are positive definite up to order j and not at order j + 1 (and NaN at (j, j) or
// in row j) is reported not positive definite, as gonum reports it, stopped at the same minor with the same
// factor before it and the same failed pivot; the padding is not written.
func TestDpotrfNotPositiveDefinite(t *testing.T) {
	var im LAPACK
	var gl lapackgonum.Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(14, 15))
		sizes := []int{1, 2, 5, 13, 33, 40, 97, 150}
		if testing.Short() {
			sizes = []int{5, 40, 97}
		}
		for _, n := range sizes {
			ld := n + 2
			base := spd(rng, n, ld)
			l := append([]float64(nil), base...)
			if !gl.Dpotrf(blas.Lower, n, l, ld) {
				t.Fatal("spd is not positive definite")
			}
			for _, j := range []int{0, 1, 11, 12, 13, 23, 24, 31, 32, 33, 35, 36, 47, 48, 49, 96, 100, n - 1} {
				if j >= n {
					continue
				}
				for _, kind := range []string{"negative pivot", "NaN pivot", "NaN in row"} {
					a := append([]float64(nil), base...)
					switch kind {
					case "negative pivot": // A[j][j] − ‖L[j,:j]‖² = −pivot/2
						a[j*ld+j] -= 1.5 * l[j*ld+j] * l[j*ld+j]
					case "NaN pivot":
						a[j*ld+j] = math.NaN()
					case "NaN in row":
						if j == 0 {
							continue
						}
						a[j*ld+rng.IntN(j)] = math.NaN()
					}
					want := append([]float64(nil), a...)
					what := fmt.Sprintf("Dpotrf(L) n=%d, %s at %d", n, kind, j)
					ok1, ok2 := im.Dpotrf(blas.Lower, n, a, ld), gl.Dpotrf(blas.Lower, n, want, ld)
					if ok1 || ok2 {
						t.Fatalf("%s: ok %v, reference %v", what, ok1, ok2)
					}
					if got, ref := firstBadPivot(a, n, ld), firstBadPivot(want, n, ld); got != j || ref != j {
						t.Fatalf("%s: stopped at minor %d, reference at %d", what, got, ref)
					}
					// The factor of the leading minor of order j and row j up to the failed pivot.
					for r := 0; r <= j; r++ {
						for c := 0; c <= r; c++ {
							g, w := a[r*ld+c], want[r*ld+c]
							if r == j && c < j && kind == "NaN in row" {
								continue // NaN from the NaN entry on
							}
							if math.IsNaN(w) && math.IsNaN(g) {
								continue
							}
							if !(math.Abs(g-w) <= 1e-12*math.Max(1, math.Abs(w))) {
								t.Fatalf("%s: entry (%d,%d) = %v, reference %v", what, r, c, g, w)
							}
						}
					}
					for i := range a { // the padding
						if i%ld >= n && math.Float64bits(a[i]) != math.Float64bits(canary) {
							t.Fatalf("%s: padding entry %d changed: %v", what, i, a[i])
						}
					}
				}
			}
		}
		// All NaN: stops at the first pivot.
		a := make([]float64, 16)
		for i := range a {
			a[i] = math.NaN()
		}
		if im.Dpotrf(blas.Lower, 4, a, 4) || firstBadPivot(a, 4, 4) != 0 {
			t.Errorf("a NaN matrix factorised")
		}
	})
}
