package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// fuzzMax bounds the fuzzed sizes, so that every execution is fast.
const fuzzMax = 70

// fuzzScalar maps a fuzzed α or β to a finite value of moderate size (the specials 0, ±1 kept): beyond ±10⁴ or
// below 10⁻⁴ in magnitude, or not finite, it becomes one of 0.5, 0, 1, −1 (chosen by its bits), so that the error
// bounds below hold without overflow or underflow.
func fuzzScalar(x float64) float64 {
	if a := math.Abs(x); a <= 1e4 && (a >= 1e-4 || x == 0) {
		return x
	}
	return []float64{0.5, 0, 1, -1}[math.Float64bits(x)%4]
}

// fuzzKernel forces the micro-kernel chosen by sel and returns a function restoring the previous one.
func fuzzKernel(sel uint8) func() {
	prev := Kernel()
	names := Kernels()
	SetKernel(names[int(sel)%len(names)])
	return func() { SetKernel(prev) }
}

// withinBound fails unless every entry of the r×c matrix got (stride ld) is within bound of want's and the padding
// keeps its bits.
func withinBound(t *testing.T, what string, got, want, bound []float64, r, c, ld int) {
	t.Helper()
	for i := range want {
		if i/ld >= r || i%ld >= c || i >= (r-1)*ld+c {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: padding entry %d changed: %v, want %v", what, i, got[i], want[i])
			}
			continue
		}
		if d := math.Abs(got[i] - want[i]); !(d <= bound[i]) {
			t.Fatalf("%s: entry (%d,%d) = %v, reference %v (diff %.3g, bound %.3g)", what, i/ld, i%ld, got[i], want[i], d, bound[i])
		}
	}
}

func absAll(d []float64) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = math.Abs(v)
	}
	return out
}

// FuzzDgemm compares Dgemm with gonum's over shapes up to fuzzMax, leading dimensions beyond the width (canaries
// in the padding), every transpose, α and β, and each kernel, within the rounding-error bound
// 4(k+2)·u·(|α|·|op(A)|·|op(B)| + |β|·|C|) entrywise. flags: bits 0–1 tA, 2–3 tB (0 NoTrans, 1 Trans, 2 ConjTrans),
// 4–5 the kernel; with β = 0 C starts NaN, with α = 0 A and B are NaN.
func FuzzDgemm(f *testing.F) {
	f.Add(uint8(13), uint8(17), uint8(9), uint8(1), uint8(2), uint8(3), uint8(0), 1.5, 0.5, uint64(1))
	f.Add(uint8(70), uint8(65), uint8(70), uint8(0), uint8(0), uint8(0), uint8(0b010101), -1.0, 0.0, uint64(2))
	f.Add(uint8(12), uint8(16), uint8(33), uint8(4), uint8(0), uint8(1), uint8(0b100110), 0.0, 1.0, uint64(3))
	f.Add(uint8(1), uint8(1), uint8(0), uint8(0), uint8(1), uint8(0), uint8(0b011010), 1.0, -1.0, uint64(4))
	f.Add(uint8(0), uint8(5), uint8(5), uint8(2), uint8(2), uint8(2), uint8(0), 2.0, 0.0, uint64(5))
	f.Add(uint8(37), uint8(6), uint8(70), uint8(3), uint8(1), uint8(4), uint8(0b101001), 0.7, 0.3, uint64(6))
	var impl Implementation
	f.Fuzz(func(t *testing.T, m, n, k, padA, padB, padC, flags uint8, alpha, beta float64, seed uint64) {
		mm, nn, kk := int(m)%(fuzzMax+1), int(n)%(fuzzMax+1), int(k)%(fuzzMax+1)
		tA, tB := transposes[int(flags&3)%3], transposes[int(flags>>2&3)%3]
		defer fuzzKernel(flags >> 4 & 3)()
		alpha, beta = fuzzScalar(alpha), fuzzScalar(beta)
		rng := rand.New(rand.NewPCG(seed, 7))
		ar, ac, br, bc := storedDims(tA, tB, mm, nn, kk)
		lda, ldb, ldc := max(ac, 1)+int(padA%5), max(bc, 1)+int(padB%5), max(nn, 1)+int(padC%5)
		a, b, c := operand(rng, ar, ac, lda), operand(rng, br, bc, ldb), operand(rng, mm, nn, ldc)
		// The bound, from gonum's product of the absolute values; the reference on the finite values.
		bound := absAll(c)
		ref.Dgemm(tA, tB, mm, nn, kk, math.Abs(alpha), absAll(a), lda, absAll(b), ldb, math.Abs(beta), bound, ldc)
		for i := range bound {
			bound[i] *= 4 * float64(kk+2) * 0x1p-53
		}
		want := append([]float64(nil), c...)
		ref.Dgemm(tA, tB, mm, nn, kk, alpha, a, lda, b, ldb, beta, want, ldc)
		poison(alpha, beta, a, ar, ac, lda, b, br, bc, ldb, c, mm, nn, ldc)
		impl.Dgemm(tA, tB, mm, nn, kk, alpha, a, lda, b, ldb, beta, c, ldc)
		withinBound(t, fmt.Sprintf("Dgemm(%c,%c) %dx%dx%d ld %d,%d,%d α=%v β=%v kernel %s", tA, tB, mm, nn, kk, lda, ldb, ldc, alpha, beta, Kernel()),
			c, want, bound, mm, nn, ldc)
	})
}

