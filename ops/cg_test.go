package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
)

// denseSE is a KernelOperator held whole, for the solver's tests: K_ij = s²·exp(−½ Σ_k (x_ik − x_jk)²/ℓ_k²)
// with raw hyperparameters (log s², log ℓ [d]), its derivatives written out by hand.
type denseSE struct {
	x    []float64
	n, d int
	s2   float64
	ell  []float64
	k    []float64
}

func (o *denseSE) HyperSizes() []int { return []int{1, o.d} }

func (o *denseSE) Bind(x []float64, n, d int, h [][]float64) error {
	o.x, o.n, o.d = x, n, d
	o.s2 = math.Exp(h[0][0])
	o.ell = make([]float64, d)
	for k := range o.ell {
		o.ell[k] = math.Exp(h[1][k])
	}
	o.k = make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			o.k[i*n+j] = o.s2 * math.Exp(-0.5*o.r2(i, j))
		}
	}
	return nil
}

func (o *denseSE) r2(i, j int) float64 {
	s := 0.0
	for k := 0; k < o.d; k++ {
		t := (o.x[i*o.d+k] - o.x[j*o.d+k]) / o.ell[k]
		s += t * t
	}
	return s
}

func (o *denseSE) Mul(v []float64, c int, out []float64) error {
	a := mat.NewDense(o.n, o.n, o.k)
	mat.NewDense(o.n, c, out).Mul(a, mat.NewDense(o.n, c, v))
	return nil
}

func (o *denseSE) Diag(out []float64) error {
	for i := range out {
		out[i] = o.k[i*o.n+i]
	}
	return nil
}

func (o *denseSE) Row(i int, out []float64) error {
	copy(out, o.k[i*o.n:(i+1)*o.n])
	return nil
}

// grad adds u·∂K_ij/∂θ for every raw value θ.
func (o *denseSE) grad(i, j int, u float64, dst [][]float64) {
	kij := o.k[i*o.n+j]
	dst[0][0] += u * kij
	for k := 0; k < o.d; k++ {
		t := (o.x[i*o.d+k] - o.x[j*o.d+k]) / o.ell[k]
		dst[1][k] += u * kij * t * t
	}
}

func (o *denseSE) BilinearGrad(a, b []float64, c int, dst [][]float64) error {
	for i := 0; i < o.n; i++ {
		for j := 0; j < o.n; j++ {
			u := 0.0
			for m := 0; m < c; m++ {
				u += a[i*c+m] * b[j*c+m]
			}
			o.grad(i, j, u, dst)
		}
	}
	return nil
}

func (o *denseSE) PivotGrad(piv []int, u, w []float64, dst [][]float64) error {
	k := len(piv)
	for i := 0; i < o.n; i++ {
		for p, j := range piv {
			o.grad(i, j, u[i*k+p], dst)
		}
	}
	for q, i := range piv {
		for p, j := range piv {
			o.grad(i, j, w[q*k+p], dst)
		}
	}
	return nil
}

// seProblem returns n random rows of d inputs, targets and raw hyperparameters.
func seProblem(n, d int, seed uint64) (x, y []float64, hyper [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = math.Sin(2*x[i*d]) + 0.3*rng.NormFloat64()
	}
	ell := make([]float64, d)
	for k := range ell {
		ell[k] = math.Log(0.8 + 0.4*float64(k))
	}
	return x, y, [][]float64{{math.Log(1.3)}, ell}
}

// exactLoss returns −log p(y) of the dense operator (bound) with noise σ² by Cholesky, and its gradient.
func exactLoss(t *testing.T, o *denseSE, y []float64, noise float64) (float64, [][]float64, float64) {
	t.Helper()
	n := o.n
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.SetSym(i, j, o.k[i*n+j])
		}
		a.SetSym(i, i, o.k[i*n+i]+noise)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		t.Fatal("not PD")
	}
	alpha := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(alpha, mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	loss := 0.5*mat.Dot(alpha, mat.NewVecDense(n, y)) + 0.5*ch.LogDet() + 0.5*float64(n)*math.Log(2*math.Pi)
	grad := [][]float64{make([]float64, 1), make([]float64, o.d)}
	gn := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			o.grad(i, j, -0.5*alpha.AtVec(i)*alpha.AtVec(j)+0.5*inv.At(i, j), grad)
		}
		gn += -0.5*alpha.AtVec(i)*alpha.AtVec(i) + 0.5*inv.At(i, i)
	}
	return loss, grad, gn
}

func relErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Max(math.Abs(a), math.Abs(b)), 1e-300)
}

