package ops

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// The pivoted-Cholesky preconditioner of an exact GP's CG solves (Gardner et al. 2018, §4; Harbrecht, Peters &
// Schneider 2012): P = L·Lᵀ + σ²I with L [n,k] the first k columns of the pivoted Cholesky factorisation of K,
// which is the Nyström approximation K[:,π] K[π,π]⁻¹ K[π,:] of K on the pivot rows π.

// PivotTol is the relative size of the largest remaining diagonal entry (to the largest of K's) at which
// PivotedCholesky stops before its rank: the remaining matrix is then numerically zero, and a further pivot
// would divide by rounding error.
const PivotTol = 1e-10

// PivotedCholesky returns the first rank columns L [n,k] (row-major, k ≤ rank) of the greedy pivoted Cholesky
// factorisation of the n×n positive semi-definite matrix K and its pivots piv [k], from K's diagonal diag [n] and
// its rows: row(i, out) writes row i of K into out [n]. Each step takes the largest remaining diagonal entry (the
// lowest index among equals), so that L·Lᵀ = K[:,π] K[π,π]⁻¹ K[π,:] and L[π,:] is lower triangular. It stops early
// when the remaining diagonal is below PivotTol of diag's largest entry.
func PivotedCholesky(n, rank int, diag []float64, row func(i int, out []float64) error) (l []float64, piv []int, err error) {
	if n <= 0 || len(diag) != n || rank < 0 {
		return nil, nil, &ShapeError{Op: "PivotedCholesky", Want: fmt.Sprintf("a diagonal of %d values and rank ≥ 0", n), Got: fmt.Sprintf("%d values, rank %d", len(diag), rank)}
	}
	if err := CheckFinite("PivotedCholesky diagonal", diag, 1); err != nil {
		return nil, nil, err
	}
	rank = min(rank, n)
	d := append([]float64(nil), diag...)
	top := 0.0
	for _, v := range d {
		top = max(top, v)
	}
	lw := make([]float64, n*rank) // L [n,rank] row-major; its first m columns are filled after step m
	col := make([]float64, n)
	pivoted := make([]bool, n)
	for m := 0; m < rank; m++ {
		p, best := -1, 0.0
		for i, v := range d {
			if !pivoted[i] && v > best {
				p, best = i, v
			}
		}
		if p < 0 || best <= PivotTol*top {
			break
		}
		if err := row(p, col); err != nil {
			return nil, nil, err
		}
		if err := CheckFinite("PivotedCholesky row", col, 1); err != nil {
			return nil, nil, err
		}
		if m > 0 { // col −= L[:, :m]·L[p, :m]ᵀ (one Gemv over the factor so far)
			blas64.Gemv(blas.NoTrans, -1, blas64.General{Rows: n, Cols: m, Stride: rank, Data: lw},
				blas64.Vector{N: m, Inc: 1, Data: lw[p*rank:]}, 1, blas64.Vector{N: n, Inc: 1, Data: col})
		}
		s := math.Sqrt(best)
		for i, v := range col {
			switch {
			case i == p:
				lw[i*rank+m] = s
			case pivoted[i]: // the residual matrix is zero on earlier pivots' rows: L[π,:] stays triangular
			default:
				v /= s
				lw[i*rank+m] = v
				d[i] = max(d[i]-v*v, 0)
			}
		}
		pivoted[p], d[p] = true, 0
		piv = append(piv, p)
	}
	k := len(piv)
	if k == rank {
		return lw, piv, nil
	}
	l = make([]float64, n*k)
	for i := 0; i < n; i++ {
		copy(l[i*k:(i+1)*k], lw[i*rank:i*rank+k])
	}
	return l, piv, nil
}

// LowRankPrecond is P = L·Lᵀ + σ²I for L [n,k], kept as its eigen-decomposition U·diag(s²)·Uᵀ + σ²I (U [n,r]
// orthonormal, from a QR factorisation of L and the eigen-decomposition of its small factor; directions with
// s² ≤ 1e-14·max s² dropped), which gives P⁻¹, P^(±1/2), log|P| and tr P⁻¹ in O(n·r) per column.
type LowRankPrecond struct {
	n, r   int
	sigma2 float64
	u      []float64 // [n,r]
	s2     []float64 // [r]
	// L and Piv are the factor and pivots the preconditioner was built from (nil without pivots).
	L   []float64
	K   int
	Piv []int
}

