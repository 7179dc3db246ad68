package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// Dgemmt at every size 0…33 (with a few depths, one across two kc blocks), every triangle and transpose
// (ConjTrans included), and every combination of the special α and β: NaN in C when β = 0 must be overwritten
// in the triangle (and kept outside it), NaN in A and B when α = 0 must not be read. The reference is gonum's
// Dgemm on finite copies (TestDgemmt in gemmt_test.go covers larger sizes).
func TestDgemmtEdges(t *testing.T) {
	var impl Implementation
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(41, 42))
		var abs [][2]float64
		for _, a := range alphas {
			for _, b := range betas {
				abs = append(abs, [2]float64{a, b})
			}
		}
		i := 0
		for _, ul := range []blas.Uplo{blas.Lower, blas.Upper} {
			for _, tA := range transposes {
				for _, tB := range transposes {
					for _, n := range upTo33() {
						for _, k := range []int{0, 1, 17, 257} {
							ab := abs[i%len(abs)]
							i++
							checkGemmtNaN(t, impl, rng, ul, tA, tB, n, k, ab[0], ab[1])
						}
					}
				}
			}
		}
	})
}

func checkGemmtNaN(t *testing.T, impl Implementation, rng *rand.Rand, ul blas.Uplo, tA, tB blas.Transpose, n, k int, alpha, beta float64) {
	t.Helper()
	ar, ac := n, k
	if tA != blas.NoTrans {
		ar, ac = k, n
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	lda, ldb, ldc := max(ac, 1)+3, max(bc, 1)+1, max(n, 1)+2
	a, b, c := operand(rng, ar, ac, lda), operand(rng, br, bc, ldb), operand(rng, n, n, ldc)
	full := append([]float64(nil), c...)
	ref.Dgemm(tA, tB, n, n, k, alpha, a, lda, b, ldb, beta, full, ldc)
	if alpha == 0 {
		fillNaN(a, ar, ac, lda)
		fillNaN(b, br, bc, ldb)
	}
	if beta == 0 {
		fillNaN(c, n, n, ldc)
	}
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