// MBCG solves every column to the tolerance, with and without the pivoted-Cholesky preconditioner, and the
// Lanczos tridiagonals of n basis probes give log|P⁻¹A| exactly.
func TestMBCGSolvesAndTridiagonalises(t *testing.T) {
	n, d, noise := 40, 2, 0.05
	x, _, h := seProblem(n, d, 3)
	o := &denseSE{}
	o.Bind(x, n, d, h)
	apply := func(v, out []float64, c int) error {
		o.Mul(v, c, out)
		for i := range out[:n*c] {
			out[i] += noise * v[i]
		}
		return nil
	}
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, o.k[i*n+j])
		}
		a.Set(i, i, a.At(i, i)+noise)
	}
	logdetA := 0.0
	{
		var lu mat.LU
		lu.Factorize(a)
		logdetA, _ = lu.LogDet()
	}
	diag := make([]float64, n)
	o.Diag(diag)
	for _, rank := range []int{0, 6} {
		var pre *ops.LowRankPrecond
		var precond func(r, z []float64, c int)
		logdetP := 0.0
		if rank > 0 {
			l, piv, err := ops.PivotedCholesky(n, rank, diag, o.Row)
			if err != nil {
				t.Fatal(err)
			}
			if pre, err = ops.NewLowRankPrecond(l, n, len(piv), noise); err != nil {
				t.Fatal(err)
			}
			precond, logdetP = pre.Solve, pre.LogDet()
		}
		// b = [3 random columns | √n·e_i for every i (basis probes), pushed through P^(1/2)]
		c := 3 + n
		rng := rand.New(rand.NewPCG(5, 5))
		b, w := make([]float64, n*c), make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < 3; j++ {
				b[i*c+j] = rng.NormFloat64()
			}
			w[i*n+i] = math.Sqrt(float64(n))
		}
		z := w
		if pre != nil {
			z = make([]float64, n*n)
			pre.Sqrt(w, z, n)
		}
		for i := 0; i < n; i++ {
			copy(b[i*c+3:(i+1)*c], z[i*n:(i+1)*n])
		}
		xs := make([]float64, n*c)
		res, err := ops.MBCG(apply, precond, b, xs, n, c, 3, ops.CGOptions{Tol: 1e-11, Lanczos: n})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged {
			t.Fatalf("rank %d: not converged: %v", rank, res.Residuals)
		}
		// Residuals against the dense product.
		got := mat.NewDense(n, c, xs)
		var ax mat.Dense
		ax.Mul(a, got)
		ax.Sub(&ax, mat.NewDense(n, c, b))
		if r := mat.Norm(&ax, 2) / mat.Norm(mat.NewDense(n, c, b), 2); r > 1e-9 {
			t.Errorf("rank %d: ‖AX − B‖/‖B‖ = %.3g", rank, r)
		}
		slq := 0.0
		for j, tri := range res.Tridiag {
			q, err := ops.LanczosQuadrature(tri, math.Log)
			if err != nil {
				t.Fatal(err)
			}
			slq += res.StartNorm[j] * q
		}
		slq /= float64(n)
		if e := relErr(slq+logdetP, logdetA); e > 1e-8 {
			t.Errorf("rank %d: log|P| + SLQ = %.12g, log|A| = %.12g (rel %.3g)", rank, slq+logdetP, logdetA, e)
		}
		t.Logf("rank %d: %d iterations", rank, res.Iters)
	}
}

// A run stopped by its cap reports it, and Err is the typed error with the residual reached.
func TestMBCGNotConverged(t *testing.T) {
	n, d := 60, 2
	x, y, h := seProblem(n, d, 4)
	o := &denseSE{}
	o.Bind(x, n, d, h)
	apply := func(v, out []float64, c int) error {
		o.Mul(v, c, out)
		for i := range out[:n*c] {
			out[i] += 1e-4 * v[i]
		}
		return nil
	}
	xs := make([]float64, n)
	res, err := ops.MBCG(apply, nil, y, xs, n, 1, 1, ops.CGOptions{Tol: 1e-12, MaxIters: 3, MinIters: 1})
	if err != nil {
		t.Fatal(err)
	}
	var nc *ops.NotConvergedError
	if res.Converged || !errors.As(res.Err(1e-12), &nc) || !errors.Is(res.Err(1e-12), ops.ErrNotConverged) {
		t.Fatalf("converged %v, err %v", res.Converged, res.Err(1e-12))
	}
	if nc.Iters != 3 || !(nc.Residual > 1e-12) || nc.Residual != res.Residuals[0] || nc.Mean != nc.Residual {
		t.Errorf("error %+v, residuals %v", nc, res.Residuals)
	}
	// Bad input: a non-finite right-hand side is refused by name.
	y[7] = math.NaN()
	if _, err := ops.MBCG(apply, nil, y, xs, n, 1, 1, ops.CGOptions{}); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("NaN right-hand side: %v", err)
	}
	if _, err := ops.MBCG(apply, nil, y[:5], xs, n, 1, 1, ops.CGOptions{}); !errors.Is(err, ops.ErrShape) {
		t.Errorf("short right-hand side: %v", err)
	}
	// A matrix that is not positive definite breaks down with ErrNotPD.
	neg := func(v, out []float64, c int) error {
		for i := range out[:n*c] {
			out[i] = -v[i]
		}
		return nil
	}
	y[7] = 1
	if _, err := ops.MBCG(neg, nil, y, make([]float64, n), n, 1, 1, ops.CGOptions{}); !errors.Is(err, ops.ErrNotPD) {
		t.Errorf("negative definite: %v", err)
	}
}

