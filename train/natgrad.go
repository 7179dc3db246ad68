package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Natural-gradient steps for Gaussian variational distributions q(u) = N(m, S), S = L·Lᵀ (Hensman, Fusi &
// Lawrence 2013; Salimbeni, Eleftheriadis & Hensman 2018, "Natural gradients in practice", eq. 10; MATH.md §5).
//
// With natural parameters θ = (θ₁, θ₂) = (S⁻¹m, −½S⁻¹) and expectation parameters η = (m, S + mmᵀ), the natural
// gradient of the loss ℒ with respect to θ is its ordinary gradient with respect to η, so one step is
//
//	θ ← θ − γ·∇_η ℒ,   ∇_η₁ℒ = ∇_mℒ − 2(∇_Sℒ)m,   ∇_η₂ℒ = ∇_Sℒ   (∇_S symmetric),
//
// i.e. the precision Λ = −2θ₂ becomes Λ + 2γ∇_S and θ₁ becomes θ₁ − γ(∇_m − 2∇_S m). For a Gaussian likelihood
// the loss is linear in η apart from the KL term, and one full-batch step with γ = 1 lands on the optimal q.

// Defaults of NatGradConfig.
const (
	// DefaultNatGradGamma is the default constant step size γ. It is the value Salimbeni et al. (2018) found
	// safe for non-conjugate likelihoods (reached after a log-linear ramp from 1e-4); with a Gaussian likelihood
	// and the full data set, γ = 1 is exact in one step and should be set explicitly.
	DefaultNatGradGamma = 0.1
	// DefaultNatGradMaxHalvings is the default NatGradConfig.MaxHalvings: how many times a step whose new
	// precision is not positive definite is retried with γ halved (down to γ/2¹⁰ ≈ γ/1000).
	DefaultNatGradMaxHalvings = 10
)

// NatGradConfig configures NewNatGrad. Zero values mean the documented defaults.
type NatGradConfig struct {
	// Q are the variational distributions the hook owns (required, no duplicates). Their Params are claimed:
	// the Optimizer (Adam) skips them. Each must be trainable and read by the loss.
	Q []*gp.GaussianQ
	// Gamma is the step size γ > 0 (after the ramp); 0 means DefaultNatGradGamma.
	Gamma float64
	// GammaStart, if > 0, starts a ramp: γ rises (or falls) log-linearly from GammaStart at step 0 to Gamma at
	// step RampSteps and stays at Gamma afterwards (Salimbeni et al. 2018 use 1e-4 → 0.1 over a few iterations
	// for non-conjugate likelihoods). 0 means no ramp.
	GammaStart float64
	// RampSteps is the length of the ramp in steps; it is required (> 0) when GammaStart > 0.
	RampSteps int
	// MaxHalvings bounds the retries of a step whose new precision is not positive definite: each retry halves
	// γ for that step and output only, and is counted in NatGradStats.Halvings. 0 means
	// DefaultNatGradMaxHalvings; a negative value means no retry. When every retry fails AfterBackward returns
	// a *NatGradError (which unwraps to ops.ErrNotPD).
	MaxHalvings int
}

// NatGradStats counts what a NatGrad hook did.
type NatGradStats struct {
	Steps     int     // AfterBackward calls that updated every q
	Updates   int     // natural steps applied (one per q and output per step)
	Halvings  int     // retries with a halved γ because the new precision was not positive definite
	LastGamma float64 // the scheduled γ of the most recent step (before any halving)
}

// NatGrad is a Hook that replaces the Optimizer's update of q(u)'s mean and Cholesky factor by a natural-gradient
// step in the natural parameters (see the comment at the top of natgrad.go), per q and per output. Use it with
// Adam on every other Param, as Salimbeni et al. (2018) do: both act on the gradients of the same forward/backward
// pass.
//
// A full-covariance q (GaussianQ with LowerTriangular factors) takes the full natural step. A Diag q takes the
// mean-field natural step: each coordinate i is its own Gaussian N(m_i, S_ii) and is updated with ∇_{m_i} and
// ∇_{S_ii} only (the exact natural gradient within the mean-field family, whose Fisher matrix is block
// diagonal per coordinate). With a Gaussian likelihood and a correlated posterior precision P, once the variances
// have settled this is a damped Jacobi iteration on the mean, m ← (1−γ)m + γD⁻¹(b − (P−D)m) with D = diag P: it
// converges only for γ < 2/λ_max(D⁻¹P), which γ < 2/M always satisfies (λ_max < tr(D⁻¹P) = M), so a Diag q needs
// a smaller γ than a full one (γ = 1 diverges in general). (GPflow's NaturalGradient does not support a
// diagonal q_sqrt at all.)
type NatGrad struct {
	qs          []*gp.GaussianQ
	gamma       float64
	start       float64
	ramp        int
	maxHalvings int
	stats       NatGradStats
}

// NatGradError reports a natural step whose new precision −2θ₂ stayed not positive definite after every γ
// halving. The q's Params are left as they were (and Train restores every Param to the last good step).
type NatGradError struct {
	Step     int     // the step index (Step.Index)
	Param    string  // the name of the output's factor Param (GaussianQ.Sqrt[Output])
	Output   int     // the output p
	Gamma    float64 // the last (smallest) γ tried
	Halvings int     // retries made
	Err      error   // the last factorisation error (wraps ops.ErrNotPD)
}

func (e *NatGradError) Error() string {
	return fmt.Sprintf("train: NatGrad step %d, %q (output %d): new precision not positive definite after %d halvings of γ (last γ %g): %v",
		e.Step, e.Param, e.Output, e.Halvings, e.Gamma, e.Err)
}

// Unwrap returns the factorisation error (errors.Is(err, ops.ErrNotPD) holds).
func (e *NatGradError) Unwrap() error { return e.Err }

// NewNatGrad returns the natural-gradient hook for c.Q. It fails on an empty, nil or repeated q, a q whose
// Params do not have GaussianQ's transforms (Identity mean; LowerTriangular factors, or Positive for Diag), or
// an invalid step-size schedule (γ not finite and > 0, GammaStart < 0, GammaStart > 0 without RampSteps > 0).
func NewNatGrad(c NatGradConfig) (*NatGrad, error) {
	if len(c.Q) == 0 {
		return nil, errors.New("train: NewNatGrad: no q")
	}
	seen := map[*gp.GaussianQ]bool{}
	for i, q := range c.Q {
		if q == nil || q.Mu == nil {
			return nil, fmt.Errorf("train: NewNatGrad: q %d is nil", i)
		}
		if seen[q] {
			return nil, fmt.Errorf("train: NewNatGrad: q %d (%q) given twice", i, q.Mu.Name())
		}
		seen[q] = true
		if err := checkQ(q); err != nil {
			return nil, fmt.Errorf("train: NewNatGrad: q %d: %w", i, err)
		}
	}
	h := &NatGrad{qs: append([]*gp.GaussianQ(nil), c.Q...), gamma: c.Gamma, start: c.GammaStart, ramp: c.RampSteps}
	if h.gamma == 0 {
		h.gamma = DefaultNatGradGamma
	}
	if !(h.gamma > 0) || math.IsInf(h.gamma, 1) {
		return nil, fmt.Errorf("train: NewNatGrad: Gamma %v must be finite and positive", c.Gamma)
	}
	if !(h.start >= 0) || math.IsInf(h.start, 1) {
		return nil, fmt.Errorf("train: NewNatGrad: GammaStart %v must be finite and ≥ 0", c.GammaStart)
	}
	if h.ramp < 0 || (h.start > 0 && h.ramp == 0) {
		return nil, fmt.Errorf("train: NewNatGrad: RampSteps %d must be positive when GammaStart > 0 (and never negative)", c.RampSteps)
	}
	switch {
	case c.MaxHalvings == 0:
		h.maxHalvings = DefaultNatGradMaxHalvings
	case c.MaxHalvings < 0:
		h.maxHalvings = 0
	default:
		h.maxHalvings = c.MaxHalvings
	}
	return h, nil
}

func checkQ(q *gp.GaussianQ) error {
	if _, ok := q.Mu.Transform().(graph.Identity); !ok {
		return fmt.Errorf("mean %q has transform %v, want Identity", q.Mu.Name(), q.Mu.Transform())
	}
	if len(q.Sqrt) != q.P() {
		return fmt.Errorf("%d factors for %d outputs", len(q.Sqrt), q.P())
	}
	for p, s := range q.Sqrt {
		if s == nil {
			return fmt.Errorf("factor %d is nil", p)
		}
		var ok bool
		if q.Diag {
			_, ok = s.Transform().(graph.Positive)
		} else {
			_, ok = s.Transform().(graph.LowerTriangular)
		}
		if !ok {
			return fmt.Errorf("factor %d (%v) does not have GaussianQ's transform (Diag = %v)", p, s, q.Diag)
		}
	}
	return nil
}

// Claims returns the Params of every q (means and factors): the Optimizer leaves them to the hook.
func (h *NatGrad) Claims() []*graph.Param {
	var ps []*graph.Param
	for _, q := range h.qs {
		ps = append(ps, q.Params()...)
	}
	return ps
}

// Gamma returns the step size γ scheduled for step (0-based): without a ramp the constant Gamma; with one,
// GammaStart·(Gamma/GammaStart)^(step/RampSteps) for 0 ≤ step < RampSteps and Gamma from step RampSteps on.
func (h *NatGrad) Gamma(step int) float64 {
	if h.start <= 0 || step >= h.ramp {
		return h.gamma
	}
	if step <= 0 {
		return h.start
	}
	return h.start * math.Pow(h.gamma/h.start, float64(step)/float64(h.ramp))
}

// Stats returns the hook's counters.
func (h *NatGrad) Stats() NatGradStats { return h.stats }

var _ Stateful = (*NatGrad)(nil)

// MarshalState encodes the hook's counters (Stateful). They are its only state: the step size depends on the
// step index alone and q lives in its Params, which a checkpoint saves with the others.
func (h *NatGrad) MarshalState([]*graph.Param) ([]byte, error) {
	return EncodeState("NatGrad", h.stats)
}

// UnmarshalState restores the counters MarshalState encoded (Stateful); it fails on undecodable data.
func (h *NatGrad) UnmarshalState(_ []*graph.Param, data []byte) error {
	var st NatGradStats
	if err := DecodeState("NatGrad", data, &st); err != nil {
		return err
	}
	h.stats = st
	return nil
}

// AfterBackward takes one natural step on every q and output from the step's gradients (s.Grads), with γ =
// h.Gamma(s.Index), and writes the new mean and factor back (GaussianQ.Mu.Set, GaussianQ.SetSqrt). The
// gradients are with respect to raw values; they are converted to ∇_m and ∇_L through the transforms (the
// diagonal of L is softplus(raw) + floor, whose derivative is sigmoid(raw)), then to the symmetric ∇_S by
// CovGradFromSqrt.
//
// Errors: a q Param the Program does not differentiate (frozen, or not in the loss); a non-finite converted
// gradient (*ops.NonFiniteError, e.g. when sigmoid(raw) underflows); *NatGradError when the new precision stays
// not positive definite after MaxHalvings halvings of γ; an error from setting the new value (a factor diagonal
// at or below the transform's floor). On error the q being updated keeps its previous value.
func (h *NatGrad) AfterBackward(s *Step) error {
	if s == nil || s.Grads == nil {
		return errors.New("train: NatGrad: nil step or gradients")
	}
	gamma := h.Gamma(s.Index)
	h.stats.LastGamma = gamma
	for _, q := range h.qs {
		if err := h.stepQ(s, q, gamma); err != nil {
			return err
		}
	}
	h.stats.Steps++
	return nil
}

func (h *NatGrad) stepQ(s *Step, q *gp.GaussianQ, gamma float64) error {
	m, np := q.M(), q.P()
	gMu := s.Grads.Grad(q.Mu)
	if gMu == nil {
		return fmt.Errorf("train: NatGrad: %q is not differentiated by the program (frozen, or not in the loss)", q.Mu.Name())
	}
	mu := q.MeanValue() // [M,P]
	newMu := append([]float64(nil), mu...)
	newL := make([][]float64, np)
	mp, gm := make([]float64, m), make([]float64, m)
	for p := 0; p < np; p++ {
		sp := q.Sqrt[p]
		graw := s.Grads.Grad(sp)
		if graw == nil {
			return fmt.Errorf("train: NatGrad: %q is not differentiated by the program (frozen, or not in the loss)", sp.Name())
		}
		for i := 0; i < m; i++ {
			mp[i], gm[i] = mu[i*np+p], gMu[i*np+p] // Identity transform: raw gradient = ∇_m
		}
		raw := sp.Raw()
		// Convert the raw gradient of the factor to ∇_S (or, for Diag, to ∇ of the variances S_ii).
		var l, sd, gS []float64
		if q.Diag {
			sd = sp.Value() // [M] standard deviations
			gS = make([]float64, m)
			for i := range gS {
				// ∇_{s_i} = ∇_{raw_i}/sigmoid(raw_i); S_ii = s_i², so ∇_{S_ii} = ∇_{s_i}/(2 s_i).
				gS[i] = graw[i] / sigmoid(raw[i]) / (2 * sd[i])
			}
			if err := ops.CheckFinite("NatGrad ∇S diagonal of "+sp.Name(), gS, 1); err != nil {
				return fmt.Errorf("train: %w", err)
			}
		} else {
			l = q.SqrtValue(p)
			gl := make([]float64, m*m)
			for i := 0; i < m; i++ {
				copy(gl[i*m:i*m+i], graw[i*m:i*m+i])          // strictly lower part: identity
				gl[i*m+i] = graw[i*m+i] / sigmoid(raw[i*m+i]) // diagonal: softplus(raw) + floor
			}
			if err := ops.CheckFinite("NatGrad ∇L of "+sp.Name(), gl, m); err != nil {
				return fmt.Errorf("train: %w", err)
			}
			gS = make([]float64, m*m)
			CovGradFromSqrt(gS, l, gl, m)
		}
		var (
			nm, nl []float64
			err    error
		)
		g := gamma
		for k := 0; ; k++ {
			if q.Diag {
				var nsd []float64
				if nm, nsd, err = NaturalStepDiag(mp, sd, gm, gS, g); err == nil {
					nl = make([]float64, m*m)
					for i, v := range nsd {
						nl[i*m+i] = v
					}
				}
			} else {
				nm, nl, err = NaturalStep(mp, l, gm, gS, m, g)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, ops.ErrNotPD) {
				return fmt.Errorf("train: NatGrad %q: %w", sp.Name(), err)
			}
			if k >= h.maxHalvings {
				return &NatGradError{Step: s.Index, Param: sp.Name(), Output: p, Gamma: g, Halvings: k, Err: err}
			}
			g /= 2
			h.stats.Halvings++
		}
		for i := 0; i < m; i++ {
			newMu[i*np+p] = nm[i]
		}
		newL[p] = nl
	}
	// Write back, restoring this q's raw values if any Set fails.
	saved := make([][]float64, 0, 1+np)
	for _, prm := range q.Params() {
		saved = append(saved, append([]float64(nil), prm.Raw()...))
	}
	restore := func(err error) error {
		for i, prm := range q.Params() {
			copy(prm.Raw(), saved[i])
		}
		return fmt.Errorf("train: NatGrad: writing the new q: %w", err)
	}
	if err := q.Mu.Set(newMu); err != nil {
		return restore(err)
	}
	for p := 0; p < np; p++ {
		if err := q.SetSqrt(p, newL[p]); err != nil {
			return restore(err)
		}
	}
	h.stats.Updates += np
	return nil
}

// sigmoid returns 1/(1+e⁻ˣ) without overflow: the derivative of softplus.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// CovGradFromSqrt writes into dst (n×n, row-major) the symmetric gradient ∇_S of a loss with respect to a
// covariance S, given its lower Cholesky factor l (S = L·Lᵀ) and the gradient gradL = ∇_L of the same loss seen
// as a function of L (only the lower triangle of gradL is read). Because L = chol(S), this is the Cholesky
// backward pass: ∇_S = ops.CholeskyBackward(L, tril(∇_L)) (Murray 2016), symmetric, with ⟨∇_S, dS⟩ = ⟨∇_L, dL⟩
// for every symmetric dS. dst may alias gradL but not l. It panics if a length is not n·n.
func CovGradFromSqrt(dst, l, gradL []float64, n int) {
	ops.CholeskyBackward(dst, l, gradL, n)
}

// NaturalStep takes one natural-gradient step (Salimbeni et al. 2018, eq. 10) for one Gaussian N(m, S) of
// dimension n, S = L·Lᵀ, given the loss gradients gradM = ∇_m [n] and gradS = ∇_S [n,n] (symmetric; it is
// symmetrised), with step size gamma > 0:
//
//	Λ = S⁻¹,  θ₁ = S⁻¹m,  Λ' = Λ + 2γ∇_S,  θ₁' = θ₁ − γ(∇_m − 2∇_S m),  S' = Λ'⁻¹,  m' = S'θ₁'.
//
// It returns m' [n] and the lower Cholesky factor L' of S' [n,n] (zero strictly upper part, positive diagonal),
// in new slices; the inputs are not modified. Λ is formed from L with triangular solves (it is the natural
// parameter itself), and L' and m' come from the Cholesky factor of Λ' by the reversal trick (see the code);
// no system is ever solved through an explicit inverse.
//
// Errors: *ops.ShapeError for lengths that do not match n; an error for γ not finite and positive or a factor l
// whose diagonal is not positive; *ops.NonFiniteError for a non-finite input; an error wrapping *ops.NotPDError
// (errors.Is(err, ops.ErrNotPD)) when Λ' is not positive definite: the step is too long, retry with a smaller γ.
func NaturalStep(m, l, gradM, gradS []float64, n int, gamma float64) (newM, newL []float64, err error) {
	if n <= 0 || len(m) != n || len(l) != n*n || len(gradM) != n || len(gradS) != n*n {
		return nil, nil, &ops.ShapeError{Op: "NaturalStep", Want: fmt.Sprintf("n = %d > 0, m and gradM of length n, l and gradS of length n·n", n),
			Got: fmt.Sprintf("len(m)=%d, len(l)=%d, len(gradM)=%d, len(gradS)=%d", len(m), len(l), len(gradM), len(gradS))}
	}
	if err := checkStepInputs("NaturalStep", gamma, []string{"m", "l", "gradM", "gradS"}, m, l, gradM, gradS); err != nil {
		return nil, nil, err
	}
	for i := 0; i < n; i++ {
		if !(l[i*n+i] > 0) {
			return nil, nil, fmt.Errorf("train: NaturalStep: factor diagonal entry %d is %v, want > 0", i, l[i*n+i])
		}
	}
	// Λ = S⁻¹ = L⁻ᵀL⁻¹ (two triangular solves against I), θ₁ = S⁻¹m (two solves).
	lam := make([]float64, n*n)
	for i := 0; i < n; i++ {
		lam[i*n+i] = 1
	}
	ops.CholSolveTo(lam, l, lam, n, n)
	theta1 := make([]float64, n)
	ops.CholSolveTo(theta1, l, m, n, 1)
	// Gradient step in the natural parameters, with G = sym(∇_S):
	// Λ' = −2θ₂' = Λ + 2γG,  θ₁' = θ₁ − γ(∇_m − 2Gm).
	gm := make([]float64, n) // G·m
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < n; j++ {
			s += 0.5 * (gradS[i*n+j] + gradS[j*n+i]) * m[j]
		}
		gm[i] = s
	}
	for i := 0; i < n; i++ {
		theta1[i] -= gamma * (gradM[i] - 2*gm[i])
		for j := 0; j <= i; j++ {
			v := 0.5*(lam[i*n+j]+lam[j*n+i]) + gamma*(gradS[i*n+j]+gradS[j*n+i])
			lam[i*n+j], lam[j*n+i] = v, v
		}
	}
	// Reversal trick. With J the reversal permutation, chol(JΛ'J) = L_r gives Λ' = U·Uᵀ with U = J·L_r·J upper
	// triangular, so S' = Λ'⁻¹ = U⁻ᵀU⁻¹ and chol(S') = U⁻ᵀ (lower, positive diagonal). Computing U⁻ᵀ by a
	// triangular solve against I forms the new parameter's own factor (the value we store), not the solution of
	// a system; the mean is m' = S'θ₁' = U⁻ᵀ(U⁻¹θ₁'), two triangular solves with U.
	rev := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rev[i*n+j] = lam[(n-1-i)*n+(n-1-j)]
		}
	}
	// No jitter: a jittered Λ' would silently change the step; the caller shortens γ instead.
	if _, err := ops.CholeskyLower(rev, rev, n, ops.JitterPolicy{MaxTries: -1}); err != nil {
		return nil, nil, fmt.Errorf("train: NaturalStep: new precision −2θ₂: %w", err)
	}
	u := lam // reuse: U = J·L_r·J
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			u[i*n+j] = rev[(n-1-i)*n+(n-1-j)]
		}
	}
	newL = make([]float64, n*n)
	for i := 0; i < n; i++ {
		newL[i*n+i] = 1
	}
	ops.TriSolveTo(newL, u, newL, n, n, true, true) // U⁻ᵀ
	for i := 0; i < n; i++ {
		clear(newL[i*n+i+1 : i*n+n])
	}
	newM = theta1
	ops.TriSolveTo(newM, u, newM, n, 1, true, false) // U⁻¹θ₁'
	ops.TriSolveTo(newM, u, newM, n, 1, true, true)  // U⁻ᵀ(U⁻¹θ₁')
	if err := ops.CheckFinite("NaturalStep result", append(append([]float64(nil), newM...), newL...), 1); err != nil {
		return nil, nil, fmt.Errorf("train: %w", err)
	}
	return newM, newL, nil
}

