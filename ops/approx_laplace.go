package ops

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// The Laplace approximation of an exact GP with a non-Gaussian likelihood (Rasmussen & Williams 2006, "R&W", §3.4
// and §5.5.1): the mode of ψ(f) = log p(y | f) − ½(f − m)ᵀK⁻¹(f − m) by damped Newton steps (Algorithm 3.1 with a
// line search), the approximate log marginal likelihood log q(y) = ψ(f̂) − ½log|I + KW| and its gradient in K,
// m and the likelihood's parameters (Algorithm 5.1, which needs ∂³log p/∂f³).

// Defaults of LaplaceOptions.
const (
	// DefaultLaplaceTol: Newton's method iterates until its residual max_i |∂ψ/∂f_i| = max_i |∂log p/∂f_i − α_i|
	// stops falling by half an iteration (round-off's floor: Newton converges quadratically, so that is one or two
	// iterations after the residual is small) and is then converged when the residual is at most
	// DefaultLaplaceTol·max(1, max_i |∂log p/∂f_i|).
	DefaultLaplaceTol = 1e-8
	// DefaultLaplaceMaxIter bounds the Newton iterations.
	DefaultLaplaceMaxIter = 100
)

// LaplaceOptions configures LaplaceApprox and the LaplaceLML op. Zero values mean the defaults.
type LaplaceOptions struct {
	// Tol is the convergence tolerance (DefaultLaplaceTol).
	Tol float64
	// MaxIter bounds Newton's iterations (DefaultLaplaceMaxIter); more is a *ConvergenceError.
	MaxIter int
	// Cold starts every run of the op at f = m; by default a run starts from the previous run's mode when that is
	// better (an optimiser's nearby hyperparameters: fewer iterations), as GPML's infLaplace does.
	Cold bool
	// Stats, when set, records every approximation (not hashed).
	Stats *ApproxStats
}

func (o LaplaceOptions) tol() float64 {
	if o.Tol > 0 {
		return o.Tol
	}
	return DefaultLaplaceTol
}

func (o LaplaceOptions) maxIter() int {
	if o.MaxIter > 0 {
		return o.MaxIter
	}
	return DefaultLaplaceMaxIter
}

// ApproxStats accumulates what the Laplace and EP approximations did: safe for concurrent use; the zero value is
// ready. Models report it ("EP converged in 4 sweeps").
type ApproxStats struct {
	mu sync.Mutex
	s  ApproxStatsSnapshot
}

// ApproxStatsSnapshot is a copy of ApproxStats.
type ApproxStatsSnapshot struct {
	Calls     int64 // approximations computed (converged or not)
	Iters     int64 // Newton iterations or EP sweeps, summed
	LastIters int   // of the latest call
	MaxIters  int   // the most of any call
	Failures  int64 // calls that returned an error (not converged, not positive definite)
}

