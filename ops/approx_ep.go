package ops

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
)

// Expectation propagation for an exact GP with a non-Gaussian likelihood (Rasmussen & Williams 2006, "R&W",
// §3.6, Algorithms 3.5 and 3.6; the gradient of §5.5.2): Gaussian sites t̃_i(f_i) ∝ N(f_i; μ̃_i, 1/τ̃_i) chosen so
// that each marginal of q(f) ∝ N(f; m, K) Π t̃_i matches the moments of its tilted distribution
// p(y_i | f_i) q_{−i}(f_i), by sequential (rank-one updates of Σ) or parallel sweeps with damping.

// Defaults of EPOptions.
const (
	// DefaultEPTol: EP stops when a parallel sweep's undamped update would move no site by more than DefaultEPTol
	// (|Δτ̃_i|/(1 + |τ̃_i|) and |Δν̃_i|/(1 + |ν̃_i|)): the residual of EP's fixed-point equations, not the damped
	// step, which a small damping shrinks without bringing the sites closer to the fixed point (a sequential
	// sweep, undamped by default, stops on the changes it made). The log marginal likelihood is stationary in the
	// sites at the fixed point, so its error is second order in the sites' and its gradient's first order.
	DefaultEPTol = 1e-7
	// DefaultEPMaxSweeps bounds the sweeps; more is a *ConvergenceError.
	DefaultEPMaxSweeps = 500
	// DefaultEPParallelDamping is the initial damping δ of parallel sweeps (every site moves δ of the way to its
	// update). Undamped parallel EP can oscillate, so δ adapts (epAdaptDamping): it halves (down to epMinDamping)
	// after a sweep whose residual grew or whose step turned back on the one before, and doubles (up to 1) after
	// a step that went on in the same direction. Where EP does not oscillate, undamped sweeps converge in the
	// fewest (german's 700 rows: 5 sweeps per evaluation on average against 12 at δ = 0.5).
	DefaultEPParallelDamping = 1.0
	// DefaultEPSequentialDamping is the damping δ of sequential sweeps (R&W's Algorithm 3.5: undamped).
	DefaultEPSequentialDamping = 1.0
)

// epMinDamping is the smallest damping the parallel sweeps' adaptation reaches.
const epMinDamping = 1.0 / 64

// EPOptions configures EPApprox and the EPLML op. Zero values mean the defaults.
type EPOptions struct {
	// Tol is the convergence tolerance (DefaultEPTol).
	Tol float64
	// MaxSweeps bounds the sweeps (DefaultEPMaxSweeps).
	MaxSweeps int
	// Damping δ ∈ (0, 1] moves each site δ of the way to its update, in natural parameters (default
	// DefaultEPParallelDamping for parallel sweeps, where it is the initial value of an adaptation that halves it
	// whenever the sites' change grows; DefaultEPSequentialDamping for sequential ones).
	Damping float64
	// Sequential updates the sites one after another with rank-one updates of Σ (R&W Algorithm 3.5, O(N²) per
	// site); by default a sweep updates every site from the same posterior and refactorises once (parallel EP,
	// BLAS-3, much faster for N in the thousands, damped).
	Sequential bool
	// QuadPoints is the number of Gauss–Hermite nodes of tilted moments without a closed form (EPQuadPoints:
	// DefaultEPQuadPoints for log-concave likelihoods, DefaultEPQuadPointsHeavy for others).
	QuadPoints int
	// Cold starts every run of the op from τ̃ = ν̃ = 0; by default a run starts from the previous run's sites.
	Cold bool
	// Stats, when set, records every approximation (not hashed).
	Stats *ApproxStats
}

func (o EPOptions) tol() float64 {
	if o.Tol > 0 {
		return o.Tol
	}
	return DefaultEPTol
}

func (o EPOptions) maxSweeps() int {
	if o.MaxSweeps > 0 {
		return o.MaxSweeps
	}
	return DefaultEPMaxSweeps
}

func (o EPOptions) damping() float64 {
	switch {
	case o.Damping > 0:
		return math.Min(o.Damping, 1)
	case o.Sequential:
		return DefaultEPSequentialDamping
	}
	return DefaultEPParallelDamping
}

func (o EPOptions) points() int { return max(o.QuadPoints, 0) }

// epState is EP's posterior given its sites: the factorisation, diag Σ and μ.
type epState struct {
	tau, nu  []float64
	fac      gaFactor
	diag, mu []float64
}

// epPosterior computes s's posterior from its sites: Σ = (K⁻¹ + diag τ̃)⁻¹, μ = m + Σ(ν̃ − τ̃m).
func epPosterior(s *epState, k, m []float64, n int) error {
	if err := factorise(&s.fac, k, s.tau, n); err != nil {
		return err
	}
	s.diag, _ = s.fac.sigmaParts(k, false)
	pv := make([]float64, n)
	for i := range pv {
		pv[i] = s.nu[i] - s.tau[i]*m[i]
	}
	s.mu = s.fac.sigmaApply(k, pv)
	for i := range s.mu {
		s.mu[i] += m[i]
	}
	return nil
}

