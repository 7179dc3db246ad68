package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// TestDgemmt checks Dgemmt against gonum's Dgemm on the same triangle: every triangle and transpose (ConjTrans
// included), every size 0…33 and two larger, depths 0, 1, 7, 17, 257 and 300 (the last two across two kc
// blocks), with the special α and β in turn (NaN in C when β = 0 must be overwritten in the triangle, NaN in A and
// B when α = 0 must not be read), and every pair of them at a few shapes (without ConjTrans, which runs Trans's
// code). The other triangle and the padding must keep their bits.
func TestDgemmt(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		sizes, ks := append(upTo33(), 97, 203), []int{0, 1, 7, 17, 257, 300}
		if testing.Short() {
			sizes, ks = append(upTo33(), 97), []int{0, 1, 17, 257}
		}
		abs := append(specialPairs(), [2]float64{0.7, -0.3}, [2]float64{0, 0.5})
		i := 0
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range transposes {
				for _, tB := range transposes {
					for _, n := range sizes {
						for _, k := range ks {
							if n > 97 && (k == 17 || k == 257) {
								continue // n = 203 at depths 0, 1, 7 and 300 only (time)
							}
							ab := abs[i%len(abs)]
							i++
							checkGemmt(t, impl, rng, ul, tA, tB, n, k, ab[0], ab[1])
						}
					}
					if tA == blas.ConjTrans || tB == blas.ConjTrans {
						continue // Trans's code
					}
					// Every α and β at a few shapes.
					for _, s := range [][2]int{{0, 3}, {1, 1}, {13, 0}, {17, 9}, {33, 300}, {97, 7}} {
						for _, ab := range abs {
							checkGemmt(t, impl, rng, ul, tA, tB, s[0], s[1], ab[0], ab[1])
						}
					}
				}
			}
		}
	})
}

// checkGemmt compares Dgemmt with the triangle of gonum's Dgemm (on finite copies), with NaN in C when β = 0 and
// in A and B when α = 0: no NaN in the triangle, the other triangle and the padding unchanged.
func checkGemmt(t *testing.T, impl Implementation, rng *rand.Rand, ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha, beta float64) {
	t.Helper()
	ar, ac, br, bc := storedDims(tA, tB, n, n, k)
	lda, ldb, ldc := max(ac, 1)+3, max(bc, 1)+1, max(n, 1)+2
	a, b, c := operand(rng, ar, ac, lda), operand(rng, br, bc, ldb), operand(rng, n, n, ldc)
	full := append([]float64(nil), c...)
	ref.Dgemm(tA, tB, n, n, k, alpha, a, lda, b, ldb, beta, full, ldc)
	poison(alpha, beta, a, ar, ac, lda, b, br, bc, ldb, c, n, n, ldc)
	orig := append([]float64(nil), c...)
	want := append([]float64(nil), c...) // the triangle from the full product, the rest as it was
	inTri := func(i, j int) bool { return ul == blas.Lower && j <= i || ul == blas.Upper && j >= i }
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if inTri(i, j) {
				want[i*ldc+j] = full[i*ldc+j]
			}
		}
	}
	impl.Dgemmt(ul, tA, tB, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	what := fmt.Sprintf("Dgemmt(%c,%c,%c) n=%d k=%d α=%v β=%v", ul, tA, tB, n, k, alpha, beta)
	untouchedTriangle(t, what, c, orig, n, ldc, ul)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if inTri(i, j) && c[i*ldc+j] != c[i*ldc+j] {
				t.Fatalf("%s: entry (%d,%d) is NaN", what, i, j)
			}
		}
	}
	closeTo(t, what, c, want, n, n, ldc, 1e-13*float64(k+1))
}

// Dgemmt computes each entry of its triangle with the same bits as Dgemm.
func TestDgemmtMatchesDgemmBitwise(t *testing.T) {
	var impl Implementation
	rng := rand.New(rand.NewPCG(4, 4))
	n, k := 211, 517
	a, b := operand(rng, n, k, k), operand(rng, n, k, k)
	c0 := operand(rng, n, n, n)
	g, l := append([]float64(nil), c0...), append([]float64(nil), c0...)
	impl.Dgemm(blas.NoTrans, blas.Trans, n, n, k, 0.9, a, k, b, k, 0.4, g, n)
	impl.Dgemmt(blas.Lower, blas.NoTrans, blas.Trans, n, k, 0.9, a, k, b, k, 0.4, l, n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if g[i*n+j] != l[i*n+j] {
				t.Fatalf("entry (%d,%d): Dgemmt %v, Dgemm %v", i, j, l[i*n+j], g[i*n+j])
			}
		}
	}
}
