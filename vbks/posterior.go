package vbks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Defaults of PosteriorConfig. A zero field of PosteriorConfig takes the matching default.
const (
	// DefaultPosteriorIters is the number of Adam steps FitPosterior takes.
	DefaultPosteriorIters = 3000
	// DefaultPosteriorSamples is the number of reparameterisation draws η per Adam step.
	DefaultPosteriorSamples = 16
	// DefaultPosteriorLR is the Adam learning rate of FitPosterior.
	DefaultPosteriorLR = 0.05
	// DefaultPosteriorPriorVariance is σ0², the variance of the isotropic prior p(g) = N(0, σ0² I).
	DefaultPosteriorPriorVariance = 1.0
	// DefaultPosteriorMCSamples is S in eq. 13 of Teng et al. (2020), the number of draws g^{(s)} used for q*(k)
	// and for the final ELBO estimate (the paper uses S = 2000).
	DefaultPosteriorMCSamples = 2000
)

// postAverageFrom is the fraction of FitPosterior's Adam steps after which the iterates are averaged
// (Polyak–Ruppert tail averaging): the returned (M, C) is the mean of the iterates of the last half of the steps.
// With a constant learning rate and fresh η every step, single Adam iterates keep jittering around the optimum;
// the tail average removes most of that jitter (it roughly halves the change of Probs after a warm-started refit).
const postAverageFrom = 0.5

// Jitter policy (ops.JitterPolicy) of Posterior.Subset, used only if the sub-covariance (C Cᵀ)[idx,idx] fails to
// factorise.
const (
	// postSubsetJitterRel is the first jitter, relative to the mean diagonal of the sub-covariance.
	postSubsetJitterRel = 1e-12
	// postSubsetJitterTries is the number of jittered retries, each ten times the previous jitter.
	postSubsetJitterTries = 8
)

// PosteriorConfig configures FitPosterior. Zero values mean the defaults; negative values are errors.
type PosteriorConfig struct {
	// Iters is the number of Adam steps (default DefaultPosteriorIters = 3000).
	Iters int
	// Samples is the number of η draws per Adam step (default DefaultPosteriorSamples = 16).
	Samples int
	// LR is the Adam learning rate (default DefaultPosteriorLR = 0.05); Adam uses β1 = 0.9, β2 = 0.999, ε = 1e-8.
	LR float64
	// PriorVariance is σ0² of the prior p(g) = N(0, σ0² I) (default DefaultPosteriorPriorVariance = 1).
	PriorVariance float64
	// MCSamples is S of eq. 13 for q*(k) and the number of draws of the final ELBO estimate
	// (default DefaultPosteriorMCSamples = 2000).
	MCSamples int
}

// Posterior is the variational distribution q(g) = N(M, C Cᵀ) over the kernel logits g of VBKS
// (Teng, Chen, Zhang & Low 2020, Sec. 4) and the kernel posterior q*(k) it induces (eq. 13).
type Posterior struct {
	// M is the mean of q(g), length K.
	M []float64
	// C is the K×K lower-triangular factor of the covariance of q(g), row-major, upper part zero.
	// Its diagonal may have either sign.
	C []float64
	// Probs is q*(k_i) of eq. 13, length K, summing to 1.
	Probs []float64
	// ELBO is the global ELBO F̂ of eq. 8 estimated with MCSamples fresh draws, in the units of the
	// local ELBOs L (NaN when not computed, e.g. after Subset).
	ELBO float64
	// Steps is the number of Adam steps taken to produce this posterior.
	Steps int
}