// siteUpdate returns site i's update (τ̃, ν̃) from the marginal N(mu, v) of q and its current site, and false when
// the cavity is not a distribution (τ_{−i} ≤ 0) or the moments are unusable: the site is then left as it is.
func siteUpdate(lik ScalarLogLik, y, mu, v, tau, nu float64, theta []float64, points int) (float64, float64, bool) {
	tc, nc := 1/v-tau, mu/v-nu
	if !(tc > 0) || math.IsInf(tc, 0) {
		return 0, 0, false
	}
	t, err := TiltedMoments(lik, y, nc/tc, 1/tc, theta, points, nil)
	if err != nil {
		return 0, 0, false
	}
	tn := 1/t.Var - tc
	nn := t.Mean/t.Var - nc
	if math.IsNaN(tn) || math.IsInf(tn, 0) || math.IsNaN(nn) || math.IsInf(nn, 0) {
		return 0, 0, false
	}
	return tn, nn, true
}

// EPApprox returns EP's approximation of the posterior of an exact GP with prior N(m, K) (K [n,n] row-major, m
// [n]) and the likelihood lik(y_i | f_i, θ), starting from the sites (startTau, startNu) (nil: τ̃ = ν̃ = 0; sites
// that give no valid posterior are dropped for zeros). Tilted moments are closed form for a TiltedLogLik (the
// probit), else by Gauss–Hermite quadrature (TiltedMoments). A site whose cavity has no positive precision is
// skipped in that sweep; a parallel sweep whose damped step leaves K⁻¹ + diag τ̃ indefinite is retried with half
// the step (up to 20 times). LogZ is R&W's eq. 3.65 in precision form (finite for zero and negative τ̃):
//
//	log Z_EP = Σ log Ẑ_i − ½log|I + KT̃| + ½Σ log(1 + τ̃_i/τ_{−i}) + ½pᵀΣp + Σ_i (q_i²τ̃_i/τ_{−i} − 2q_ip_i − p_i²)/(2(τ_{−i} + τ̃_i)),
//
// with p = ν̃ − τ̃m and q_i = ν_{−i} − τ_{−i}m_i (the cavities' natural parameters shifted by the prior mean).
//
// Errors: a *ShapeError or *NonFiniteError for bad operands, a *ConvergenceError when the sweeps run out,
// ErrApproxNotPD (wrapped) when no valid posterior is found, a cavity without positive
// precision at the fixed point.
func EPApprox(k, m, y []float64, n int, lik ScalarLogLik, theta []float64, o EPOptions, startTau, startNu []float64) (q *GaussApprox, err error) {
	if err := checkApproxArgs("EPApprox", k, m, y, n, lik, theta); err != nil {
		return nil, err
	}
	sweeps := 0
	defer func() { o.Stats.record(sweeps, err != nil) }()
	tol, maxSweeps, delta, points := o.tol(), o.maxSweeps(), o.damping(), o.points()
	s := &epState{tau: make([]float64, n), nu: make([]float64, n)}
	warm := false
	if len(startTau) == n && len(startNu) == n {
		copy(s.tau, startTau)
		copy(s.nu, startNu)
		warm = epPosterior(s, k, m, n) == nil
	}
	if !warm {
		clear(s.tau)
		clear(s.nu)
		if err := epPosterior(s, k, m, n); err != nil {
			return nil, err
		}
	}
	change := math.Inf(1)
	var step, prevStep []float64 // parallel sweeps' steps, each site's relative change
	for sweeps < maxSweeps {
		sweeps++
		prev := change
		if o.Sequential {
			change, err = epSweepSequential(s, k, m, y, n, lik, theta, delta, points)
		} else {
			step, prevStep = prevStep, step
			change, step, err = epSweepParallel(s, k, m, y, n, lik, theta, delta, points, step)
			if err == nil {
				delta = epAdaptDamping(delta, change, prev, step, prevStep)
			}
		}
		if err != nil {
			return nil, err
		}
		if change <= tol {
			break
		}
	}
	if change > tol {
		return nil, &ConvergenceError{Method: "EP", Iters: sweeps, Change: change, Tol: tol, Reason: "sweep limit"}
	}
	q = &GaussApprox{N: n, W: s.tau, Nu: s.nu, Mean: s.mu, Iters: sweeps, fac: s.fac, k: k}
	q.Alpha = make([]float64, n) // α = p − τ̃(μ − m)
	for i := range q.Alpha {
		q.Alpha[i] = s.nu[i] - s.tau[i]*m[i] - s.tau[i]*(s.mu[i]-m[i])
	}
	if q.LogZ, err = epLogZ(s, m, y, lik, theta, points, nil); err != nil {
		return nil, err
	}
	return q, nil
}

