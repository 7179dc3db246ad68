package ops

import (
	"fmt"
	"math"
)

// Modified batched conjugate gradients (mBCG: Gardner, Pleiss, Bindel, Weinberger & Wilson 2018, "GPyTorch:
// Blackbox Matrix-Matrix Gaussian Process Inference with GPU Acceleration", arXiv 1809.11165, Algorithm 2 and
// Appendix A): one preconditioned CG run solves A X = B for every column of B at once — each iteration is one
// product of A with an [n,c] block, the kernel products of an exact GP — and records, for the columns that are
// probe vectors, the coefficients of the Lanczos tridiagonal matrix that CG computes implicitly, from which
// stochastic Lanczos quadrature estimates log|A| (cg_lanczos.go).
//
// Every block is row-major [n,c]. Column sums run in row order on one goroutine, so the result has the same bits
// for every GOMAXPROCS when the products do.

// NotConvergedError reports a CG run that reached its iteration cap with its mean relative residual above its
// tolerance.
type NotConvergedError struct {
	Iters    int     // iterations run (the cap)
	Mean     float64 // the columns' mean relative residual ‖b − A x‖/‖b‖
	Column   int     // the column with the largest relative residual
	Residual float64 // its relative residual
	Tol      float64
}

func (e *NotConvergedError) Error() string {
	return fmt.Sprintf("ops: conjugate gradients stopped after %d iterations with mean relative residual %.3g (largest %.3g, column %d) above the tolerance %.3g: raise the iteration cap or the preconditioner's rank",
		e.Iters, e.Mean, e.Residual, e.Column, e.Tol)
}

// Unwrap returns ErrNotConverged.
func (e *NotConvergedError) Unwrap() error { return ErrNotConverged }

// CGOptions configures MBCG. Zero values mean the defaults below.
type CGOptions struct {
	// Tol: the run has converged when the mean of the columns' relative residuals ‖b − A x‖/‖b‖ is at most Tol
	// (default DefaultCGTol; GPyTorch's rule: a single column, the solve of a prediction, is held to Tol itself).
	Tol float64
	// MaxIters caps the iterations (default DefaultCGMaxIters); MinIters is the least number run (default
	// DefaultCGMinIters; GPyTorch's 10).
	MaxIters, MinIters int
	// Lanczos is the number of Lanczos steps recorded for the tridiagonal columns (0: none). The run takes at
	// least that many iterations when it has tridiagonal columns (as GPyTorch's linear_cg), unless a column's
	// Krylov space is exhausted first.
	Lanczos int
}

// Defaults of CGOptions (GPyTorch's training settings: linear_operator's cg_tolerance, max_cg_iterations and
// linear_cg's minimum of 10 iterations).
const (
	DefaultCGTol      = 1.0
	DefaultCGMaxIters = 1000
	DefaultCGMinIters = 10
)

// cgFreeze is the relative residual below which a column stops being updated (GPyTorch's stop_updating_after),
// unless the tolerance asks for less (then a hundredth of it): its search direction has no more information, and
// dividing by its vanishing curvature would only add noise.
const cgFreeze = 1e-12

func (o CGOptions) withDefaults() CGOptions {
	if !(o.Tol > 0) {
		o.Tol = DefaultCGTol
	}
	if o.MaxIters <= 0 {
		o.MaxIters = DefaultCGMaxIters
	}
	if o.MinIters <= 0 {
		o.MinIters = DefaultCGMinIters
	}
	o.MinIters = min(o.MinIters, o.MaxIters)
	o.Lanczos = max(0, o.Lanczos)
	return o
}

// Tridiag is a symmetric tridiagonal matrix: its diagonal and its off-diagonal (one shorter).
type Tridiag struct {
	Diag, Off []float64
}