// NaturalStepDiag is NaturalStep for a mean-field Gaussian Π_i N(m_i, sd_i²): each coordinate takes its own
// one-dimensional natural step with ∇_{m_i} = gradM[i] and ∇_{S_ii} = gradVar[i] (the gradient with respect to
// the variance sd_i², not the standard deviation):
//
//	λ_i = 1/sd_i²,  λ_i' = λ_i + 2γ∇_{S_ii},  θ_i' = λ_i m_i − γ(∇_{m_i} − 2∇_{S_ii} m_i),  m_i' = θ_i'/λ_i'.
//
// It returns m' and the new standard deviations sd' = 1/√λ' [n] in new slices. Errors: *ops.ShapeError for
// lengths that differ or are zero; an error for γ not finite and positive or sd not positive;
// *ops.NonFiniteError for a non-finite input; an error wrapping *ops.NotPDError when some λ_i' ≤ 0.
func NaturalStepDiag(m, sd, gradM, gradVar []float64, gamma float64) (newM, newSd []float64, err error) {
	n := len(m)
	if n == 0 || len(sd) != n || len(gradM) != n || len(gradVar) != n {
		return nil, nil, &ops.ShapeError{Op: "NaturalStepDiag", Want: "four non-empty slices of one length",
			Got: fmt.Sprintf("len(m)=%d, len(sd)=%d, len(gradM)=%d, len(gradVar)=%d", n, len(sd), len(gradM), len(gradVar))}
	}
	if err := checkStepInputs("NaturalStepDiag", gamma, []string{"m", "sd", "gradM", "gradVar"}, m, sd, gradM, gradVar); err != nil {
		return nil, nil, err
	}
	newM, newSd = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		if !(sd[i] > 0) {
			return nil, nil, fmt.Errorf("train: NaturalStepDiag: standard deviation %d is %v, want > 0", i, sd[i])
		}
		lam := 1 / (sd[i] * sd[i])
		theta := lam*m[i] - gamma*(gradM[i]-2*gradVar[i]*m[i])
		lam += 2 * gamma * gradVar[i]
		if !(lam > 0) || math.IsInf(lam, 1) {
			return nil, nil, fmt.Errorf("train: NaturalStepDiag: new precision %v of coordinate %d: %w", lam, i, &ops.NotPDError{N: n, Tries: 1})
		}
		newM[i], newSd[i] = theta/lam, 1/math.Sqrt(lam)
	}
	return newM, newSd, nil
}

// checkStepInputs checks γ and that every vector of vs (named by names) is finite.
func checkStepInputs(fn string, gamma float64, names []string, vs ...[]float64) error {
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		return fmt.Errorf("train: %s: gamma %v must be finite and positive", fn, gamma)
	}
	for i, v := range vs {
		if err := ops.CheckFinite(fn+" "+names[i], v, 1); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	return nil
}