// Snapshot returns a copy (the zero snapshot for a nil receiver).
func (s *ApproxStats) Snapshot() ApproxStatsSnapshot {
	if s == nil {
		return ApproxStatsSnapshot{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s
}

func (s *ApproxStats) record(iters int, failed bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.s.Calls++
	s.s.Iters += int64(iters)
	s.s.LastIters = iters
	s.s.MaxIters = max(s.s.MaxIters, iters)
	if failed {
		s.s.Failures++
	}
	s.mu.Unlock()
}

// checkApproxArgs checks the operands of LaplaceApprox and EPApprox.
func checkApproxArgs(op string, k, m, y []float64, n int, lik ScalarLogLik, theta []float64) error {
	if lik == nil {
		return fmt.Errorf("ops: %s: nil likelihood", op)
	}
	if n < 1 || len(k) != n*n || len(m) != n || len(y) != n {
		return &ShapeError{Op: op, Want: fmt.Sprintf("K [%d,%d], m and y [%d]", n, n, n), Got: fmt.Sprintf("%d, %d and %d entries", len(k), len(m), len(y))}
	}
	if len(theta) != lik.NumTheta() {
		return &ShapeError{Op: op + "(" + lik.Name() + ")", Want: fmt.Sprintf("%d likelihood parameters", lik.NumTheta()), Got: fmt.Sprint(len(theta))}
	}
	for _, c := range []struct {
		what string
		a    []float64
		cols int
	}{{"K", k, n}, {"the prior mean", m, 1}, {"the targets", y, 1}, {"the likelihood parameters", theta, 1}} {
		if err := CheckFinite(op+" "+c.what, c.a, c.cols); err != nil {
			return err
		}
	}
	return nil
}

// laplacePsi returns ψ = Σ log p(y_i | f_i) − ½αᵀ(f − m).
func laplacePsi(lik ScalarLogLik, f, m, y, a, theta []float64) float64 {
	s, q := 0.0, 0.0
	for i, fi := range f {
		s += lik.LogProb(fi, y[i], theta)
		q += a[i] * (fi - m[i])
	}
	return s - 0.5*q
}

// backtrack takes the Newton direction (dα, K·dα) from (α, f) = (a, f), halving the step until ψ (psi at the start;
// eval(f, α) elsewhere) does not fall beyond round-off (near the mode a full Newton step changes ψ by less than its
// rounding, and must still be taken), at most 50 times. It updates a and f in place and returns ψ there and
// whether it moved; at and ft are scratch of a's length.
func backtrack(a, f, da, kda, at, ft []float64, psi float64, eval func(f, a []float64) float64) (float64, bool) {
	slack := 1e-14 * (1 + math.Abs(psi))
	t := 1.0
	for ls := 0; ls < 50; ls++ {
		for i := range at {
			at[i] = a[i] + t*da[i]
			ft[i] = f[i] + t*kda[i]
		}
		if pt := eval(ft, at); pt >= psi-slack {
			copy(a, at)
			copy(f, ft)
			return pt, true
		}
		t /= 2
	}
	return psi, false
}

// LaplaceApprox returns the Laplace approximation of the posterior of an exact GP with prior N(m, K) (K [n,n]
// row-major, m [n]) and the likelihood lik(y_i | f_i, θ), starting Newton's method at α = start (f = Kα + m; nil
// or worse than f = m: at f = m).
//
// Each iteration takes R&W's Newton step (Algorithm 3.1) in α, with W = −∂²log p: through B = I + W^½KW^½ when
// W ≥ 0, with the negative entries' Woodbury correction when some W < 0 and K⁻¹ + W is still positive definite
// (the exact Newton step), and with
// W clipped at 0 otherwise (an ascent direction wherever ψ is not concave, as GPML's infLaplace does), then a
// backtracking line search on ψ (halving the step until ψ does not decrease): damped Newton, which converges on
// data with outliers where the plain step diverges. At the mode the approximation is factorised with the true W
// (see GaussApprox). LogZ = ψ(f̂) − ½log|I + KW|.
//
// Errors: a *ShapeError or *NonFiniteError for bad operands, a *ConvergenceError when the iterations run out or
// the line search stalls away from the mode, ErrApproxNotPD (wrapped) when K⁻¹ + W is not positive definite at
// the mode.
func LaplaceApprox(k, m, y []float64, n int, lik LaplaceLogLik, theta []float64, o LaplaceOptions, start []float64) (q *GaussApprox, err error) {
	if err := checkApproxArgs("LaplaceApprox", k, m, y, n, lik, theta); err != nil {
		return nil, err
	}
	iters := 0
	defer func() { o.Stats.record(iters, err != nil) }()
	tol, maxIter := o.tol(), o.maxIter()
	a := make([]float64, n)
	f := append([]float64(nil), m...)
	psi := laplacePsi(lik, f, m, y, a, theta)
	if len(start) == n {
		fs := make([]float64, n)
		matVec(fs, k, start, n, n)
		for i := range fs {
			fs[i] += m[i]
		}
		if ps := laplacePsi(lik, fs, m, y, start, theta); ps > psi && !math.IsNaN(ps) {
			copy(a, start)
			f, psi = fs, ps
		}
	}
	d1, w := make([]float64, n), make([]float64, n)
	b, kb, da, kda := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	at, ft := make([]float64, n), make([]float64, n)
	var step gaFactor
	prevRes := math.Inf(1)
	for ; ; iters++ {
		neg := false
		res, scale := 0.0, 1.0
		for i, fi := range f {
			g1, g2, _ := lik.DerivsF(fi, y[i], theta)
			d1[i], w[i] = g1, -g2
			neg = neg || w[i] < 0
			res = math.Max(res, math.Abs(g1-a[i]))
			scale = math.Max(scale, math.Abs(g1))
		}
		if math.IsNaN(res) {
			return nil, &ConvergenceError{Method: "Laplace", Iters: iters, Change: res, Tol: tol, Reason: "non-finite derivatives of the likelihood"}
		}
		// Newton's residual falls quadratically near the mode until round-off stops it: iterate to that floor (the
		// log marginal likelihood's gradient assumes ∂ψ/∂f = 0), and accept it when it is within the tolerance.
		if res <= 1e-15*scale || (res > prevRes/2 && res <= tol*scale) {
			break
		}
		prevRes = res
		if iters == maxIter {
			return nil, &ConvergenceError{Method: "Laplace", Iters: iters, Change: res / scale, Tol: tol, Reason: "iteration limit"}
		}
		ws := w
		if neg {
			if ferr := factorise(&step, k, w, n); ferr != nil {
				if !errors.Is(ferr, ErrApproxNotPD) {
					return nil, ferr
				}
				ws = make([]float64, n) // K⁻¹ + W indefinite here: W clipped at 0
				for i, v := range w {
					ws[i] = math.Max(v, 0)
				}
				neg = false
			}
		}
		if !neg {
			if ferr := factorise(&step, k, ws, n); ferr != nil {
				return nil, ferr
			}
		}
		// b = W(f − m) + ∇log p; α_new = b − R·K·b (R = (K + W⁻¹)⁻¹); the direction dα = α_new − α.
		for i := range b {
			b[i] = ws[i]*(f[i]-m[i]) + d1[i]
		}
		matVec(kb, k, b, n, n)
		step.applyR(kb, kb)
		for i := range da {
			da[i] = b[i] - kb[i] - a[i]
		}
		matVec(kda, k, da, n, n)
		var moved bool
		psi, moved = backtrack(a, f, da, kda, at, ft, psi, func(f, a []float64) float64 { return laplacePsi(lik, f, m, y, a, theta) })
		if !moved {
			// No step improves ψ: at the mode to round-off, unless the residual says otherwise.
			if res <= math.Sqrt(tol)*scale {
				break
			}
			return nil, &ConvergenceError{Method: "Laplace", Iters: iters + 1, Change: res / scale, Tol: tol, Reason: "the line search found no increase of ψ"}
		}
	}
	q = &GaussApprox{N: n, Alpha: a, W: w, Mean: f, Iters: iters, k: k}
	if err := factorise(&q.fac, k, w, n); err != nil {
		return nil, fmt.Errorf("ops: the Laplace approximation at the mode: %w", err)
	}
	q.LogZ = psi - 0.5*q.fac.logDet()
	if math.IsNaN(q.LogZ) || math.IsInf(q.LogZ, 0) {
		return nil, &NonFiniteError{Where: "LaplaceApprox log marginal likelihood", Value: q.LogZ}
	}
	return q, nil
}

// LaplaceGrad writes the gradient of q.LogZ (q from LaplaceApprox with the same y, lik and θ; K is the one q was
// computed for) by R&W's Algorithm 5.1, extended to a prior mean and to the likelihood's parameters:
//
//	s₂ = ½ diag(Σ)·∂³log p,  t = (I − RK)s₂  (R = (K + W⁻¹)⁻¹, Σ = (K⁻¹ + W)⁻¹),
//	∂/∂K = ½(ααᵀ − R) + ½(t∇ᵀ + ∇tᵀ)  (∇ = ∂log p/∂f at f̂; symmetric),
//	∂/∂m = α + t,
//	∂/∂θ_j = Σ_i ∂log p_i/∂θ_j + ½Σ_ii ∂³log p_i/∂f²∂θ_j + (Kt)_i ∂²log p_i/∂f∂θ_j,
//
// each scaled by g, into gk [n,n], gm [n] and gth [NumTheta] (any may be nil: not computed).
func LaplaceGrad(q *GaussApprox, y []float64, lik LaplaceLogLik, theta []float64, g float64, gk, gm, gth []float64) error {
	if q == nil || q.k == nil || len(y) != q.N {
		return fmt.Errorf("ops: LaplaceGrad: no approximation for these %d targets", len(y))
	}
	n, k := q.N, q.k
	diag, r := q.fac.sigmaParts(k, gk != nil)
	s2, d1 := make([]float64, n), make([]float64, n)
	for i, fi := range q.Mean {
		g1, _, g3 := lik.DerivsF(fi, y[i], theta)
		d1[i], s2[i] = g1, 0.5*diag[i]*g3
	}
	t := make([]float64, n) // t = s₂ − R·K·s₂
	matVec(t, k, s2, n, n)
	q.fac.applyR(t, t)
	for i := range t {
		t[i] = s2[i] - t[i]
	}
	if gk != nil {
		a := q.Alpha
		for i := 0; i < n; i++ {
			row, rrow := gk[i*n:(i+1)*n], r[i*n:(i+1)*n]
			for j := range row {
				row[j] = g * (0.5*(a[i]*a[j]-rrow[j]) + 0.5*(t[i]*d1[j]+d1[i]*t[j]))
			}
		}
	}
	for i := range gm { // nil: not wanted
		gm[i] = g * (q.Alpha[i] + t[i])
	}
	if nt := lik.NumTheta(); nt > 0 && gth != nil {
		kt := make([]float64, n)
		matVec(kt, k, t, n, n)
		lp, a1, a2 := make([]float64, nt), make([]float64, nt), make([]float64, nt)
		clear(gth[:nt])
		for i, fi := range q.Mean {
			lik.DLogProbDTheta(fi, y[i], theta, lp)
			lik.DerivsFTheta(fi, y[i], theta, a1, a2)
			for j := range lp {
				gth[j] += lp[j] + 0.5*diag[i]*a2[j] + kt[i]*a1[j]
			}
		}
		for j := range gth[:nt] {
			gth[j] *= g
		}
	}
	return nil
}
