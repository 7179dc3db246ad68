package blas

import (
	"math"

	"gonum.org/v1/gonum/blas"
)

// Triangular solves and products with at most fewRHSMax right-hand sides (a GP's y is one column) run as level-2
// loops over one right-hand side at a time: a tile of 8 or 16 columns would be mostly padding. Rows of A are read
// contiguously (dot products, or axpys where op(A) = Aᵀ), every multiply-add fused (math.FMA), so the bits do not
// depend on the CPU or on the micro-kernel.

// fewRHSMax is the largest number of right-hand sides (columns of B for side Left, rows for side Right) that go
// to the level-2 loops.
const fewRHSMax = 2

func fewRHS(s blas.Side, m, n int) bool {
	if s == blas.Left {
		return n <= fewRHSMax
	}
	return m <= fewRHSMax
}

// triVec is a triangular A (k × k, row-major, stride lda) applied to vectors: lower reports whether A (not op(A))
// is lower triangular, trans whether op(A) = Aᵀ, unit whether the diagonal is taken as 1.
type triVec struct {
	a                  []float64
	lda, k             int
	lower, trans, unit bool
}

// rhsVectors calls f on each right-hand side of B (m × n, stride ldb) gathered into a contiguous vector x
// (length k), then scatters x back: the columns of B for side Left, its rows for side Right (B·op(A) = op(A)ᵀ from
// the left on each row).
func rhsVectors(s blas.Side, m, n int, b []float64, ldb int, f func(x []float64)) {
	if s == blas.Right {
		for i := 0; i < m; i++ {
			f(b[i*ldb : i*ldb+n])
		}
		return
	}
	x := make([]float64, m)
	for j := 0; j < n; j++ {
		for i := range x {
			x[i] = b[i*ldb+j]
		}
		f(x)
		for i, v := range x {
			b[i*ldb+j] = v
		}
	}
}

// solve overwrites x with op(A)⁻¹·x.
func (t triVec) solve(x []float64) {
	a, lda, k := t.a, t.lda, t.k
	switch {
	case !t.trans && t.lower: // forward: x_i = (x_i − A[i,:i]·x[:i]) / A_ii
		for i := 0; i < k; i++ {
			s := x[i]
			for q, v := range a[i*lda : i*lda+i] {
				s = math.FMA(-v, x[q], s)
			}
			x[i] = t.div(s, a[i*lda+i])
		}
	case !t.trans: // upper, backward: x_i = (x_i − A[i,i+1:]·x[i+1:]) / A_ii
		for i := k - 1; i >= 0; i-- {
			s := x[i]
			for q, v := range a[i*lda+i+1 : i*lda+k] {
				s = math.FMA(-v, x[i+1+q], s)
			}
			x[i] = t.div(s, a[i*lda+i])
		}
	case t.lower: // op(A) = Aᵀ upper, backward: x_i /= A_ii, then x[:i] −= x_i·A[i,:i]
		for i := k - 1; i >= 0; i-- {
			xi := t.div(x[i], a[i*lda+i])
			x[i] = xi
			for q, v := range a[i*lda : i*lda+i] {
				x[q] = math.FMA(-v, xi, x[q])
			}
		}
	default: // op(A) = Aᵀ lower, forward: x_i /= A_ii, then x[i+1:] −= x_i·A[i,i+1:]
		for i := 0; i < k; i++ {
			xi := t.div(x[i], a[i*lda+i])
			x[i] = xi
			for q, v := range a[i*lda+i+1 : i*lda+k] {
				x[i+1+q] = math.FMA(-v, xi, x[i+1+q])
			}
		}
	}
}

func (t triVec) div(s, d float64) float64 {
	if t.unit {
		return s
	}
	return s / d
}

// mul overwrites x with op(A)·x.
func (t triVec) mul(x []float64) {
	a, lda, k := t.a, t.lda, t.k
	diag := func(i int) float64 {
		if t.unit {
			return 1
		}
		return a[i*lda+i]
	}
	switch {
	case !t.trans && t.lower: // x_i = Σ_{q≤i} A_iq x_q, from the last row (x[:i] still original)
		for i := k - 1; i >= 0; i-- {
			s := diag(i) * x[i]
			for q, v := range a[i*lda : i*lda+i] {
				s = math.FMA(v, x[q], s)
			}
			x[i] = s
		}
	case !t.trans: // upper: x_i = Σ_{q≥i} A_iq x_q, from the first row
		for i := 0; i < k; i++ {
			s := diag(i) * x[i]
			for q, v := range a[i*lda+i+1 : i*lda+k] {
				s = math.FMA(v, x[i+1+q], s)
			}
			x[i] = s
		}
	case t.lower: // op(A) = Aᵀ: x_q = Σ_{i≥q} A_iq x_i; row i adds x_i·A[i,:i] to the rows above it, from the first row
		for i := 0; i < k; i++ {
			xi := x[i]
			for q, v := range a[i*lda : i*lda+i] {
				x[q] = math.FMA(v, xi, x[q])
			}
			x[i] = diag(i) * xi
		}
	default: // op(A) = Aᵀ, A upper: x_q = Σ_{i≤q} A_iq x_i, from the last row
		for i := k - 1; i >= 0; i-- {
			xi := x[i]
			for q, v := range a[i*lda+i+1 : i*lda+k] {
				x[i+1+q] = math.FMA(v, xi, x[i+1+q])
			}
			x[i] = diag(i) * xi
		}
	}
}

// fewTrsm and fewTrmm are Dtrsm and Dtrmm for fewRHS (arguments checked).
func fewTrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if alpha == 0 { // B = 0, A and B not read (NaN included), as reference BLAS does
		scaleC(m, n, 0, b, ldb, full)
		return
	}
	t := fewTri(s, ul, tA, d, m, n, a, lda)
	rhsVectors(s, m, n, b, ldb, func(x []float64) {
		if alpha != 1 {
			for i := range x {
				x[i] *= alpha
			}
		}
		t.solve(x)
	})
}

func fewTrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if alpha == 0 {
		scaleC(m, n, 0, b, ldb, full)
		return
	}
	t := fewTri(s, ul, tA, d, m, n, a, lda)
	rhsVectors(s, m, n, b, ldb, func(x []float64) {
		t.mul(x)
		if alpha != 1 {
			for i := range x {
				x[i] *= alpha
			}
		}
	})
}

// fewTri is op(A) as applied to one right-hand side: for side Right, x·op(A) = (op(A)ᵀ·xᵀ)ᵀ.
func fewTri(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, a []float64, lda int) triVec {
	t := triVec{a: a, lda: lda, k: m, lower: ul == blas.Lower, trans: tA != blas.NoTrans, unit: d == blas.Unit}
	if s == blas.Right {
		t.k, t.trans = n, !t.trans
	}
	return t
}