// GlobalELBO returns the reparameterised estimate F̂ of the global ELBO of Teng et al. (2020), eq. 8,
//
//	F̂ = (1/S) Σ_s Σ_i softmax(m + C η_s)_i L_i − KL(N(m, C Cᵀ) ‖ N(0, σ0² I)),
//
// with KL = ½[(tr(C Cᵀ) + mᵀm)/σ0² − K + K log σ0² − 2 Σ_i log|C_ii|], together with its gradient with respect
// to m (dm, length K) and to C (dc, K×K row-major; only the lower triangle is a parameter, so the upper part of
// dc is zero).
//
// L holds the K local ELBOs (eq. 9), m is length K, c is the K×K lower-triangular factor in row-major order
// (upper part zero, non-zero diagonal), eta holds S ≥ 1 draws of length K and priorVariance is σ0² > 0.
// Internally max(L) is subtracted from L (Σ_i softmax_i = 1, so only the constant changes); f is reported in
// the original units of L. It returns an error, and no values, for wrong shapes, non-finite inputs, a non-zero
// upper part or zero diagonal entry of c, or a priorVariance that is not finite and positive.
func GlobalELBO(L, m, c []float64, eta [][]float64, priorVariance float64) (f float64, dm, dc []float64, err error) {
	k := len(L)
	if err := postCheckQ("GlobalELBO", L, m, c); err != nil {
		return 0, nil, nil, err
	}
	if len(eta) == 0 {
		return 0, nil, nil, errors.New("vbks: GlobalELBO: need at least one η draw")
	}
	for s, e := range eta {
		if len(e) != k {
			return 0, nil, nil, fmt.Errorf("vbks: GlobalELBO: η draw %d has length %d, want K = %d", s, len(e), k)
		}
		if i, bad := postFirstNonFinite(e); bad {
			return 0, nil, nil, fmt.Errorf("vbks: GlobalELBO: η draw %d: non-finite value %v at index %d", s, e[i], i)
		}
	}
	if !(priorVariance > 0) || math.IsInf(priorVariance, 1) {
		return 0, nil, nil, fmt.Errorf("vbks: GlobalELBO: prior variance %v must be finite and positive", priorVariance)
	}
	shifted, lmax := postShift(L)
	dm = make([]float64, k)
	dc = make([]float64, k*k)
	ws := newPostWork(k)
	expTerm := postAccumulate(shifted, m, c, eta, ws, dm, dc)
	f = lmax + expTerm - postKL(m, c, priorVariance)
	postFinishGrad(m, c, priorVariance, dm, dc)
	return f, dm, dc, nil
}