// NewLowRankPrecond returns P = L·Lᵀ + σ²I for l [n,k] (row-major) and σ² > 0.
func NewLowRankPrecond(l []float64, n, k int, sigma2 float64) (*LowRankPrecond, error) {
	if n <= 0 || k < 0 || len(l) != n*k {
		return nil, &ShapeError{Op: "NewLowRankPrecond", Want: fmt.Sprintf("L of %d×%d values", n, k), Got: fmt.Sprint(len(l))}
	}
	if !(sigma2 > 0) || math.IsInf(sigma2, 0) {
		return nil, fmt.Errorf("ops: NewLowRankPrecond: noise variance %v must be positive and finite", sigma2)
	}
	p := &LowRankPrecond{n: n, sigma2: sigma2, L: l, K: k}
	if k == 0 {
		return p, nil
	}
	if k > n {
		return nil, &ShapeError{Op: "NewLowRankPrecond", Want: "rank k ≤ n", Got: fmt.Sprintf("k = %d, n = %d", k, n)}
	}
	// L = Q·R (Q [n,k] orthonormal), R·Rᵀ = W·diag(s²)·Wᵀ, so L·Lᵀ = (QW)·diag(s²)·(QW)ᵀ.
	q := append([]float64(nil), l...)
	qa := blas64.General{Rows: n, Cols: k, Stride: k, Data: q}
	tau := make([]float64, k)
	work := []float64{0}
	lapack64.Geqrf(qa, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(qa, tau, work, len(work))
	rr := make([]float64, k*k) // R·Rᵀ
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for m := i; m < k; m++ { // R is upper triangular: R[i,m], R[j,m] for m ≥ max(i, j) = i
				s += q[i*k+m] * q[j*k+m]
			}
			rr[i*k+j], rr[j*k+i] = s, s
		}
	}
	work = []float64{0}
	lapack64.Orgqr(qa, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Orgqr(qa, tau, work, len(work))
	w := blas64.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: rr}
	ev := make([]float64, k)
	work = []float64{0}
	lapack64.Syev(lapack.EVCompute, w, ev, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Syev(lapack.EVCompute, w, ev, work, len(work)) {
		return nil, fmt.Errorf("ops: NewLowRankPrecond: eigen-decomposition of a %d×%d matrix failed", k, k)
	}
	top := 0.0
	for _, v := range ev {
		top = max(top, v)
	}
	var keep []int
	for i, v := range ev {
		if v > 1e-14*top && v > 0 {
			keep = append(keep, i)
		}
	}
	p.r = len(keep)
	p.s2 = make([]float64, p.r)
	wk := make([]float64, k*p.r) // the kept eigenvectors [k,r]
	for c, i := range keep {
		p.s2[c] = ev[i]
		for m := 0; m < k; m++ {
			wk[m*p.r+c] = rr[m*k+i]
		}
	}
	p.u = make([]float64, n*p.r)
	if p.r > 0 {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, qa, blas64.General{Rows: k, Cols: p.r, Stride: p.r, Data: wk}, 0,
			blas64.General{Rows: n, Cols: p.r, Stride: p.r, Data: p.u})
	}
	return p, nil
}

// N returns the order n; Rank the number of directions kept; Sigma2 σ².
func (p *LowRankPrecond) N() int          { return p.n }
func (p *LowRankPrecond) Rank() int       { return p.r }
func (p *LowRankPrecond) Sigma2() float64 { return p.sigma2 }