// CGResult describes a run of MBCG.
type CGResult struct {
	Iters int
	// Residuals are the columns' final relative residuals ‖b − A x‖/‖b‖ (0 for a zero column of b): computed
	// from CG's recurrence by MBCG, from b − A x itself by MBCGChecked.
	Residuals []float64
	// Converged reports that their mean is within the tolerance.
	Converged bool
	// Tridiag holds the Lanczos tridiagonal of each tridiagonal column (columns triFrom, …, c−1), of the
	// preconditioned operator P^(−1/2) A P^(−1/2) started at P^(−1/2) b_j, and StartNorm its start vector's squared
	// norm b_jᵀ P⁻¹ b_j (the quadrature weight of stochastic Lanczos quadrature). Only from a zero initial guess.
	Tridiag   []Tridiag
	StartNorm []float64
	// Breakdowns counts the columns stopped where they were because rᵀP⁻¹r was not positive with their residual
	// above the freezing threshold: in exact arithmetic that needs P not positive definite, in floating point an
	// ill-conditioned P⁻¹ (their tridiagonals keep the steps recorded before).
	Breakdowns int
	// Restarts counts MBCGChecked's restarts: runs whose recurrence met the tolerance while b − A x did not.
	Restarts int
}

// MaxResidual returns the largest relative residual and its column.
func (r *CGResult) MaxResidual() (float64, int) {
	worst, col := 0.0, 0
	for j, v := range r.Residuals {
		if v > worst {
			worst, col = v, j
		}
	}
	return worst, col
}

// MeanResidual returns the mean of the columns' relative residuals.
func (r *CGResult) MeanResidual() float64 {
	s := 0.0
	for _, v := range r.Residuals {
		s += v
	}
	return s / float64(len(r.Residuals))
}

// Err returns a *NotConvergedError when the run did not converge, else nil.
func (r *CGResult) Err(tol float64) error {
	if r.Converged {
		return nil
	}
	worst, col := r.MaxResidual()
	return &NotConvergedError{Iters: r.Iters, Mean: r.MeanResidual(), Column: col, Residual: worst, Tol: tol}
}

// MBCG solves A X = B for the c columns of b [n,c] by preconditioned conjugate gradients run on all columns at
// once (Gardner et al. 2018, Algorithm 2): apply(v, out, c) writes A·v for a block v [n,c] into out; precond(r, z,
// c) writes P⁻¹r (nil: no preconditioner, P = I). x [n,c] holds the initial guess (a warm start, or zeros) and
// receives the solution. The columns triFrom, …, c−1 (probe vectors, whose initial guess must be zero) get their
// Lanczos tridiagonals (o.Lanczos steps at most); triFrom ≥ c records none.
//
// The run stops once the mean of the columns' relative residuals is at most o.Tol after at least o.MinIters
// iterations (and o.Lanczos iterations when there are tridiagonal columns: GPyTorch's linear_cg), or after
// o.MaxIters: the result then reports Converged false (Err gives the typed error). A CG residual's norm is not
// monotone: on an ill-conditioned system a column may hover near its start for many iterations while the
// error's energy norm falls, so the mean, not the largest, decides. A column whose residual falls below 1e-12 of its right-hand side (or a
// hundredth of o.Tol) stops being updated, and so does one whose rᵀP⁻¹r is not positive above that threshold (a
// breakdown: CGResult.Breakdowns). A search direction of non-positive curvature pᵀAp ≤ 0 (A not positive definite) is an
// error wrapping ErrNotPD; a non-finite product one wrapping ErrNonFinite.
func MBCG(apply func(v, out []float64, c int) error, precond func(r, z []float64, c int), b, x []float64, n, c, triFrom int, o CGOptions) (*CGResult, error) {
	return mbcg(apply, precond, b, x, nil, n, c, triFrom, o)
}