// Pivoted Cholesky: at full rank L·Lᵀ = K; at rank k it is the Nyström approximation on its pivots, and the
// low-rank preconditioner's solve, square root, log-determinant and trace match dense algebra.
func TestPivotedCholeskyAndPrecond(t *testing.T) {
	n, d, noise := 30, 3, 0.2
	x, _, h := seProblem(n, d, 6)
	o := &denseSE{}
	o.Bind(x, n, d, h)
	diag := make([]float64, n)
	o.Diag(diag)
	km := mat.NewDense(n, n, o.k)
	for _, rank := range []int{5, 12} {
		l, piv, err := ops.PivotedCholesky(n, rank, diag, o.Row)
		if err != nil {
			t.Fatal(err)
		}
		k := len(piv)
		if k != rank {
			t.Fatalf("rank %d gave %d pivots", rank, k)
		}
		lm := mat.NewDense(n, k, l)
		var llt mat.Dense
		llt.Mul(lm, lm.T())
		// Nyström: K[:,π] K[π,π]⁻¹ K[π,:]
		kp := mat.NewDense(n, k, nil)
		kpp := mat.NewDense(k, k, nil)
		for i := 0; i < n; i++ {
			for a, j := range piv {
				kp.Set(i, a, km.At(i, j))
			}
		}
		for a, i := range piv {
			for b, j := range piv {
				kpp.Set(a, b, km.At(i, j))
			}
		}
		var sol, ny mat.Dense
		if err := sol.Solve(kpp, kp.T()); err != nil {
			t.Fatal(err)
		}
		ny.Mul(kp, &sol)
		if e := maxAbsDiff(&llt, &ny); e > 1e-9 {
			t.Errorf("rank %d: ‖LLᵀ − Nyström‖∞ = %.3g", rank, e)
		}
		pre, err := ops.NewLowRankPrecond(l, n, k, noise)
		if err != nil {
			t.Fatal(err)
		}
		pm := mat.NewDense(n, n, nil)
		pm.Add(&llt, scaledIdentity(n, noise))
		rng := rand.New(rand.NewPCG(2, 2))
		v := make([]float64, n*2)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		out, back := make([]float64, n*2), make([]float64, n*2)
		pre.Solve(v, out, 2)
		var pv mat.Dense
		pv.Mul(pm, mat.NewDense(n, 2, out))
		if e := maxAbsDiff(&pv, mat.NewDense(n, 2, v)); e > 1e-9 {
			t.Errorf("rank %d: P·(P⁻¹v) − v = %.3g", rank, e)
		}
		pre.Sqrt(v, out, 2)
		pre.Sqrt(out, back, 2)
		pv.Mul(pm, mat.NewDense(n, 2, v))
		if e := maxAbsDiff(&pv, mat.NewDense(n, 2, back)); e > 1e-9 {
			t.Errorf("rank %d: P^½P^½v − Pv = %.3g", rank, e)
		}
		var lu mat.LU
		lu.Factorize(pm)
		ld, _ := lu.LogDet()
		if e := relErr(pre.LogDet(), ld); e > 1e-11 {
			t.Errorf("rank %d: log|P| %.12g, dense %.12g", rank, pre.LogDet(), ld)
		}
		var inv mat.Dense
		if err := inv.Inverse(pm); err != nil {
			t.Fatal(err)
		}
		if e := relErr(pre.TraceInv(), mat.Trace(&inv)); e > 1e-10 {
			t.Errorf("rank %d: tr P⁻¹ %.12g, dense %.12g", rank, pre.TraceInv(), mat.Trace(&inv))
		}
	}
	// A matrix of rank 1 stops after one pivot.
	ones := func(i int, out []float64) error {
		for j := range out {
			out[j] = 2
		}
		return nil
	}
	dg := make([]float64, n)
	for i := range dg {
		dg[i] = 2
	}
	if _, piv, err := ops.PivotedCholesky(n, 5, dg, ones); err != nil || len(piv) != 1 || piv[0] != 0 {
		t.Errorf("rank-1 matrix: pivots %v, %v", piv, err)
	}
	dg[3] = math.Inf(1)
	if _, _, err := ops.PivotedCholesky(n, 5, dg, ones); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("infinite diagonal: %v", err)
	}
}

func scaledIdentity(n int, s float64) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, s)
	}
	return m
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	m := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
}