// FitPosterior maximises the global ELBO of Teng et al. (2020), eq. 8, over q(g) = N(m, C Cᵀ) by Adam on m and the
// lower triangle of C, with Samples fresh reparameterisation draws η per step (g = m + C η, Sec. 5), and returns
// the fitted q(g) with its kernel posterior q*(k) (eq. 13, MCSamples draws) and the final ELBO estimate (MCSamples
// fresh draws in antithetic pairs, units of L). The returned (M, C) is the average of the Adam iterates over the
// last half of the Iters steps (tail averaging, which removes the jitter of constant-rate Adam); columns of C are
// signed so that its diagonal is positive, which leaves C Cᵀ unchanged. Last, the coordinates of q(g) are
// permuted so that q*(k) is ordered as L (postRearrange): eq. 8 has optima in which the kernels' roles are
// swapped, and Adam ends in whichever one its start and its draws lead to.
//
// L holds the K ≥ 1 maximised local ELBOs; they may be large (thousands) and of either sign. The fit starts from
// warm's M and C when warm is non-nil (e.g. a Subset after pruning), else from the prior (M = 0, C = σ0 I).
// All randomness comes from rng, so a fixed seed gives bit-identical results. The upper part of C stays exactly zero.
//
// It returns an error for an empty L, a non-finite L (naming the index), a nil rng, a negative or non-finite
// config field, or a warm start whose M is not length K, whose C is not K×K lower triangular with a non-zero
// diagonal, or which holds non-finite values; and if the optimisation produces non-finite parameters.
func FitPosterior(L []float64, warm *Posterior, rng *rand.Rand, c PosteriorConfig) (*Posterior, error) {
	k := len(L)
	if k == 0 {
		return nil, errors.New("vbks: FitPosterior: need at least one local ELBO (K ≥ 1), got none")
	}
	if i, bad := postFirstNonFinite(L); bad {
		return nil, fmt.Errorf("vbks: FitPosterior: local ELBO L[%d] = %v is not finite", i, L[i])
	}
	if rng == nil {
		return nil, errors.New("vbks: FitPosterior: nil *rand.Rand")
	}
	cfg, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	m := make([]float64, k)
	cm := make([]float64, k*k)
	if warm != nil {
		if len(warm.M) != k {
			return nil, fmt.Errorf("vbks: FitPosterior: warm start has len(M) = %d, want K = %d", len(warm.M), k)
		}
		if err := postCheckQ("FitPosterior warm start", L, warm.M, warm.C); err != nil {
			return nil, err
		}
		copy(m, warm.M)
		copy(cm, warm.C)
	} else {
		sd := math.Sqrt(cfg.PriorVariance)
		for i := 0; i < k; i++ {
			cm[i*k+i] = sd
		}
	}

	shifted, _ := postShift(L)
	// Adam minimises: the parameters are m and C (its upper part has zero gradient and stays zero), and the
	// gradients handed over are those of −F.
	pm, err := graph.NewParam("m_g", m, graph.Identity{}, k)
	if err != nil {
		return nil, err
	}
	pc, err := graph.NewParam("C_g", cm, graph.Identity{}, k, k)
	if err != nil {
		return nil, err
	}
	m, cm = pm.Raw(), pc.Raw()
	params := []*graph.Param{pm, pc}
	opt := &train.Adam{LR: cfg.LR}
	eta := make([][]float64, cfg.Samples)
	for s := range eta {
		eta[s] = make([]float64, k)
	}
	dm := make([]float64, k)
	dc := make([]float64, k*k)
	ws := newPostWork(k)
	avgM := make([]float64, k)   // running mean of the tail iterates of m
	avgC := make([]float64, k*k) // running mean of the tail iterates of C, columns signed so that C_jj > 0
	avgStart := int(postAverageFrom * float64(cfg.Iters))
	for it := 0; it < cfg.Iters; it++ {
		for _, e := range eta {
			for j := range e {
				e[j] = rng.NormFloat64()
			}
		}
		clear(dm)
		clear(dc)
		postAccumulate(shifted, m, cm, eta, ws, dm, dc)
		postFinishGrad(m, cm, cfg.PriorVariance, dm, dc)
		floats.Scale(-1, dm)
		floats.Scale(-1, dc)
		if err := opt.Step(it, params, [][]float64{dm, dc}); err != nil {
			return nil, err
		}
		if it >= avgStart {
			// q(g) depends on C only through C Cᵀ, which is unchanged by flipping the sign of a column; flip
			// columns with a negative diagonal so that iterates on either side of a sign change average coherently.
			w := 1 / float64(it-avgStart+1)
			for i := 0; i < k; i++ {
				avgM[i] += (m[i] - avgM[i]) * w
				for j := 0; j <= i; j++ {
					v := cm[i*k+j]
					if cm[j*k+j] < 0 {
						v = -v
					}
					avgC[i*k+j] += (v - avgC[i*k+j]) * w
				}
			}
		}
	}
	m, cm = avgM, avgC
	if i, bad := postFirstNonFinite(m); bad {
		return nil, fmt.Errorf("vbks: FitPosterior: optimisation diverged: m[%d] = %v", i, m[i])
	}
	if i, bad := postFirstNonFinite(cm); bad {
		return nil, fmt.Errorf("vbks: FitPosterior: optimisation diverged: C[%d,%d] = %v", i/k, i%k, cm[i])
	}
	for i := 0; i < k; i++ {
		if cm[i*k+i] == 0 {
			return nil, fmt.Errorf("vbks: FitPosterior: optimisation reached C[%d,%d] = 0 (singular q(g))", i, i)
		}
	}

	probs, err := KernelProbs(m, cm, cfg.MCSamples, rng)
	if err != nil {
		return nil, fmt.Errorf("vbks: FitPosterior: %w", err)
	}
	m, cm, probs = postRearrange(shifted, m, cm, probs)
	etaMC := make([][]float64, cfg.MCSamples)
	for s := range etaMC {
		e := make([]float64, k)
		if s%2 == 1 { // antithetic pair (η, −η), as in KernelProbs
			for j := range e {
				e[j] = -etaMC[s-1][j]
			}
		} else {
			for j := range e {
				e[j] = rng.NormFloat64()
			}
		}
		etaMC[s] = e
	}
	elbo, _, _, err := GlobalELBO(L, m, cm, etaMC, cfg.PriorVariance)
	if err != nil {
		return nil, fmt.Errorf("vbks: FitPosterior: final ELBO: %w", err)
	}
	return &Posterior{M: m, C: cm, Probs: probs, ELBO: elbo, Steps: cfg.Iters}, nil
}