// mbcg is MBCG started from the residual r0 = b − A x when it is known (MBCGChecked's restarts; nil: formed).
func mbcg(apply func(v, out []float64, c int) error, precond func(r, z []float64, c int), b, x, r0 []float64, n, c, triFrom int, o CGOptions) (*CGResult, error) {
	if n <= 0 || c <= 0 || len(b) != n*c || len(x) != n*c {
		return nil, &ShapeError{Op: "MBCG", Want: fmt.Sprintf("b and x of %d×%d values", n, c), Got: fmt.Sprintf("%d and %d", len(b), len(x))}
	}
	if err := CheckFinite("MBCG right-hand sides", b, c); err != nil {
		return nil, err
	}
	if err := CheckFinite("MBCG initial guess", x, c); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	triFrom = min(max(triFrom, 0), c)
	ntri := c - triFrom
	res := &CGResult{Residuals: make([]float64, c)}
	r, z, d, v := make([]float64, n*c), make([]float64, n*c), make([]float64, n*c), make([]float64, n*c)
	if len(r0) == len(r) {
		copy(r, r0)
	} else if err := residualTo(r, apply, b, x, c); err != nil {
		return nil, err
	}
	bnorm := colNorms(b, n, c)
	precondTo(precond, r, z, c)
	copy(d, z)
	rz := colDots(r, z, n, c)
	frozen := make([]bool, c)
	freeze := min(cgFreeze, o.Tol/100)
	resid := colNorms(r, n, c)
	broken := func(j int, rz float64) bool { // see CGResult.Breakdowns
		if frozen[j] || rz > 0 || resid[j] <= freeze {
			return false
		}
		frozen[j] = true
		res.Breakdowns++
		return true
	}
	for j := range resid {
		resid[j] = relative(resid[j], bnorm[j])
		frozen[j] = resid[j] <= freeze
		broken(j, rz[j])
	}
	if ntri > 0 {
		res.Tridiag, res.StartNorm = make([]Tridiag, ntri), make([]float64, ntri)
		copy(res.StartNorm, rz[triFrom:])
	}
	alpha, beta := make([]float64, c), make([]float64, c)
	prevAlpha, prevBeta := make([]float64, c), make([]float64, c)
	recording := make([]bool, c)
	for j := triFrom; j < c; j++ {
		recording[j] = !frozen[j]
	}
	minIters := o.MinIters
	if ntri > 0 {
		minIters = max(minIters, min(o.Lanczos, o.MaxIters))
	}
	allFrozen := func() bool {
		for _, f := range frozen {
			if !f {
				return false
			}
		}
		return true
	}
	for it := 0; it < o.MaxIters && !allFrozen(); it++ {
		if err := apply(d, v, c); err != nil {
			return nil, err
		}
		if err := CheckFinite("MBCG product", v, c); err != nil {
			return nil, err
		}
		dAd := colDots(d, v, n, c)
		for j := range alpha {
			alpha[j] = 0
			if frozen[j] {
				continue
			}
			if !(dAd[j] > 0) {
				return nil, fmt.Errorf("ops: MBCG: iteration %d, column %d: search direction of curvature pᵀAp = %g: %w", it, j, dAd[j], ErrNotPD)
			}
			alpha[j] = rz[j] / dAd[j]
		}
		for i := 0; i < n; i++ {
			xr, rr, dr, vr := x[i*c:(i+1)*c], r[i*c:(i+1)*c], d[i*c:(i+1)*c], v[i*c:(i+1)*c]
			for j, a := range alpha {
				xr[j] += a * dr[j]
				rr[j] -= a * vr[j]
			}
		}
		res.Iters = it + 1
		rn := colNorms(r, n, c)
		mean := 0.0
		for j := range rn {
			if !frozen[j] {
				resid[j] = relative(rn[j], bnorm[j])
			}
			mean += resid[j]
		}
		if mean/float64(c) <= o.Tol && res.Iters >= minIters {
			break
		}
		precondTo(precond, r, z, c)
		rzNew := colDots(r, z, n, c)
		for j := range beta {
			beta[j] = 0
			if broken(j, rzNew[j]) {
				recording[j] = false
			}
			if !frozen[j] && rz[j] > 0 {
				beta[j] = rzNew[j] / rz[j]
			}
			rz[j] = rzNew[j]
		}
		for j := triFrom; j < c; j++ {
			if !recording[j] {
				continue
			}
			t := &res.Tridiag[j-triFrom]
			k := len(t.Diag)
			diag := 1 / alpha[j]
			if k > 0 {
				diag += prevBeta[j] / prevAlpha[j]
				t.Off = append(t.Off, math.Sqrt(prevBeta[j])/prevAlpha[j])
			}
			t.Diag = append(t.Diag, diag)
			if len(t.Diag) >= o.Lanczos {
				recording[j] = false
			}
		}
		copy(prevAlpha, alpha)
		copy(prevBeta, beta)
		for i := 0; i < n; i++ {
			zr, dr := z[i*c:(i+1)*c], d[i*c:(i+1)*c]
			for j, bt := range beta {
				if !frozen[j] {
					dr[j] = zr[j] + bt*dr[j]
				}
			}
		}
		for j := range frozen {
			if !frozen[j] && resid[j] <= freeze {
				frozen[j], recording[j] = true, false
			}
		}
	}
	copy(res.Residuals, resid)
	mean := res.MeanResidual()
	res.Converged = mean <= o.Tol
	if math.IsNaN(mean) {
		return nil, &NonFiniteError{Where: "MBCG residual", Value: mean}
	}
	return res, nil
}