// siteChange returns the larger relative change of a site's two natural parameters.
func siteChange(tauOld, tauNew, nuOld, nuNew float64) float64 {
	return math.Max(math.Abs(tauNew-tauOld)/(1+math.Abs(tauOld)), math.Abs(nuNew-nuOld)/(1+math.Abs(nuOld)))
}

// epSweepParallel updates every site from the current marginals, damped by delta (halved while the posterior is
// not valid), and recomputes the posterior. It returns the residual, the largest relative change of a site's
// undamped update, and the step taken [2n] (each τ̃_i's relative change, then each ν̃_i's), written into step's
// storage.
func epSweepParallel(s *epState, k, m, y []float64, n int, lik ScalarLogLik, theta []float64, delta float64, points int, step []float64) (float64, []float64, error) {
	tn, nn := append([]float64(nil), s.tau...), append([]float64(nil), s.nu...)
	resid := 0.0
	for i := 0; i < n; i++ {
		if t, v, ok := siteUpdate(lik, y[i], s.mu[i], s.diag[i], s.tau[i], s.nu[i], theta, points); ok {
			tn[i], nn[i] = t, v
			resid = math.Max(resid, siteChange(s.tau[i], t, s.nu[i], v))
		}
	}
	oldTau, oldNu := s.tau, s.nu
	var err error
	for try := 0; try < 20; try, delta = try+1, delta/2 {
		s.tau, s.nu = make([]float64, n), make([]float64, n)
		for i := range s.tau {
			s.tau[i] = oldTau[i] + delta*(tn[i]-oldTau[i])
			s.nu[i] = oldNu[i] + delta*(nn[i]-oldNu[i])
		}
		if err = epPosterior(s, k, m, n); err == nil {
			step = grow(step, 2*n)
			for i := range s.tau {
				step[i] = (s.tau[i] - oldTau[i]) / (1 + math.Abs(oldTau[i]))
				step[n+i] = (s.nu[i] - oldNu[i]) / (1 + math.Abs(oldNu[i]))
			}
			return resid, step, nil
		}
		if !errors.Is(err, ErrApproxNotPD) {
			break
		}
	}
	s.tau, s.nu = oldTau, oldNu
	return 0, step, fmt.Errorf("ops: EP: no damped parallel step keeps the posterior valid: %w", err)
}

// epAdaptDamping returns the damping of the next parallel sweep after one at delta with residual resid (prev
// before it) and step (prevStep before it; nil after the first sweep). An oscillating mode of the sweeps' map,
// an eigenvalue λ near −1 of its Jacobian, turns each step back on the one before; the damped map's eigenvalue
// 1 − δ + δλ is near 0 at δ = ½, so δ halves when the cosine of the two steps is below −½ (or the residual grew);
// a slowly converging mode (λ near 1) keeps the direction and needs δ as large as it may be, so δ doubles when
// the cosine is above 0.9. On splice (1000 rows, 60 inputs) late in the hyperparameter search, halving only on a
// growing change left δ = 1 for slowly decaying oscillations (the change shrank 1% a sweep): 108 to 466 sweeps
// per evaluation, some reaching the sweep limit, where this rule takes 14 to 21 (docs/laplace-ep.md).
func epAdaptDamping(delta, resid, prev float64, step, prevStep []float64) float64 {
	cos := 0.0
	if len(prevStep) == len(step) {
		var ab, aa, bb float64
		for i, a := range step {
			b := prevStep[i]
			ab += a * b
			aa += a * a
			bb += b * b
		}
		if aa > 0 && bb > 0 {
			cos = ab / math.Sqrt(aa*bb)
		}
	}
	switch {
	case resid > prev || cos < -0.5:
		return math.Max(delta/2, epMinDamping)
	case cos > 0.9:
		return math.Min(2*delta, 1)
	}
	return delta
}