// postRearrange permutes the coordinates of q(g) = N(m, C Cᵀ) so that the kernel posterior q*(k) is ordered as the
// local ELBOs L, and returns the permuted m, C and probs; it returns its inputs unchanged when the permutation does
// not raise eq. 8.
//
// Eq. 8 of Teng et al. (2020) is unchanged by permuting q(g) and L together: softmax commutes with permutations
// and the prior N(0, σ0² I) is isotropic, so the KL term is the same. Permuting q(g) alone, with L fixed,
// therefore changes eq. 8 by exactly Σ_i (q*'(k_i) − q*(k_i)) L_i, and by the rearrangement inequality the largest
// change comes from giving the largest q* to the largest L_i, the next to the next, and so on. probs is the Monte
// Carlo q*(k) of (m, C); permuted, it is the same estimate for the permuted q(g) (from the permuted draws), so
// the change is exact rather than estimated.
//
// This matters when two kernels' ℒ_i* (nearly) tie: eq. 8 then has two optima, each giving almost all the mass
// to one of the pair (moving one coordinate of g away from the prior costs less KL than moving two), and Adam
// may end in the one that favours the smaller ℒ_i*, typically because the warm start of the previous fraction
// did. The permuted q(g) is Posterior.Subset over all K coordinates in the new order; if its covariance fails to
// factorise even with jitter, the inputs are returned unchanged.
func postRearrange(L, m, c, probs []float64) ([]float64, []float64, []float64) {
	byL, byProb := Rank(L), Rank(probs)
	src := make([]int, len(L)) // coordinate i of the result is coordinate src[i] of the input
	for r, i := range byL {
		src[i] = byProb[r]
	}
	var gain float64
	for i, j := range src {
		gain += (probs[j] - probs[i]) * L[i]
	}
	if !(gain > 0) {
		return m, c, probs
	}
	q := (&Posterior{M: m, C: c, Probs: probs}).Subset(src)
	if q == nil {
		return m, c, probs
	}
	return q.M, q.C, q.Probs
}

// KernelProbs returns the kernel posterior of Teng et al. (2020), eq. 13,
// q*(k_i) ≈ (1/S) Σ_s softmax(g^{(s)})_i with g^{(s)} = m + C η_s, η_s ~ N(0, I) drawn from rng, S = s.
// The draws come in antithetic pairs (η, −η) (the last one unpaired when s is odd): every draw is still N(0, I),
// so the estimate is unbiased, and its variance is much smaller than with independent draws.
// m has length K ≥ 1 and c is the K×K lower-triangular factor in row-major order (upper part zero). The result has
// length K and sums to 1. It returns an error for wrong shapes, non-finite values, a non-zero upper part of c,
// s < 1 or a nil rng.
func KernelProbs(m, c []float64, s int, rng *rand.Rand) ([]float64, error) {
	k := len(m)
	if k == 0 {
		return nil, errors.New("vbks: KernelProbs: empty mean (need K ≥ 1)")
	}
	if len(c) != k*k {
		return nil, fmt.Errorf("vbks: KernelProbs: len(C) = %d, want K×K = %d", len(c), k*k)
	}
	if s < 1 {
		return nil, fmt.Errorf("vbks: KernelProbs: sample count %d, need ≥ 1", s)
	}
	if rng == nil {
		return nil, errors.New("vbks: KernelProbs: nil *rand.Rand")
	}
	if i, bad := postFirstNonFinite(m); bad {
		return nil, fmt.Errorf("vbks: KernelProbs: non-finite m[%d] = %v", i, m[i])
	}
	if i, bad := postFirstNonFinite(c); bad {
		return nil, fmt.Errorf("vbks: KernelProbs: non-finite C[%d,%d] = %v", i/k, i%k, c[i])
	}
	if err := postCheckLower("KernelProbs", c, k); err != nil {
		return nil, err
	}
	probs := make([]float64, k)
	eta := make([]float64, k)
	g := make([]float64, k)
	for n := 0; n < s; n++ {
		if n%2 == 1 {
			// Antithetic pair (η, −η): each draw is still N(0, I), and the odd part of softmax(m + Cη), which
			// dominates its variance, cancels within the pair.
			for j := range eta {
				eta[j] = -eta[j]
			}
		} else {
			for j := range eta {
				eta[j] = rng.NormFloat64()
			}
		}
		postAffine(g, m, c, eta)
		postSoftmaxInPlace(g)
		for i, p := range g {
			probs[i] += p
		}
	}
	var sum float64
	for _, p := range probs {
		sum += p
	}
	for i := range probs {
		probs[i] /= sum
	}
	return probs, nil
}

// Ranking returns the kernel indices sorted by Probs in descending order; ties keep the lower index first.
func (p *Posterior) Ranking() []int { return Rank(p.Probs) }