// Lanczos at full rank reproduces the matrix (Q orthonormal, extending a deflation basis), and the solver's LOVE
// cache at full rank gives K̂⁻¹ exactly, with and without the pivoted-Cholesky directions; at lower rank the
// quadratic forms are below the exact ones (the variances conservative).
func TestLanczosLOVE(t *testing.T) {
	n, d, noise := 25, 2, 0.3
	x, y, h := seProblem(n, d, 8)
	o := &denseSE{d: d}
	o.Bind(x, n, d, h)
	a := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a.Set(i, j, o.k[i*n+j])
		}
		a.Set(i, i, a.At(i, i)+noise)
	}
	apply := func(v, out []float64) error {
		mat.NewVecDense(n, out).MulVec(a, mat.NewVecDense(n, v))
		return nil
	}
	q, tri, err := ops.Lanczos(apply, y, n, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := len(tri.Diag)
	qm := mat.NewDense(n, m, q)
	var qtq mat.Dense
	qtq.Mul(qm.T(), qm)
	if e := maxAbsDiff(&qtq, scaledIdentity(m, 1)); e > 1e-10 || m != n {
		t.Errorf("QᵀQ − I = %.3g after %d of %d steps", e, m, n)
	}
	// Deflated by the first 5 columns of Q: the new basis is orthogonal to them.
	u := mat.DenseCopyOf(qm.Slice(0, n, 0, 5)).RawMatrix().Data
	q2, _, err := ops.Lanczos(apply, y, n, 8, u)
	if err != nil {
		t.Fatal(err)
	}
	var utq mat.Dense
	utq.Mul(mat.NewDense(n, 5, u).T(), mat.NewDense(n, len(q2)/n, q2))
	if e := mat.Norm(&utq, math.Inf(1)); e > 1e-12 {
		t.Errorf("deflated Lanczos basis: ‖UᵀQ‖ = %.3g", e)
	}
	var inv mat.Dense
	if err := inv.Inverse(a); err != nil {
		t.Fatal(err)
	}
	kv := mat.NewVecDense(n, nil)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < n; i++ {
		kv.SetVec(i, rng.NormFloat64())
	}
	want := mat.Inner(kv, &inv, kv)
	pr := ops.CGProblem{X: x, N: n, D: d, Hyper: h, Noise: noise}
	for _, c := range []struct{ rank, pre int }{{n, 0}, {n, 6}, {10, 6}, {6, 0}} {
		s, err := ops.NewCGSolver(&denseSE{d: d}, ops.CGConfig{})
		if err != nil {
			t.Fatal(err)
		}
		r, cols, err := s.LOVE(pr, c.rank, c.pre, 1)
		if err != nil {
			t.Fatal(err)
		}
		var rk mat.VecDense
		rk.MulVec(mat.NewDense(cols, n, r), kv)
		got := mat.Dot(&rk, &rk)
		full := c.rank+c.pre >= n
		if full && relErr(got, want) > 1e-8 || !full && got > want*(1+1e-12) {
			t.Errorf("Lanczos rank %d, pivots %d: kᵀK̂⁻¹k by LOVE %.12g, exact %.12g", c.rank, c.pre, got, want)
		}
	}
	if _, err := ops.LOVECache(q, []float64{-1}, n, 1); err == nil {
		t.Error("LOVECache took mismatched sizes")
	}
}