// FuzzDtrsm compares Dtrsm and Dtrmm with gonum's over shapes up to fuzzMax, leading dimensions beyond the width
// (canaries in the padding), every side, triangle, transpose and diagonal, α and each kernel. flags: bit 0 side,
// 1 uplo, 2–3 transpose, 4 diag, 5–6 the kernel. The entries of A not to be read are NaN; with α = 0 the
// triangle and B are NaN too (B must come out zero).
// The triangle is well conditioned (triangle: a dominant diagonal), so the solve's error is within
// 16(k+2)·u·max(|α|, |x|) entrywise; the product's within 4(k+2)·u·|α|·(|op(A)|·|B|).
func FuzzDtrsm(f *testing.F) {
	f.Add(uint8(13), uint8(17), uint8(1), uint8(2), uint8(0), 1.0, uint64(1))
	f.Add(uint8(70), uint8(33), uint8(0), uint8(0), uint8(0b0011111), -1.0, uint64(2))
	f.Add(uint8(12), uint8(70), uint8(3), uint8(1), uint8(0b0100101), 0.0, uint64(3))
	f.Add(uint8(25), uint8(1), uint8(4), uint8(4), uint8(0b1001010), 0.5, uint64(4))
	f.Add(uint8(0), uint8(5), uint8(0), uint8(2), uint8(0b0010011), 2.0, uint64(5))
	f.Add(uint8(49), uint8(48), uint8(2), uint8(3), uint8(0b0111001), -3.25, uint64(6))
	var impl Implementation
	f.Fuzz(func(t *testing.T, m, n, padA, padB, flags uint8, alpha float64, seed uint64) {
		mm, nn := int(m)%(fuzzMax+1), int(n)%(fuzzMax+1)
		side := []blas.Side{blas.Left, blas.Right}[flags&1]
		ul := []blas.Uplo{blas.Lower, blas.Upper}[flags>>1&1]
		tA := transposes[int(flags>>2&3)%3]
		d := []blas.Diag{blas.NonUnit, blas.Unit}[flags>>4&1]
		defer fuzzKernel(flags >> 5 & 3)()
		alpha = fuzzScalar(alpha)
		rng := rand.New(rand.NewPCG(seed, 8))
		k := nn
		if side == blas.Left {
			k = mm
		}
		lda, ldb := max(k, 1)+int(padA%5), max(nn, 1)+int(padB%5)
		a, b := triangle(rng, k, lda, ul), operand(rng, mm, nn, ldb)
		unread(a, k, lda, ul, d)
		what := fmt.Sprintf("(%c,%c,%c,%c) %dx%d ld %d,%d α=%v kernel %s", side, ul, tA, d, mm, nn, lda, ldb, alpha, Kernel())

		// Dtrmm, with its bound from the product of the absolute values.
		bound := absAll(b)
		ref.Dtrmm(side, ul, tA, d, mm, nn, math.Abs(alpha), absAll(a), lda, bound, ldb)
		for i := range bound {
			bound[i] *= 4 * float64(k+2) * 0x1p-53
		}
		want := append([]float64(nil), b...)
		ref.Dtrmm(side, ul, tA, d, mm, nn, alpha, a, lda, want, ldb)
		got, ga := append([]float64(nil), b...), append([]float64(nil), a...)
		if alpha == 0 {
			fillNaN(ga, k, k, lda)
			fillNaN(got, mm, nn, ldb)
		}
		impl.Dtrmm(side, ul, tA, d, mm, nn, alpha, ga, lda, got, ldb)
		withinBound(t, "Dtrmm"+what, got, want, bound, mm, nn, ldb)

		// Dtrsm.
		want = append(want[:0], b...)
		ref.Dtrsm(side, ul, tA, d, mm, nn, alpha, a, lda, want, ldb)
		for i := range bound {
			bound[i] = 16 * float64(k+2) * 0x1p-53 * math.Max(math.Abs(alpha), math.Abs(want[i]))
		}
		got = append(got[:0], b...)
		if alpha == 0 {
			fillNaN(got, mm, nn, ldb)
		}
		impl.Dtrsm(side, ul, tA, d, mm, nn, alpha, ga, lda, got, ldb)
		withinBound(t, "Dtrsm"+what, got, want, bound, mm, nn, ldb)
	})
}