// Subset returns the marginal of q(g) over the coordinates idx (in the given order), used to warm-start the refit
// of FitPosterior after pruning to the top-ranked kernels (Teng et al. 2020, Sec. 5): M[idx], and as C the lower
// Cholesky factor of the sub-covariance (C Cᵀ)[idx,idx] (a tiny jitter, relative to its mean diagonal, is added
// only if the plain factorisation fails). Probs are p.Probs[idx] renormalised to sum to 1 (uniform if they sum
// to 0; nil if p.Probs does not have length K); ELBO is NaN and Steps is 0.
// Subset returns nil if idx is empty or holds an out-of-range or repeated index, if p's M and C are not length K and
// K×K, or if the sub-covariance cannot be factorised even with jitter.
func (p *Posterior) Subset(idx []int) *Posterior {
	k := len(p.M)
	n := len(idx)
	if n == 0 || len(p.C) != k*k {
		return nil
	}
	seen := make(map[int]bool, n)
	for _, i := range idx {
		if i < 0 || i >= k || seen[i] {
			return nil
		}
		seen[i] = true
	}
	// Rows idx of C: Σ[idx,idx] = C[idx,:] C[idx,:]ᵀ.
	rows := mat.NewDense(n, k, nil)
	for a, i := range idx {
		for j := 0; j <= i; j++ {
			rows.Set(a, j, p.C[i*k+j])
		}
	}
	sub := mat.NewDense(n, n, nil)
	sub.Mul(rows, rows.T())
	lower := make([]float64, n*n)
	if _, err := ops.CholeskyLower(lower, sub.RawMatrix().Data, n, ops.JitterPolicy{Initial: postSubsetJitterRel, MaxTries: postSubsetJitterTries}); err != nil {
		return nil
	}

	out := &Posterior{M: make([]float64, n), C: make([]float64, n*n), ELBO: math.NaN()}
	for a, i := range idx {
		out.M[a] = p.M[i]
		for b := 0; b <= a; b++ {
			out.C[a*n+b] = lower[a*n+b]
		}
	}
	if len(p.Probs) == k {
		out.Probs = make([]float64, n)
		var sum float64
		for a, i := range idx {
			out.Probs[a] = p.Probs[i]
			sum += p.Probs[i]
		}
		for a := range out.Probs {
			if sum > 0 {
				out.Probs[a] /= sum
			} else {
				out.Probs[a] = 1 / float64(n)
			}
		}
	}
	return out
}

// withDefaults validates the config and fills zero fields with the defaults.
func (c PosteriorConfig) withDefaults() (PosteriorConfig, error) {
	if c.Iters < 0 || c.Samples < 0 || c.MCSamples < 0 {
		return c, fmt.Errorf("vbks: PosteriorConfig: negative count (Iters %d, Samples %d, MCSamples %d)", c.Iters, c.Samples, c.MCSamples)
	}
	if c.LR < 0 || math.IsNaN(c.LR) || math.IsInf(c.LR, 0) {
		return c, fmt.Errorf("vbks: PosteriorConfig: LR %v must be finite and non-negative (0 means default)", c.LR)
	}
	if c.PriorVariance < 0 || math.IsNaN(c.PriorVariance) || math.IsInf(c.PriorVariance, 0) {
		return c, fmt.Errorf("vbks: PosteriorConfig: PriorVariance %v must be finite and non-negative (0 means default)", c.PriorVariance)
	}
	c.Iters = defaultIfZero(c.Iters, DefaultPosteriorIters)
	c.Samples = defaultIfZero(c.Samples, DefaultPosteriorSamples)
	c.LR = defaultIfZero(c.LR, DefaultPosteriorLR)
	c.PriorVariance = defaultIfZero(c.PriorVariance, DefaultPosteriorPriorVariance)
	c.MCSamples = defaultIfZero(c.MCSamples, DefaultPosteriorMCSamples)
	return c, nil
}

// postCheckQ validates L (non-empty, finite) and q(g)'s m (length K, finite) and c (K×K, finite, lower triangular,
// non-zero diagonal). where names the caller in the error.
func postCheckQ(where string, L, m, c []float64) error {
	k := len(L)
	if k == 0 {
		return fmt.Errorf("vbks: %s: need at least one local ELBO (K ≥ 1), got none", where)
	}
	if i, bad := postFirstNonFinite(L); bad {
		return fmt.Errorf("vbks: %s: local ELBO L[%d] = %v is not finite", where, i, L[i])
	}
	if len(m) != k {
		return fmt.Errorf("vbks: %s: len(m) = %d, want K = %d", where, len(m), k)
	}
	if len(c) != k*k {
		return fmt.Errorf("vbks: %s: len(C) = %d, want K×K = %d", where, len(c), k*k)
	}
	if i, bad := postFirstNonFinite(m); bad {
		return fmt.Errorf("vbks: %s: non-finite m[%d] = %v", where, i, m[i])
	}
	if i, bad := postFirstNonFinite(c); bad {
		return fmt.Errorf("vbks: %s: non-finite C[%d,%d] = %v", where, i/k, i%k, c[i])
	}
	if err := postCheckLower(where, c, k); err != nil {
		return err
	}
	for i := 0; i < k; i++ {
		if c[i*k+i] == 0 {
			return fmt.Errorf("vbks: %s: C[%d,%d] = 0, the factor must have a non-zero diagonal", where, i, i)
		}
	}
	return nil
}