// With n basis probes (exact traces and log-determinant) and a tight tolerance, the solver's loss and gradient are
// the exact GP's, with and without the preconditioner (whose gradient correction is then exercised).
func TestCGSolverExactWithBasisProbes(t *testing.T) {
	n, d, noise := 45, 2, 0.07
	x, y, h := seProblem(n, d, 9)
	for _, rank := range []int{-1, 7} {
		o := &denseSE{d: d}
		s, err := ops.NewCGSolver(o, ops.CGConfig{Tol: 1e-12, Probes: n, Probe: ops.ProbeBasis, Lanczos: n, PrecondRank: rank, PrecondMinRows: -1})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := s.Evaluate(ops.CGProblem{X: x, N: n, D: d, Hyper: h, Noise: noise}, y, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		loss, grad, gn := exactLoss(t, o, y, noise)
		if e := relErr(ev.Loss, loss); e > 1e-9 {
			t.Errorf("rank %d: loss %.12g, exact %.12g (rel %.3g)", rank, ev.Loss, loss, e)
		}
		if e := relErr(ev.GradNoise, gn); e > 1e-8 {
			t.Errorf("rank %d: ∂/∂σ² %.12g, exact %.12g", rank, ev.GradNoise, gn)
		}
		for j := range grad {
			for e := range grad[j] {
				if r := relErr(ev.GradHyper[j][e], grad[j][e]); r > 1e-8 {
					t.Errorf("rank %d: ∂/∂θ[%d][%d] %.12g, exact %.12g (rel %.3g)", rank, j, e, ev.GradHyper[j][e], grad[j][e], r)
				}
			}
		}
		if st := s.Stats(); st.Evaluations != 1 || !st.Converged || (rank > 0) != (st.PrecondRank == rank) {
			t.Errorf("rank %d: stats %+v", rank, st)
		}
	}
}

// The CGLoss op's gradients (r, σ², hyperparameters) agree with central finite differences, with fixed probes
// that make the estimate exact (n basis probes, tight tolerance).
func TestCGLossGradCheck(t *testing.T) {
	n, d := 24, 2
	x, y, h := seProblem(n, d, 10)
	s, err := ops.NewCGSolver(&denseSE{d: d}, ops.CGConfig{Tol: 1e-13, Probes: n, Probe: ops.ProbeBasis, Lanczos: n, PrecondRank: 5, PrecondMinRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	r2 := make([]float64, 2*n) // two outputs
	for i := 0; i < n; i++ {
		r2[2*i], r2[2*i+1] = y[i], 0.5*y[i]-0.2
	}
	in := []gradcheck.Input{
		{Name: "x", Shape: []int{n, d}, Value: x, NoGrad: true},
		{Name: "r", Shape: []int{n, 2}, Value: r2},
		{Name: "noise", Value: []float64{0.15}},
		{Name: "step", Value: []float64{3}, NoGrad: true},
		{Name: "logvar", Shape: []int{1}, Value: h[0]},
		{Name: "logell", Shape: []int{d}, Value: h[1]},
	}
	gradcheck.Check(t, func(g *G.ExprGraph, ns []*G.Node) (*G.Node, error) {
		return ops.CGLoss(s, ns[0], ns[1], ns[2], ns[3], ns[4:]...)
	}, in)
}

// Two solvers never merge (each has its own warm start), one solver's node built twice does, and every setting
// is in the hash.
func TestCGLossHash(t *testing.T) {
	mk := func(c ops.CGConfig) *ops.CGSolver {
		s, err := ops.NewCGSolver(&denseSE{d: 4}, c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s1, s2 := mk(ops.CGConfig{}), mk(ops.CGConfig{})
	build := func(s *ops.CGSolver) variant {
		return func(a, b *G.Node) (*G.Node, error) {
			g := a.Graph()
			noise := G.NewScalar(g, G.Float64, G.WithName("hash.noise"))
			step := G.NewScalar(g, G.Float64, G.WithName("hash.step"))
			h0 := G.NewVector(g, G.Float64, G.WithShape(1), G.WithName("hash.h0"))
			h1 := G.NewVector(g, G.Float64, G.WithShape(4), G.WithName("hash.h1"))
			return ops.CGLoss(s, a, b, noise, step, h0, h1)
		}
	}
	checkHashes(t, 4, map[string]variant{"solver1": build(s1), "solver2": build(s2)})
}

// The targets' solve starts from the previous evaluation's solution: with the iterations capped, a second
// evaluation at the same parameters ends nearer the solution than a first one; the cap is a counted warning, or
// with Strict the typed error; bad input is refused by type.
func TestCGSolverWarmStartAndErrors(t *testing.T) {
	n, d := 60, 2
	x, y, h := seProblem(n, d, 12)
	pr := ops.CGProblem{X: x, N: n, D: d, Hyper: h, Noise: 1e-3}
	capped := ops.CGConfig{Tol: 1e-12, MaxIters: 3, MinIters: 1, Probes: 1, Lanczos: 1, PrecondRank: -1}
	warm, err := ops.NewCGSolver(&denseSE{d: d}, capped)
	if err != nil {
		t.Fatal(err)
	}
	cold, err := ops.NewCGSolver(&denseSE{d: d}, capped)
	if err != nil {
		t.Fatal(err)
	}
	first, err := warm.Evaluate(pr, y, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ws := warm.WarmStart(); len(ws) != n || ws[5] != first.Alpha[5] {
		t.Fatalf("warm start %v, want the first α", ws)
	}
	second, err := warm.Evaluate(pr, y, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cold.Evaluate(pr, y, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// CG minimises the error's energy norm ‖α − α*‖_K̂ over its Krylov space (the residual's 2-norm is not
	// monotone): from the first evaluation's α, three more iterations end nearer α* than three from zero.
	o := &denseSE{d: d}
	o.Bind(x, n, d, h)
	kh := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			kh.SetSym(i, j, o.k[i*n+j])
		}
		kh.SetSym(i, i, o.k[i*n+i]+pr.Noise)
	}
	var ch mat.Cholesky
	if !ch.Factorize(kh) {
		t.Fatal("K̂ not PD")
	}
	star := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(star, mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	energy := func(a []float64) float64 {
		e := mat.NewVecDense(n, nil)
		e.SubVec(mat.NewVecDense(n, a), star)
		return math.Sqrt(mat.Inner(e, kh, e))
	}
	if ew, ec := energy(second.Alpha), energy(again.Alpha); !(ew < ec) || !(ew < energy(first.Alpha)) {
		t.Errorf("error in the energy norm: warm-started %.3g, cold %.3g, first %.3g: the warm start did not help", ew, ec, energy(first.Alpha))
	}
	if st := warm.Stats(); st.NotConverged != 2 || st.Converged || st.Evaluations != 2 {
		t.Errorf("capped solves: stats %+v, want 2 counted warnings", st)
	}
	warm.ResetWarmStart()
	if warm.WarmStart() != nil && len(warm.WarmStart()) != 0 {
		t.Error("ResetWarmStart kept the warm start")
	}
	strict := capped
	strict.Strict = true
	s, err := ops.NewCGSolver(&denseSE{d: d}, strict)
	if err != nil {
		t.Fatal(err)
	}
	var nc *ops.NotConvergedError
	if _, err := s.Evaluate(pr, y, 1, 0); !errors.As(err, &nc) || nc.Iters != 3 {
		t.Errorf("strict capped solve: %v, want *NotConvergedError after 3 iterations", err)
	}
	// Bad input.
	bad := append([]float64(nil), y...)
	bad[3] = math.Inf(1)
	if _, err := cold.Evaluate(pr, bad, 1, 0); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("infinite target: %v", err)
	}
	if _, err := cold.Evaluate(pr, y[:10], 1, 0); !errors.Is(err, ops.ErrShape) {
		t.Errorf("short targets: %v", err)
	}
	p2 := pr
	p2.Noise = 0
	if _, err := cold.Evaluate(p2, y, 1, 0); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("zero noise: %v", err)
	}
	p2 = pr
	p2.Hyper = [][]float64{{0}, {0}}
	if _, err := cold.Evaluate(p2, y, 1, 0); !errors.Is(err, ops.ErrShape) {
		t.Errorf("a hyperparameter of the wrong size: %v", err)
	}
	p2.Hyper = [][]float64{{math.NaN()}, {0, 0}}
	if _, err := cold.Evaluate(p2, y, 1, 0); !errors.Is(err, ops.ErrNonFinite) {
		t.Errorf("a NaN hyperparameter: %v", err)
	}
	if _, err := ops.NewCGSolver(&denseSE{d: d}, ops.CGConfig{Probe: "uniform"}); err == nil {
		t.Error("an unknown probe kind was accepted")
	}
	if _, err := ops.NewCGSolver(nil, ops.CGConfig{}); err == nil {
		t.Error("a nil operator was accepted")
	}
}

// SetStop: once its channel is closed, a solve, a LOVE cache and an evaluation end with ErrStopped (the
// preconditioner's pivots and the products check it); SetStop(nil) lifts it, and SetWarmStart's start is used.
func TestCGSolverStop(t *testing.T) {
	n, d := 60, 2
	x, y, h := seProblem(n, d, 12)
	pr := ops.CGProblem{X: x, N: n, D: d, Hyper: h, Noise: 1e-2}
	s, err := ops.NewCGSolver(&denseSE{d: d}, ops.CGConfig{PrecondRank: 5, PrecondMinRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	s.SetStop(stop)
	if _, _, err := s.Solve(pr, y, 1, nil, ops.CGOptions{Tol: 1e-8}, 0); err != nil {
		t.Fatalf("before the stop: %v", err)
	}
	close(stop)
	for name, run := range map[string]func() error{
		"solve":          func() error { _, _, err := s.Solve(pr, y, 1, nil, ops.CGOptions{Tol: 1e-8}, -1); return err },
		"preconditioned": func() error { _, _, err := s.Solve(pr, y, 1, nil, ops.CGOptions{Tol: 1e-8}, 0); return err },
		"LOVE":           func() error { _, _, err := s.LOVE(pr, 10, 0, 0); return err },
		"evaluate":       func() error { _, err := s.Evaluate(pr, y, 1, 0); return err },
	} {
		if err := run(); !errors.Is(err, ops.ErrStopped) {
			t.Errorf("%s after the stop: %v, want ErrStopped", name, err)
		}
	}
	s.SetStop(nil)
	x1, r1, err := s.Solve(pr, y, 1, nil, ops.CGOptions{Tol: 1e-10}, 0)
	if err != nil {
		t.Fatalf("after SetStop(nil): %v", err)
	}
	s.SetWarmStart(x1)
	if got := s.WarmStart(); len(got) != n || got[7] != x1[7] {
		t.Fatalf("SetWarmStart: %v", got)
	}
	ev, err := s.Evaluate(pr, y, 1, 0) // from the solution: the targets' column starts converged
	if err != nil {
		t.Fatal(err)
	}
	if r1.Iters < 2 || !(ev.Stats.DataResidual < 1e-8) {
		t.Errorf("solve: %d iterations; the evaluation started from its solution ends at the targets' residual %g", r1.Iters, ev.Stats.DataResidual)
	}
}

// A training solve stopped by the iteration cap above its tolerance raises the preconditioner's rank (doubling,
// up to MaxPrecondRank) and runs again with the same probes: the evaluation then equals, bit for bit, one made at
// the raised rank from the start, and later evaluations keep the rank. Without the raise the solve is a counted
// warning.
func TestCGSolverRaisesPrecondRank(t *testing.T) {
	n, d := 400, 2
	x, y, h := seProblem(n, d, 21)
	h[1] = []float64{math.Log(2), math.Log(3)} // smooth: K's spectrum decays fast, so rank buys conditioning
	pr := ops.CGProblem{X: x, N: n, D: d, Hyper: h, Noise: 1e-4}
	cfg := ops.CGConfig{Tol: 1e-4, MaxIters: 12, MinIters: 1, Probes: 3, Lanczos: 5, PrecondRank: 4, PrecondMinRows: -1, MaxPrecondRank: 64, Seed: 5}
	raising, err := ops.NewCGSolver(&denseSE{d: d}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := raising.Evaluate(pr, y, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	st := ev.Stats
	if !st.Converged || st.PrecondRaised == 0 || st.NotConverged != 0 || st.PrecondRank <= 4 || st.PrecondRank > 64 {
		t.Fatalf("stats %+v: want a converged solve after raising the rank from 4 (at most 64)", st)
	}
	t.Logf("rank 4 raised %d times to %d: %d iterations, residual %.2g", st.PrecondRaised, st.PrecondRank, st.Iters, st.Residual)
	if got := raising.RaisedRank(); got != st.PrecondRank {
		t.Errorf("RaisedRank %d after the evaluation, want %d", got, st.PrecondRank)
	}
	fixedCfg := cfg
	fixedCfg.PrecondRank = st.PrecondRank
	fixed, err := ops.NewCGSolver(&denseSE{d: d}, fixedCfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fixed.Evaluate(pr, y, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Loss != want.Loss || ev.GradNoise != want.GradNoise || ev.GradHyper[1][0] != want.GradHyper[1][0] || ev.Stats.Iters != want.Stats.Iters {
		t.Errorf("raised evaluation: loss %v, ∂σ² %v, ∂ℓ₀ %v (%d iterations); at rank %d from the start: %v, %v, %v (%d)",
			ev.Loss, ev.GradNoise, ev.GradHyper[1][0], ev.Stats.Iters, st.PrecondRank, want.Loss, want.GradNoise, want.GradHyper[1][0], want.Stats.Iters)
	}
	again, err := raising.Evaluate(pr, y, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if s2 := again.Stats; s2.PrecondRank != st.PrecondRank || s2.PrecondRaised != st.PrecondRaised || s2.Evaluations != 2 {
		t.Errorf("the next evaluation: stats %+v, want rank %d kept and no new raise", s2, st.PrecondRank)
	}
	// SetRaisedRank (a resumed run) sets it; 0 returns to the configured rank.
	raising.SetRaisedRank(0)
	if ev, err := raising.Evaluate(pr, y, 1, 9); err != nil || ev.Stats.PrecondRaised <= st.PrecondRaised {
		t.Errorf("after SetRaisedRank(0): %v, stats %+v: want the configured rank 4 raised again", err, ev.Stats)
	}
	noRaise := cfg
	noRaise.MaxPrecondRank = -1
	capped, err := ops.NewCGSolver(&denseSE{d: d}, noRaise)
	if err != nil {
		t.Fatal(err)
	}
	ev, err = capped.Evaluate(pr, y, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st := ev.Stats; st.Converged || st.NotConverged != 1 || st.PrecondRaised != 0 || st.PrecondRank != 4 {
		t.Errorf("MaxPrecondRank −1: stats %+v, want the rank-4 solve stopped by the cap and counted", st)
	}
}

// P⁻¹ of a preconditioner whose directions dwarf the noise (s²/σ² ≈ 1e17, beyond 1/ε) stays positive definite in
// floating point: vᵀP⁻¹v > 0 for vectors in U's span, where v/σ² less a correction of nearly its size cancelled
// (bike's subset fit broke CG's recursion that way), and it matches the stable form ‖(I − UUᵀ)v‖²/σ² +
// Σ (u_iᵀv)²/(σ² + s_i²) to 1e-8 for random vectors.
func TestLowRankPrecondSolveIllConditioned(t *testing.T) {
	n, k := 300, 20
	rng := rand.New(rand.NewPCG(8, 1))
	l := make([]float64, n*k)
	for i := range l {
		l[i] = 1e4 * rng.NormFloat64()
	}
	const noise = 1e-9
	pre, err := ops.NewLowRankPrecond(l, n, k, noise)
	if err != nil {
		t.Fatal(err)
	}
	u, s2 := pre.Eigen()
	r := len(s2)
	quad := func(v []float64) (got, want float64) {
		out := make([]float64, n)
		pre.Solve(v, out, 1)
		for i := range v {
			got += v[i] * out[i]
		}
		coef := make([]float64, r)
		perp := append([]float64(nil), v...)
		for m := 0; m < r; m++ {
			for i := 0; i < n; i++ {
				coef[m] += u[i*r+m] * v[i]
			}
		}
		for m := 0; m < r; m++ {
			for i := 0; i < n; i++ {
				perp[i] -= u[i*r+m] * coef[m]
			}
		}
		pp := 0.0
		for _, x := range perp {
			pp += x * x
		}
		want = pp / noise
		for m, c := range coef {
			want += c * c / (noise + s2[m])
		}
		return got, want
	}
	for trial := 0; trial < 20; trial++ {
		a := make([]float64, k)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		v := make([]float64, n) // L·a: in U's span
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				v[i] += l[i*k+j] * a[j]
			}
		}
		if got, _ := quad(v); !(got > 0) {
			t.Fatalf("trial %d: vᵀP⁻¹v = %g for v in U's span, want > 0", trial, got)
		}
		w := make([]float64, n)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		if got, want := quad(w); relErr(got, want) > 1e-8 {
			t.Errorf("trial %d: wᵀP⁻¹w = %.12g, stable form %.12g", trial, got, want)
		}
	}
}

// A column whose rᵀP⁻¹r is not positive (a preconditioner that is not positive definite on it) stops where it is and
// is counted as a breakdown; the other columns go on and converge, and no NaN reaches the tridiagonals.
func TestMBCGBreakdown(t *testing.T) {
	n, c := 40, 3
	rng := rand.New(rand.NewPCG(4, 4))
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = 1 + float64(i)
	}
	apply := func(v, out []float64, c int) error {
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				out[i*c+j] = diag[i] * v[i*c+j]
			}
		}
		return nil
	}
	precond := func(r, z []float64, c int) { // P = I, but −I on column 2
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				z[i*c+j] = r[i*c+j]
				if j == 2 {
					z[i*c+j] = -r[i*c+j]
				}
			}
		}
	}
	b := make([]float64, n*c)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	x := make([]float64, n*c)
	res, err := ops.MBCG(apply, precond, b, x, n, c, 1, ops.CGOptions{Tol: 1e-8, MaxIters: 100, Lanczos: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Breakdowns != 1 || res.Residuals[0] > 1e-8 || res.Residuals[1] > 1e-8 || res.Residuals[2] != 1 {
		t.Errorf("breakdowns %d, residuals %v: want column 2 stopped at its start and the others solved", res.Breakdowns, res.Residuals)
	}
	if len(res.Tridiag[0].Diag) != 5 || len(res.Tridiag[1].Diag) != 0 {
		t.Errorf("tridiagonals of %d and %d steps, want 5 and none", len(res.Tridiag[0].Diag), len(res.Tridiag[1].Diag))
	}
	for _, v := range res.Tridiag[0].Diag {
		if math.IsNaN(v) {
			t.Fatal("NaN in a tridiagonal")
		}
	}
}

// CG's recurrence residual drifts from b − A x on an ill-conditioned system: an SE kernel of variance 100 on 400
// points of [0, 10] with length-scale 0.5 and noise 1e-7 or 1e-8 (condition numbers near 1e11 and 1e12). MBCG
// reports the recurrence's residual at the tolerance while the true one is above it; MBCGChecked restarts from
// its solution on the true residual and reports b − A x itself: with noise 1e-7 a restart meets the tolerance,
// with noise 1e-8 restarts stall above it and the run is reported as not converged. Two columns, so the mean
// rule is checked too.
func TestMBCGCheckedRestarts(t *testing.T) {
	const n, c, tol = 400, 2, 1e-6
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = rng.Float64() * 10
	}
	a := mat.NewDense(n, n, nil)
	withNoise := func(noise float64) {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				d := xs[i] - xs[j]
				a.Set(i, j, 100*math.Exp(-d*d/(2*0.5*0.5)))
			}
			a.Set(i, i, a.At(i, i)+noise)
		}
	}
	apply := func(v, out []float64, c int) error {
		mat.NewDense(n, c, out).Mul(a, mat.NewDense(n, c, v))
		return nil
	}
	b := make([]float64, n*c)
	for i := 0; i < n; i++ {
		b[i*c] = math.Sin(xs[i]) + 0.1*rng.NormFloat64()
		b[i*c+1] = math.Cos(xs[i]) + 0.1*rng.NormFloat64()
	}
	trueResidual := func(x []float64) float64 { // the columns' mean ‖b − A x‖/‖b‖
		ax := make([]float64, n*c)
		_ = apply(x, ax, c)
		mean := 0.0
		for j := 0; j < c; j++ {
			r, bn := 0.0, 0.0
			for i := 0; i < n; i++ {
				r += (b[i*c+j] - ax[i*c+j]) * (b[i*c+j] - ax[i*c+j])
				bn += b[i*c+j] * b[i*c+j]
			}
			mean += math.Sqrt(r/bn) / c
		}
		return mean
	}
	o := ops.CGOptions{Tol: tol, MaxIters: 40000, MinIters: 1}
	for _, noise := range []float64{1e-7, 1e-8} {
		withNoise(noise)
		plain := make([]float64, n*c)
		res, err := ops.MBCG(apply, nil, b, plain, n, c, c, o)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged || !(trueResidual(plain) > 2*tol) {
			t.Fatalf("noise %g: MBCG converged %v at recurrence residual %.3g, true %.3g: want the drift this test is about", noise, res.Converged, res.MeanResidual(), trueResidual(plain))
		}
		checked := make([]float64, n*c)
		res, err = ops.MBCGChecked(apply, nil, b, checked, n, c, o)
		if err != nil {
			t.Fatal(err)
		}
		got := trueResidual(checked)
		t.Logf("noise %g: MBCG: true residual %.3g; MBCGChecked: %d iterations, %d restarts, true residual %.3g", noise, trueResidual(plain), res.Iters, res.Restarts, got)
		if math.Abs(res.MeanResidual()-got) > 1e-3*got || res.Restarts < 1 || res.Converged != (got <= tol) {
			t.Errorf("noise %g: converged %v, %d restarts, residual %.3g reported, %.3g true", noise, res.Converged, res.Restarts, res.MeanResidual(), got)
		}
		var nc *ops.NotConvergedError
		switch {
		case noise == 1e-7 && !res.Converged:
			t.Errorf("noise 1e-7: a restart should meet the tolerance")
		case noise == 1e-8 && (res.Converged || !errors.As(res.Err(tol), &nc) || nc.Mean != res.MeanResidual()):
			t.Errorf("noise 1e-8: want a NotConvergedError with the true residual, got %v", res.Err(tol))
		}
	}
	// A well-conditioned system needs no restart: one run, and the reported residual is the true one.
	withNoise(1)
	checked := make([]float64, n*c)
	if res, err := ops.MBCGChecked(apply, nil, b, checked, n, c, o); err != nil || !res.Converged || res.Restarts != 0 || math.Abs(res.MeanResidual()-trueResidual(checked)) > 1e-3*tol {
		t.Errorf("noise 1: %+v, %v", res, err)
	}
	// A run stopped by its cap is reported as MBCG reports it, not restarted.
	clear(checked)
	if res, err := ops.MBCGChecked(apply, nil, b, checked, n, c, ops.CGOptions{Tol: 1e-14, MaxIters: 5, MinIters: 1}); err != nil || res.Converged || res.Iters != 5 || res.Restarts != 0 {
		t.Errorf("capped: %+v, %v", res, err)
	}
}