// cgMaxRestarts bounds MBCGChecked's restarts.
const cgMaxRestarts = 3

// MBCGChecked is MBCG for solves that must meet their tolerance in fact: a prediction's α = K̂⁻¹y at 1e-6, a
// variance's K̂⁻¹k*. CG's recurrence updates the residual r ← r − αAd instead of forming b − A x, and in floating
// point the two drift apart on an ill-conditioned A (Greenbaum 1997, "Iterative Methods for Solving Linear
// Systems", §7.3): an SE kernel of variance 100 with noise 1e-7 ends with a recurrence residual of 7e-7 and a
// true one of 3e-6, with noise 1e-8 of 8e-7 and 5e-5 (TestMBCGCheckedRestarts). After a run that meets its
// tolerance, MBCGChecked forms b − A x (one product) and, while its mean relative norm is above the tolerance,
// restarts CG from x on the true residual, as long as each restart at least halves it (at most cgMaxRestarts
// restarts, counted in CGResult.Restarts; the iteration cap counts every run's iterations). The result's
// Residuals are then the true ones and Converged says whether they meet the tolerance: a system beyond CG's
// attainable accuracy is reported as not converged, never as a silent result. It records no tridiagonals.
func MBCGChecked(apply func(v, out []float64, c int) error, precond func(r, z []float64, c int), b, x []float64, n, c int, o CGOptions) (*CGResult, error) {
	o = o.withDefaults()
	o.Lanczos = 0
	total := &CGResult{}
	v := make([]float64, len(b))
	bn := colNorms(b, n, c)
	prev := math.Inf(1)
	var r0 []float64 // a restart's residual: the check's b − A x
	for run := 0; ; run++ {
		res, err := mbcg(apply, precond, b, x, r0, n, c, c, o)
		if err != nil {
			return nil, err
		}
		total.Iters += res.Iters
		total.Breakdowns += res.Breakdowns
		if !res.Converged && run == 0 {
			return res, nil // the cap: the recurrence's residuals, as MBCG reports them
		}
		if err := residualTo(v, apply, b, x, c); err != nil {
			return nil, err
		}
		total.Residuals = colNorms(v, n, c)
		for j, r := range total.Residuals {
			total.Residuals[j] = relative(r, bn[j])
		}
		mean := total.MeanResidual()
		total.Converged = mean <= o.Tol
		left := o.MaxIters - res.Iters
		if total.Converged || !res.Converged || mean > prev/2 || run == cgMaxRestarts || left <= 0 {
			return total, nil
		}
		prev, r0 = mean, v
		total.Restarts++
		o.MaxIters = left
		o.MinIters = min(o.MinIters, left)
	}
}

// residualTo writes b − A x into r (all [n,c]; r may not alias x), checking the product is finite.
func residualTo(r []float64, apply func(v, out []float64, c int) error, b, x []float64, c int) error {
	if err := apply(x, r, c); err != nil {
		return err
	}
	if err := CheckFinite("MBCG product", r, c); err != nil {
		return err
	}
	for i := range r {
		r[i] = b[i] - r[i]
	}
	return nil
}

// relative returns num/den, or num itself for a zero den (the residual of a zero right-hand side is reported
// as the absolute one).
func relative(num, den float64) float64 {
	if den == 0 {
		return num
	}
	return num / den
}

// precondTo writes P⁻¹r into z (a copy of r without a preconditioner).
func precondTo(precond func(r, z []float64, c int), r, z []float64, c int) {
	if precond == nil {
		copy(z, r)
		return
	}
	precond(r, z, c)
}

// colDots returns Σ_i a_ij b_ij for every column j of the row-major [n,c] blocks a and b, summed in row order.
func colDots(a, b []float64, n, c int) []float64 {
	s := make([]float64, c)
	for i := 0; i < n; i++ {
		ar, br := a[i*c:(i+1)*c], b[i*c:(i+1)*c]
		for j, v := range ar {
			s[j] += v * br[j]
		}
	}
	return s
}

// colNorms returns the Euclidean norm of every column of the row-major [n,c] block a.
func colNorms(a []float64, n, c int) []float64 {
	s := colDots(a, a, n, c)
	for j, v := range s {
		s[j] = math.Sqrt(v)
	}
	return s
}