// postCheckLower reports a non-zero entry above the diagonal of the k×k row-major c.
func postCheckLower(where string, c []float64, k int) error {
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			if c[i*k+j] != 0 {
				return fmt.Errorf("vbks: %s: C is not lower triangular: C[%d,%d] = %v", where, i, j, c[i*k+j])
			}
		}
	}
	return nil
}

// postFirstNonFinite returns the index of the first NaN or ±Inf in x.
func postFirstNonFinite(x []float64) (int, bool) {
	for i, v := range x {
		if v-v != 0 {
			return i, true
		}
	}
	return 0, false
}

// postShift returns L − max(L) and max(L).
func postShift(L []float64) ([]float64, float64) {
	lmax := math.Inf(-1)
	for _, v := range L {
		lmax = math.Max(lmax, v)
	}
	out := make([]float64, len(L))
	for i, v := range L {
		out[i] = v - lmax
	}
	return out, lmax
}

// postWork is scratch space for one draw.
type postWork struct{ g []float64 }

func newPostWork(k int) *postWork { return &postWork{g: make([]float64, k)} }

// postAffine sets g = m + C η for the k×k lower-triangular row-major c.
func postAffine(g, m, c, eta []float64) {
	k := len(m)
	for i := 0; i < k; i++ {
		v := m[i]
		row := c[i*k : i*k+i+1]
		for j, cij := range row {
			v += cij * eta[j]
		}
		g[i] = v
	}
}

// postSoftmaxInPlace replaces g by softmax(g), subtracting the max first.
func postSoftmaxInPlace(g []float64) {
	mx := math.Inf(-1)
	for _, v := range g {
		mx = math.Max(mx, v)
	}
	var sum float64
	for i, v := range g {
		e := math.Exp(v - mx)
		g[i] = e
		sum += e
	}
	for i := range g {
		g[i] /= sum
	}
}

// postAccumulate returns (1/S) Σ_s p^{(s)}·L (L already shifted) and adds (1/S) Σ_s r^{(s)} to dm and
// (1/S) Σ_s r^{(s)} η_sᵀ (lower triangle) to dc, with r^{(s)} = p^{(s)} ⊙ (L − p^{(s)}·L).
func postAccumulate(L, m, c []float64, eta [][]float64, ws *postWork, dm, dc []float64) float64 {
	k := len(L)
	g := ws.g
	var total float64
	inv := 1 / float64(len(eta))
	for _, e := range eta {
		postAffine(g, m, c, e)
		postSoftmaxInPlace(g)
		var pl float64
		for i, p := range g {
			pl += p * L[i]
		}
		total += pl
		for i, p := range g {
			r := p * (L[i] - pl) * inv
			if r == 0 {
				continue
			}
			dm[i] += r
			row := dc[i*k : i*k+i+1]
			for j := range row {
				row[j] += r * e[j]
			}
		}
	}
	return total * inv
}

// postKL returns KL(N(m, C Cᵀ) ‖ N(0, σ0² I)) for the lower-triangular row-major c.
func postKL(m, c []float64, priorVariance float64) float64 {
	k := len(m)
	var tr, mm, logdet float64
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			v := c[i*k+j]
			tr += v * v
		}
		mm += m[i] * m[i]
		logdet += math.Log(math.Abs(c[i*k+i]))
	}
	fk := float64(k)
	return 0.5 * ((tr+mm)/priorVariance - fk + fk*math.Log(priorVariance) - 2*logdet)
}

// postFinishGrad adds the KL part of the gradient: −m/σ0² to dm and −C/σ0² + diag(1/C_ii) to dc's lower triangle.
func postFinishGrad(m, c []float64, priorVariance float64, dm, dc []float64) {
	k := len(m)
	for i := 0; i < k; i++ {
		dm[i] -= m[i] / priorVariance
		for j := 0; j <= i; j++ {
			dc[i*k+j] -= c[i*k+j] / priorVariance
		}
		dc[i*k+i] += 1 / c[i*k+i]
	}
}