// apply writes out = f(σ²)·v + U·diag(g(s²) − f(σ²))·Uᵀv for the [n,c] block v, i.e. h(P)·v for the function
// h with h(σ²) = f and h(σ² + s²) = g on the directions of U.
func (p *LowRankPrecond) apply(v, out []float64, c int, f float64, g func(s2 float64) float64) {
	n, r := p.n, p.r
	for i, x := range v[:n*c] {
		out[i] = f * x
	}
	if r == 0 {
		return
	}
	ut := make([]float64, r*c) // Uᵀv [r,c]
	ua, va := blas64.General{Rows: n, Cols: r, Stride: r, Data: p.u}, blas64.General{Rows: n, Cols: c, Stride: c, Data: v[:n*c]}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, ua, va, 0, blas64.General{Rows: r, Cols: c, Stride: c, Data: ut})
	for m, s2 := range p.s2 {
		w := g(s2) - f
		for j := range ut[m*c : (m+1)*c] {
			ut[m*c+j] *= w
		}
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, ua, blas64.General{Rows: r, Cols: c, Stride: c, Data: ut}, 1,
		blas64.General{Rows: n, Cols: c, Stride: c, Data: out[:n*c]})
}

// Solve writes P⁻¹·v = (I − UUᵀ)v/σ² + U·diag(1/(σ² + s²))·Uᵀv into out for the [n,c] block v (MBCG's
// preconditioner). The projection on U's complement is formed explicitly, and once more on its result ("twice is
// enough"), not as v/σ² less a correction of nearly its size: that difference cancels catastrophically when s²/σ²
// nears 1/ε, so that rᵀP⁻¹r came out negative on an ill-conditioned fit (bike's subset start: signal variance
// 6.6e7, noise 4.7e-5) and CG's recursion broke down.
func (p *LowRankPrecond) Solve(v, out []float64, c int) {
	n, r := p.n, p.r
	if r == 0 {
		for i, x := range v[:n*c] {
			out[i] = x / p.sigma2
		}
		return
	}
	ua := blas64.General{Rows: n, Cols: r, Stride: r, Data: p.u}
	w := append([]float64(nil), v[:n*c]...) // (I − UUᵀ)v, twice
	wa := blas64.General{Rows: n, Cols: c, Stride: c, Data: w}
	coef, again := make([]float64, r*c), make([]float64, r*c) // Uᵀv, then Uᵀw
	ca, ga := blas64.General{Rows: r, Cols: c, Stride: c, Data: coef}, blas64.General{Rows: r, Cols: c, Stride: c, Data: again}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, ua, wa, 0, ca)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, ua, ca, 1, wa)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, ua, wa, 0, ga)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, ua, ga, 1, wa)
	for m, s2 := range p.s2 { // v's coordinates on U (both passes' parts), scaled by 1/(σ² + s²)
		f := 1 / (p.sigma2 + s2)
		for j := m * c; j < (m+1)*c; j++ {
			coef[j] = (coef[j] + again[j]) * f
		}
	}
	for i, x := range w {
		out[i] = x / p.sigma2
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, ua, ca, 1, blas64.General{Rows: n, Cols: c, Stride: c, Data: out[:n*c]})
}

// Sqrt writes P^(1/2)·v into out: a probe w with E[wwᵀ] = I becomes z = P^(1/2)·w with E[zzᵀ] = P.
func (p *LowRankPrecond) Sqrt(v, out []float64, c int) {
	p.apply(v, out, c, math.Sqrt(p.sigma2), func(s2 float64) float64 { return math.Sqrt(p.sigma2 + s2) })
}

// Eigen returns U [n,r] (row-major, orthonormal columns) and s² [r] of P = U·diag(s²)·Uᵀ + σ²I (the
// preconditioner's own storage: do not modify).
func (p *LowRankPrecond) Eigen() (u, s2 []float64) { return p.u, p.s2 }

// LogDet returns log|P| = (n − r)·log σ² + Σ log(σ² + s²).
func (p *LowRankPrecond) LogDet() float64 {
	ld := float64(p.n-p.r) * math.Log(p.sigma2)
	for _, s2 := range p.s2 {
		ld += math.Log(p.sigma2 + s2)
	}
	return ld
}

// TraceInv returns tr P⁻¹ = (n − r)/σ² + Σ 1/(σ² + s²).
func (p *LowRankPrecond) TraceInv() float64 {
	t := float64(p.n-p.r) / p.sigma2
	for _, s2 := range p.s2 {
		t += 1 / (p.sigma2 + s2)
	}
	return t
}
