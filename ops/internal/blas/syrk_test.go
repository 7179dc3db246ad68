package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

func TestDsyrk(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 9))
		// Every size 0…33 and around the diagonal block (syrkBlock = 96), whose edges split the triangle.
		sizes := append(upTo33(), 95, 96, 97, 193, 200)
		ks := []int{0, 1, 7, 33, 257}
		if testing.Short() {
			sizes = append(upTo33(), 97, 193)
		}
		abs := specialPairs()
		i := 0
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range transposes {
				for _, n := range sizes {
					for _, k := range ks {
						ab := abs[i%len(abs)]
						i++
						checkSyrk(t, impl, rng, ul, tA, n, k, ab[0], ab[1])
					}
				}
				// Every α and β at a few shapes.
				for _, s := range [][2]int{{0, 3}, {1, 1}, {13, 0}, {17, 9}, {33, 300}, {97, 65}} {
					for _, ab := range abs {
						checkSyrk(t, impl, rng, ul, tA, s[0], s[1], ab[0], ab[1])
					}
				}
			}
		}
	})
}

// checkSyrk compares Dsyrk with gonum's: C is NaN when β = 0 (it must be overwritten) and A is NaN when α = 0
// (it must not be read); the triangle not referenced (and the padding) must keep its bits.
func checkSyrk(t *testing.T, impl Implementation, rng *rand.Rand, ul blas.Uplo, tA blas.Transpose, n, k int, alpha, beta float64) {
	t.Helper()
	row, col := n, k
	if tA != blas.NoTrans {
		row, col = k, n
	}
	lda, ldc := max(col, 1)+2, max(n, 1)+3
	a := operand(rng, row, col, lda)
	c := operand(rng, n, n, ldc)
	if alpha == 0 {
		fillNaN(a, row, col, lda)
	}
	fin := append([]float64(nil), c...)
	if beta == 0 {
		fillNaN(c, n, n, ldc)
	}
	orig := append([]float64(nil), c...)
	want := append([]float64(nil), c...)
	if beta == 0 {
		// gonum's Dsyrk(Lower, Trans) scales C by β = 0 instead of overwriting it, keeping NaN (gonum v0.17.0,
		// level3float64.go); reference BLAS overwrites, and so do we: the reference gets C's triangle finite.
		for i := 0; i < n; i++ {
			lo, hi := 0, i+1
			if ul == blas.Upper {
				lo, hi = i, n
			}
			copy(want[i*ldc+lo:i*ldc+hi], fin[i*ldc+lo:i*ldc+hi])
		}
	}
	impl.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
	ref.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, want, ldc)
	what := fmt.Sprintf("Dsyrk(%c,%c) n=%d k=%d α=%v β=%v", ul, tA, n, k, alpha, beta)
	untouchedTriangle(t, what, c, orig, n, ldc, ul)
	for i := 0; i < n; i++ { // no NaN in the triangle
		lo, hi := 0, i+1
		if ul == blas.Upper {
			lo, hi = i, n
		}
		for j := lo; j < hi; j++ {
			if math.IsNaN(c[i*ldc+j]) {
				t.Fatalf("%s: entry (%d,%d) is NaN", what, i, j)
			}
		}
	}
	closeTo(t, what, c, want, n, n, ldc, 1e-13*float64(k+1))
}

// untouchedTriangle fails when the strict triangle of the n×n matrix c (stride ld) opposite to ul differs in its
// bits from orig's.
func untouchedTriangle(t *testing.T, what string, c, orig []float64, n, ld int, ul blas.Uplo) {
	t.Helper()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if ul == blas.Lower && j > i || ul == blas.Upper && j < i {
				if math.Float64bits(c[i*ld+j]) != math.Float64bits(orig[i*ld+j]) {
					t.Fatalf("%s: entry (%d,%d) outside the triangle changed: %v, was %v", what, i, j, c[i*ld+j], orig[i*ld+j])
				}
			}
		}
	}
}