// epSweepSequential updates the sites one after another (R&W Algorithm 3.5), each followed by the rank-one update
// of Σ and μ, a step that would leave Σ indefinite shortened; then recomputes the posterior from the sites.
func epSweepSequential(s *epState, k, m, y []float64, n int, lik ScalarLogLik, theta []float64, delta float64, points int) (float64, error) {
	sigma := s.fac.sigmaFull(k)
	mu := append([]float64(nil), s.mu...)
	col := make([]float64, n)
	change := 0.0
	for i := 0; i < n; i++ {
		sii := sigma[i*n+i]
		tn, nn, ok := siteUpdate(lik, y[i], mu[i], sii, s.tau[i], s.nu[i], theta, points)
		if !ok {
			continue
		}
		dt, dn := delta*(tn-s.tau[i]), delta*(nn-s.nu[i])
		for h := 0; h < 30 && 1+dt*sii <= 1e-8; h++ { // Σ stays positive definite iff 1 + Δτ̃Σ_ii > 0
			dt, dn = dt/2, dn/2
		}
		den := 1 + dt*sii
		if den <= 1e-8 {
			continue
		}
		change = math.Max(change, siteChange(s.tau[i], s.tau[i]+dt, s.nu[i], s.nu[i]+dn))
		s.tau[i] += dt
		s.nu[i] += dn
		for j := range col {
			col[j] = sigma[j*n+i]
		}
		c, dm := dt/den, (dn-dt*mu[i])/den
		blas64.Ger(-c, blas64.Vector{N: n, Inc: 1, Data: col}, blas64.Vector{N: n, Inc: 1, Data: col}, dense(sigma, n, n))
		for j := range mu {
			mu[j] += dm * col[j]
		}
	}
	if err := epPosterior(s, k, m, n); err != nil {
		return 0, fmt.Errorf("ops: EP: the posterior after a sequential sweep: %w", err)
	}
	return change, nil
}

// epLogZ returns log Z_EP of s (see EPApprox), and writes Σ_i ∂log Ẑ_i/∂θ_j into dtheta when it is not nil.
func epLogZ(s *epState, m, y []float64, lik ScalarLogLik, theta []float64, points int, dtheta []float64) (float64, error) {
	nt := lik.NumTheta()
	var dt []float64
	if dtheta != nil && nt > 0 {
		dt = make([]float64, nt)
		clear(dtheta[:nt])
	}
	sum := -0.5 * s.fac.logDet()
	for i := range s.tau {
		v := s.diag[i]
		tc, nc := 1/v-s.tau[i], s.mu[i]/v-s.nu[i]
		if !(tc > 0) {
			return 0, fmt.Errorf("ops: EP: the cavity of site %d has precision %v at the fixed point (want > 0)", i, tc)
		}
		t, err := TiltedMoments(lik, y[i], nc/tc, 1/tc, theta, points, dt)
		if err != nil {
			return 0, fmt.Errorf("ops: EP: site %d: %w", i, err)
		}
		for j, d := range dt {
			dtheta[j] += d
		}
		pi := s.nu[i] - s.tau[i]*m[i]
		qi := nc - tc*m[i]
		sum += t.LogZ + 0.5*math.Log1p(s.tau[i]/tc) + 0.5*pi*(s.mu[i]-m[i]) +
			(qi*qi*s.tau[i]/tc-2*qi*pi-pi*pi)/(2*(tc+s.tau[i]))
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return 0, &NonFiniteError{Where: "EPApprox log marginal likelihood", Value: sum}
	}
	return sum, nil
}

// EPGrad writes the gradient of q.LogZ (q from EPApprox with the same m, y, lik, θ and options; K the one q was
// computed for) at EP's fixed point, where log Z_EP is stationary in the sites (R&W §5.5.2):
//
//	∂/∂K = ½(ααᵀ − R)  (R = (K + T̃⁻¹)⁻¹, α = R(μ̃ − m)),   ∂/∂m = α,   ∂/∂θ_j = Σ_i ∂log Ẑ_i/∂θ_j  (cavities fixed),
//
// each scaled by g, into gk [n,n], gm [n] and gth [NumTheta] (any may be nil).
func EPGrad(q *GaussApprox, m, y []float64, lik ScalarLogLik, theta []float64, o EPOptions, g float64, gk, gm, gth []float64) error {
	if q == nil || q.k == nil || q.Nu == nil || len(y) != q.N || len(m) != q.N {
		return fmt.Errorf("ops: EPGrad: no EP approximation for these %d targets", len(y))
	}
	n := q.N
	if gk != nil {
		_, r := q.fac.sigmaParts(q.k, true)
		a := q.Alpha
		for i := 0; i < n; i++ {
			row, rrow := gk[i*n:(i+1)*n], r[i*n:(i+1)*n]
			for j := range row {
				row[j] = g * 0.5 * (a[i]*a[j] - rrow[j])
			}
		}
	}
	for i := range gm { // nil: not wanted
		gm[i] = g * q.Alpha[i]
	}
	if nt := lik.NumTheta(); nt > 0 && gth != nil {
		s := &epState{tau: q.W, nu: q.Nu, fac: q.fac, mu: q.Mean}
		s.diag, _ = q.fac.sigmaParts(q.k, false)
		if _, err := epLogZ(s, m, y, lik, theta, o.points(), gth); err != nil {
			return err
		}
		for j := range gth[:nt] {
			gth[j] *= g
		}
	}
	return nil
}
