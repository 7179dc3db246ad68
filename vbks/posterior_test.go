package vbks

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distmv"
)

// postTestQ returns a random m (length k) and lower-triangular c (k×k) whose diagonal alternates in sign with
// magnitude in [0.5, 1.5] (kept away from 0 so that the 1/C_ii term is smooth at the finite-difference step).
func postTestQ(rng *rand.Rand, k int) (m, c []float64) {
	m = make([]float64, k)
	c = make([]float64, k*k)
	for i := 0; i < k; i++ {
		m[i] = rng.NormFloat64()
		for j := 0; j < i; j++ {
			c[i*k+j] = 0.5 * rng.NormFloat64()
		}
		d := 0.5 + rng.Float64()
		if i%2 == 1 {
			d = -d
		}
		c[i*k+i] = d
	}
	return m, c
}

// postTestEta returns s standard normal draws of length k.
func postTestEta(rng *rand.Rand, s, k int) [][]float64 {
	eta := make([][]float64, s)
	for i := range eta {
		eta[i] = make([]float64, k)
		for j := range eta[i] {
			eta[i][j] = rng.NormFloat64()
		}
	}
	return eta
}

// postRelErr is |a−b| / max(1, |a|, |b|): relative for large values, absolute for tiny gradients.
func postRelErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestGlobalELBOGradientFiniteDifference(t *testing.T) {
	t.Parallel()
	const (
		k      = 6
		s      = 5
		offset = 5000.0 // large common offset: exercises the max(L) shift
		sigma2 = 1.7    // a non-unit prior variance, so the σ0² terms are exercised
		// h is the step of the fourth-order central stencil
		// (−f(x+2h) + 8f(x+h) − 8f(x−h) + f(x−2h)) / 12h, truncation O(h⁴).
		// F is ~5000, so rounding in F is ~1e-12 and contributes ~1e-12/h ≈ 1e-9 to the estimate.
		h = 1e-3
		// tol bounds postRelErr = |a−b| / max(1, |a|, |b|) per entry.
		tol = 1e-6
	)
	rng := rand.New(rand.NewPCG(11, 12))
	m, c := postTestQ(rng, k)
	L := make([]float64, k)
	for i := range L {
		L[i] = offset + 100*rng.NormFloat64()
	}
	eta := postTestEta(rng, s, k)
	_, dm, dc, err := GlobalELBO(L, m, c, eta, sigma2)
	if err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		f, _, _, err := GlobalELBO(L, m, c, eta, sigma2)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fd := func(x *float64) float64 {
		x0 := *x
		var v [4]float64
		for n, d := range []float64{2, 1, -1, -2} {
			*x = x0 + d*h
			v[n] = eval()
		}
		*x = x0
		return (-v[0] + 8*v[1] - 8*v[2] + v[3]) / (12 * h)
	}
	var maxGrad float64
	for i := 0; i < k; i++ {
		num := fd(&m[i])
		maxGrad = math.Max(maxGrad, math.Abs(num))
		if e := postRelErr(dm[i], num); e > tol {
			t.Errorf("dF/dm[%d]: analytic %.10g, finite difference %.10g, rel err %.3g", i, dm[i], num, e)
		}
	}
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			num := fd(&c[i*k+j])
			maxGrad = math.Max(maxGrad, math.Abs(num))
			if e := postRelErr(dc[i*k+j], num); e > tol {
				t.Errorf("dF/dC[%d,%d]: analytic %.10g, finite difference %.10g, rel err %.3g", i, j, dc[i*k+j], num, e)
			}
		}
		for j := i + 1; j < k; j++ {
			if dc[i*k+j] != 0 {
				t.Errorf("dC[%d,%d] = %v above the diagonal, want 0", i, j, dc[i*k+j])
			}
		}
	}
	// Guard against a vacuous check: with L of scale 100 the likelihood part of the gradient is large.
	if maxGrad < 1 {
		t.Errorf("largest gradient entry %g: test does not exercise the likelihood term", maxGrad)
	}
}

func TestGlobalELBOKLMatchesDistmv(t *testing.T) {
	t.Parallel()
	const k = 5
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sigma2 := range []float64{1, 0.3, 2.5} {
		m, c := postTestQ(rng, k)
		L := make([]float64, k) // L = 0: F̂ = −KL exactly
		eta := postTestEta(rng, 7, k)
		f, _, _, err := GlobalELBO(L, m, c, eta, sigma2)
		if err != nil {
			t.Fatal(err)
		}
		cm := mat.NewDense(k, k, c)
		sq := mat.NewSymDense(k, nil)
		sq.SymOuterK(1, cm)
		q, ok := distmv.NewNormal(m, sq, nil)
		if !ok {
			t.Fatal("q covariance not PD")
		}
		pcov := mat.NewSymDense(k, nil)
		for i := 0; i < k; i++ {
			pcov.SetSym(i, i, sigma2)
		}
		p, ok := distmv.NewNormal(make([]float64, k), pcov, nil)
		if !ok {
			t.Fatal("prior covariance not PD")
		}
		kl := distmv.KullbackLeibler{}.DistNormal(q, p)
		if kl <= 0 {
			t.Fatalf("σ0² = %v: reference KL %v not positive; test would be vacuous", sigma2, kl)
		}
		if e := math.Abs(f+kl) / kl; e > 1e-10 {
			t.Errorf("σ0² = %v: F̂ with L = 0 is %.14g, want −KL = %.14g (rel err %.3g)", sigma2, f, -kl, e)
		}
	}
}

func TestGlobalELBOShiftInvariance(t *testing.T) {
	t.Parallel()
	const k = 6
	rng := rand.New(rand.NewPCG(5, 6))
	m, c := postTestQ(rng, k)
	L := make([]float64, k)
	for i := range L {
		L[i] = 50 * rng.NormFloat64()
	}
	eta := postTestEta(rng, 9, k)
	f0, dm0, dc0, err := GlobalELBO(L, m, c, eta, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, shift := range []float64{-3000, 2000, 1e5} {
		Ls := make([]float64, k)
		for i := range L {
			Ls[i] = L[i] + shift
		}
		f, dm, dc, err := GlobalELBO(Ls, m, c, eta, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e := postRelErr(f, f0+shift); e > 1e-9 {
			t.Errorf("shift %v: F̂ = %.12g, want %.12g (rel err %.3g)", shift, f, f0+shift, e)
		}
		for i := range dm {
			if e := postRelErr(dm[i], dm0[i]); e > 1e-9 {
				t.Errorf("shift %v: dm[%d] %.12g vs %.12g", shift, i, dm[i], dm0[i])
			}
		}
		for i := range dc {
			if e := postRelErr(dc[i], dc0[i]); e > 1e-9 {
				t.Errorf("shift %v: dc[%d] %.12g vs %.12g", shift, i, dc[i], dc0[i])
			}
		}
	}
}

func TestFitPosteriorEqualL(t *testing.T) {
	t.Parallel()
	L := []float64{-1234.5, -1234.5, -1234.5, -1234.5}
	p, err := FitPosterior(L, nil, rand.New(rand.NewPCG(1, 2)), PosteriorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	postCheckProbsSum(t, p.Probs)
	for i, q := range p.Probs {
		// S = 2000 draws, sd of one softmax component of N(0, I) ≲ 0.2, MC error ≲ 0.005.
		if math.Abs(q-0.25) > 0.02 {
			t.Errorf("Probs[%d] = %v, want 0.25 ± 0.02", i, q)
		}
	}
	if p.Steps != DefaultPosteriorIters {
		t.Errorf("Steps = %d, want %d", p.Steps, DefaultPosteriorIters)
	}
	// With equal L the optimum is the prior: F = L − 0; the estimate has no MC noise in the likelihood part.
	if math.Abs(p.ELBO-L[0]) > 1e-3 {
		t.Errorf("ELBO = %v, want ≈ %v (q = prior)", p.ELBO, L[0])
	}
}

func TestFitPosteriorPicksBest(t *testing.T) {
	t.Parallel()
	p, err := FitPosterior([]float64{0, 0, 50, 0}, nil, rand.New(rand.NewPCG(7, 8)), PosteriorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	postCheckProbsSum(t, p.Probs)
	if r := p.Ranking(); r[0] != 2 {
		t.Errorf("ranking %v, want index 2 first (Probs %v)", r, p.Probs)
	}
	if p.Probs[2] < 0.8 {
		t.Errorf("Probs[2] = %v, want ≥ 0.8", p.Probs[2])
	}
	for i := 0; i < 4; i++ {
		for j := i + 1; j < 4; j++ {
			if p.C[i*4+j] != 0 {
				t.Errorf("C[%d,%d] = %v, upper part must stay zero", i, j, p.C[i*4+j])
			}
		}
	}
}

func TestFitPosteriorMonotoneInGap(t *testing.T) {
	t.Parallel()
	prev := 0.0
	for _, gap := range []float64{1, 10, 100} {
		p, err := FitPosterior([]float64{2000, 2000 + gap, 2000, 2000}, nil, rand.New(rand.NewPCG(9, 10)), PosteriorConfig{})
		if err != nil {
			t.Fatal(err)
		}
		postCheckProbsSum(t, p.Probs)
		if p.Probs[1] <= prev {
			t.Errorf("gap %v: top probability %v not larger than %v at the previous gap", gap, p.Probs[1], prev)
		}
		if r := p.Ranking(); r[0] != 1 {
			t.Errorf("gap %v: ranking %v, want 1 first", gap, r)
		}
		prev = p.Probs[1]
	}
}

func TestFitPosteriorDeterministic(t *testing.T) {
	t.Parallel()
	L := []float64{-3000, 1500, 2000, 1990, -10}
	cfg := PosteriorConfig{Iters: 500}
	a, err := FitPosterior(L, nil, rand.New(rand.NewPCG(42, 43)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FitPosterior(L, nil, rand.New(rand.NewPCG(42, 43)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string, x, y []float64) {
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				t.Errorf("%s[%d]: %v vs %v, not bit-identical", name, i, x[i], y[i])
			}
		}
	}
	same("M", a.M, b.M)
	same("C", a.C, b.C)
	same("Probs", a.Probs, b.Probs)
	if math.Float64bits(a.ELBO) != math.Float64bits(b.ELBO) {
		t.Errorf("ELBO %v vs %v", a.ELBO, b.ELBO)
	}
	// A different seed must give a different result (the check above is not vacuous).
	c, err := FitPosterior(L, nil, rand.New(rand.NewPCG(1, 1)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.ELBO == a.ELBO {
		t.Errorf("different seeds gave the same ELBO %v", a.ELBO)
	}
	postCheckProbsSum(t, a.Probs)
}

func TestFitPosteriorWarmStart(t *testing.T) {
	t.Parallel()
	// Probabilities spread over all four kernels: the hardest case for Monte Carlo noise in Probs.
	L := []float64{0, 2, 1, -1}
	for seed := uint64(0); seed < 4; seed++ {
		rng := rand.New(rand.NewPCG(21, seed))
		p, err := FitPosterior(L, nil, rng, PosteriorConfig{})
		if err != nil {
			t.Fatal(err)
		}
		m0 := append([]float64(nil), p.M...)
		c0 := append([]float64(nil), p.C...)
		q, err := FitPosterior(L, p, rng, PosteriorConfig{Iters: 100})
		if err != nil {
			t.Fatal(err)
		}
		if q.Steps != 100 {
			t.Errorf("seed %d: Steps = %d, want 100", seed, q.Steps)
		}
		for i := range L {
			if d := math.Abs(q.Probs[i] - p.Probs[i]); d >= 0.02 {
				t.Errorf("seed %d: Probs[%d]: %v after warm refit vs %v, change %v ≥ 0.02", seed, i, q.Probs[i], p.Probs[i], d)
			}
		}
		// The warm start must not have been modified in place.
		for i := range m0 {
			if p.M[i] != m0[i] {
				t.Errorf("seed %d: warm start M[%d] changed in place: %v -> %v", seed, i, m0[i], p.M[i])
			}
		}
		for i := range c0 {
			if p.C[i] != c0[i] {
				t.Errorf("seed %d: warm start C[%d] changed in place: %v -> %v", seed, i, c0[i], p.C[i])
			}
		}
	}
}

// TestFitPosteriorOptimal compares FitPosterior's result with a direct BFGS maximisation of the same objective
// on a large fixed η set (common random numbers): both are evaluated on that set.
func TestFitPosteriorOptimal(t *testing.T) {
	t.Parallel()
	const k = 2
	L := []float64{-100, -96}
	eta := postTestEta(rand.New(rand.NewPCG(100, 101)), 4000, k)
	// x = (m0, m1, C00, C10, C11).
	unpack := func(x []float64) (m, c []float64) {
		return []float64{x[0], x[1]}, []float64{x[2], 0, x[3], x[4]}
	}
	var evalErr error
	prob := optimize.Problem{
		Func: func(x []float64) float64 {
			m, c := unpack(x)
			if c[0] == 0 || c[3] == 0 {
				return math.Inf(1)
			}
			f, _, _, err := GlobalELBO(L, m, c, eta, 1)
			if err != nil {
				evalErr = err
				return math.Inf(1)
			}
			return -f
		},
		Grad: func(g, x []float64) {
			m, c := unpack(x)
			_, dm, dc, err := GlobalELBO(L, m, c, eta, 1)
			if err != nil {
				evalErr = err
				return
			}
			g[0], g[1], g[2], g[3], g[4] = -dm[0], -dm[1], -dc[0], -dc[2], -dc[3]
		},
	}
	res, err := optimize.Minimize(prob, []float64{0, 0, 1, 0, 1}, &optimize.Settings{GradientThreshold: 1e-9}, &optimize.BFGS{})
	if err != nil {
		t.Fatalf("BFGS: %v (status %v)", err, res.Status)
	}
	if evalErr != nil {
		t.Fatal(evalErr)
	}
	opt := -res.F

	p, err := FitPosterior(L, nil, rand.New(rand.NewPCG(5, 5)), PosteriorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fit, _, _, err := GlobalELBO(L, p.M, p.C, eta, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fit < opt-0.05 {
		t.Errorf("FitPosterior ELBO %v on the fixed η set is below the BFGS optimum %v by more than 0.05", fit, opt)
	}
	if fit > opt+1e-6 {
		t.Errorf("FitPosterior ELBO %v beats the BFGS optimum %v: BFGS did not converge", fit, opt)
	}
	// The prior is clearly sub-optimal here, so the comparison is not vacuous.
	prior, _, _, err := GlobalELBO(L, []float64{0, 0}, []float64{1, 0, 0, 1}, eta, 1)
	if err != nil {
		t.Fatal(err)
	}
	if opt-prior < 0.1 {
		t.Errorf("optimum %v only %v above the prior's ELBO; pick a harder L", opt, opt-prior)
	}
}

// TestPostRearrange checks the permutation step of FitPosterior: q*(k) ends ordered as L, eq. 8 rises by the
// computed gain (checked against a Monte Carlo estimate of eq. 8 before and after), C Cᵀ is permuted exactly, and
// an already ordered q(g) comes back unchanged.
func TestPostRearrange(t *testing.T) {
	t.Parallel()
	const k = 4
	L := []float64{0, 3, -50, -40}
	// q(g) favours kernel 0 over the better kernel 1, with correlated coordinates (a full C).
	m := []float64{3, 0, -3, -2}
	c := []float64{
		0.5, 0, 0, 0,
		0.2, 0.6, 0, 0,
		-0.1, 0.3, 0.4, 0,
		0.05, -0.2, 0.1, 0.7,
	}
	probs, err := KernelProbs(m, c, 4000, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	m2, c2, probs2 := postRearrange(L, m, c, probs)
	if r := Rank(probs2); r[0] != 1 || r[1] != 0 || r[2] != 3 || r[3] != 2 {
		t.Errorf("ranking after rearranging %v (Probs %v), want ordered as L: [1 0 3 2]", r, probs2)
	}
	var gain float64
	for i := range L {
		gain += (probs2[i] - probs[i]) * L[i]
	}
	if gain < 2 {
		t.Fatalf("gain %v: the test case should gain more than 2 nats", gain)
	}
	eta := postTestEta(rand.New(rand.NewPCG(5, 6)), 20000, k)
	before, _, _, err := GlobalELBO(L, m, c, eta, 1)
	if err != nil {
		t.Fatal(err)
	}
	after, _, _, err := GlobalELBO(L, m2, c2, eta, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(after-before-gain) > 0.05 {
		t.Errorf("eq. 8 rose by %v (%v → %v), want the computed gain %v ± 0.05", after-before, before, after, gain)
	}
	// C2 C2ᵀ is C Cᵀ with rows and columns permuted: coordinate i of the result is coordinate src[i].
	src := []int{1, 0, 2, 3} // kernels 2 and 3 were already ordered as L
	cov := func(c []float64) *mat.Dense {
		cd := mat.NewDense(k, k, c)
		var s mat.Dense
		s.Mul(cd, cd.T())
		return &s
	}
	s, s2 := cov(c), cov(c2)
	for i := range k {
		if m2[i] != m[src[i]] {
			t.Errorf("M[%d] = %v, want %v", i, m2[i], m[src[i]])
		}
		for j := range k {
			if d := math.Abs(s2.At(i, j) - s.At(src[i], src[j])); d > 1e-12 {
				t.Errorf("(C Cᵀ)[%d,%d] = %v, want %v", i, j, s2.At(i, j), s.At(src[i], src[j]))
			}
			if j > i && c2[i*k+j] != 0 {
				t.Errorf("C[%d,%d] = %v, upper part must be zero", i, j, c2[i*k+j])
			}
		}
	}
	// Already ordered: returned as given.
	m3, c3, probs3 := postRearrange(L, m2, c2, probs2)
	if &m3[0] != &m2[0] || &c3[0] != &c2[0] || &probs3[0] != &probs2[0] {
		t.Error("an ordered q(g) was permuted again")
	}
}

// TestFitPosteriorNearTie: two kernels 0.01 nats apart and a warm start (as from the previous data fraction) that
// gives the lower one almost all the mass. Adam alone stays in that optimum of eq. 8; FitPosterior must return the
// one that favours the higher ℒ_i*.
func TestFitPosteriorNearTie(t *testing.T) {
	t.Parallel()
	L := []float64{1552.09, 1552.10, 1259, 1255, 1013}
	k := len(L)
	warm := &Posterior{M: []float64{5, -1, -1, -1, -1}, C: make([]float64, k*k)}
	for i := range k {
		warm.C[i*k+i] = 0.5
	}
	p, err := FitPosterior(L, warm, rand.New(rand.NewPCG(11, 12)), PosteriorConfig{Iters: 500})
	if err != nil {
		t.Fatal(err)
	}
	postCheckProbsSum(t, p.Probs)
	if p.Probs[1] < 0.9 {
		t.Errorf("Probs %v: want ≥ 0.9 on kernel 1, the larger of the tied pair", p.Probs)
	}
	// Not vacuous: the unpermuted Adam result is the mirror image, with the mass on kernel 0.
	if !(p.M[1] > p.M[0]+3) {
		t.Errorf("M = %v: want kernel 1's mean well above kernel 0's", p.M)
	}
}

func TestFitPosteriorSingleKernel(t *testing.T) {
	t.Parallel()
	p, err := FitPosterior([]float64{-42}, nil, rand.New(rand.NewPCG(1, 1)), PosteriorConfig{Iters: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Probs) != 1 || p.Probs[0] != 1 {
		t.Errorf("Probs = %v, want [1]", p.Probs)
	}
	if math.Abs(p.ELBO+42) > 1e-3 {
		t.Errorf("ELBO = %v, want ≈ −42", p.ELBO)
	}
}

func TestSubset(t *testing.T) {
	t.Parallel()
	const k = 6
	rng := rand.New(rand.NewPCG(31, 32))
	m, c := postTestQ(rng, k)
	probs := []float64{0.1, 0.3, 0.05, 0.25, 0.2, 0.1}
	p := &Posterior{M: m, C: c, Probs: probs, ELBO: -1, Steps: 7}
	full := mat.NewSymDense(k, nil)
	full.SymOuterK(1, mat.NewDense(k, k, c))
	for _, idx := range [][]int{{1, 3, 4}, {4, 0, 5, 2}, {2}, {0, 1, 2, 3, 4, 5}} {
		sub := p.Subset(idx)
		if sub == nil {
			t.Fatalf("Subset(%v) = nil", idx)
		}
		n := len(idx)
		if len(sub.M) != n || len(sub.C) != n*n || len(sub.Probs) != n {
			t.Fatalf("Subset(%v): shapes M %d, C %d, Probs %d", idx, len(sub.M), len(sub.C), len(sub.Probs))
		}
		var psum float64
		for a, i := range idx {
			if sub.M[a] != m[i] {
				t.Errorf("Subset(%v): M[%d] = %v, want %v", idx, a, sub.M[a], m[i])
			}
			psum += probs[i]
		}
		for a, i := range idx {
			if want := probs[i] / psum; math.Abs(sub.Probs[a]-want) > 1e-15 {
				t.Errorf("Subset(%v): Probs[%d] = %v, want %v", idx, a, sub.Probs[a], want)
			}
		}
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if sub.C[a*n+b] != 0 {
					t.Errorf("Subset(%v): C[%d,%d] = %v, not lower triangular", idx, a, b, sub.C[a*n+b])
				}
			}
		}
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				var v float64
				for j := 0; j < n; j++ {
					v += sub.C[a*n+j] * sub.C[b*n+j]
				}
				if want := full.At(idx[a], idx[b]); math.Abs(v-want) > 1e-12 {
					t.Errorf("Subset(%v): (C Cᵀ)[%d,%d] = %.16g, want %.16g", idx, a, b, v, want)
				}
			}
		}
		if !math.IsNaN(sub.ELBO) || sub.Steps != 0 {
			t.Errorf("Subset(%v): ELBO %v, Steps %d; want NaN, 0", idx, sub.ELBO, sub.Steps)
		}
	}
	for _, bad := range [][]int{nil, {6}, {-1}, {1, 1}} {
		if sub := p.Subset(bad); sub != nil {
			t.Errorf("Subset(%v) = %+v, want nil", bad, sub)
		}
	}
	// The subset is a valid warm start.
	if _, err := FitPosterior([]float64{1, 2, 3}, p.Subset([]int{5, 0, 3}), rand.New(rand.NewPCG(1, 2)), PosteriorConfig{Iters: 10, MCSamples: 10}); err != nil {
		t.Errorf("FitPosterior from a Subset: %v", err)
	}
}

func TestRankingTies(t *testing.T) {
	t.Parallel()
	p := &Posterior{Probs: []float64{0.2, 0.3, 0.2, 0.3, 0}}
	want := []int{1, 3, 0, 2, 4}
	got := p.Ranking()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranking = %v, want %v", got, want)
		}
	}
}

func TestKernelProbs(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 9))
	m, c := postTestQ(rng, 5)
	a, err := KernelProbs(m, c, 500, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := KernelProbs(m, c, 500, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	postCheckProbsSum(t, a)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Errorf("Probs[%d]: %v vs %v, not deterministic", i, a[i], b[i])
		}
	}
	// C = 0 is allowed here: every draw is m, so q*(k) = softmax(m) exactly.
	zero := make([]float64, 3*3)
	got, err := KernelProbs([]float64{1, 2, 3}, zero, 3, rng)
	if err != nil {
		t.Fatal(err)
	}
	den := math.Exp(1) + math.Exp(2) + math.Exp(3)
	for i, v := range got {
		if want := math.Exp(float64(i+1)) / den; math.Abs(v-want) > 1e-15 {
			t.Errorf("softmax check: Probs[%d] = %v, want %v", i, v, want)
		}
	}

	// Antithetic pairs: for K = 2 and m = 0, softmax(Cη)_0 + softmax(−Cη)_0 = 1, so one pair gives exactly ½.
	half, err := KernelProbs([]float64{0, 0}, []float64{1.3, 0, -0.4, 0.8}, 2, rng)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(half[0]-0.5) > 1e-15 || math.Abs(half[1]-0.5) > 1e-15 {
		t.Errorf("one antithetic pair at m = 0, K = 2: Probs = %v, want [0.5 0.5]", half)
	}

	upper := []float64{1, 0.5, 0, 1}
	nan := []float64{1, 0, math.NaN(), 1}
	eye := []float64{1, 0, 0, 1}
	for name, call := range map[string]func() error{
		"empty m":      func() error { _, err := KernelProbs(nil, nil, 10, rng); return err },
		"C shape":      func() error { _, err := KernelProbs([]float64{0, 0}, []float64{1, 0, 1}, 10, rng); return err },
		"s = 0":        func() error { _, err := KernelProbs([]float64{0, 0}, eye, 0, rng); return err },
		"nil rng":      func() error { _, err := KernelProbs([]float64{0, 0}, eye, 10, nil); return err },
		"upper part":   func() error { _, err := KernelProbs([]float64{0, 0}, upper, 10, rng); return err },
		"non-finite C": func() error { _, err := KernelProbs([]float64{0, 0}, nan, 10, rng); return err },
	} {
		if err := call(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPosteriorErrors(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	cfg := PosteriorConfig{Iters: 5, MCSamples: 5}
	_, err := FitPosterior([]float64{1, 2, math.Inf(1), 4}, nil, rng, cfg)
	if err == nil || !strings.Contains(err.Error(), "L[2]") {
		t.Errorf("non-finite L: error %v, want one naming L[2]", err)
	}
	_, err = FitPosterior([]float64{1, math.NaN()}, nil, rng, cfg)
	if err == nil || !strings.Contains(err.Error(), "L[1]") {
		t.Errorf("NaN L: error %v, want one naming L[1]", err)
	}
	if _, err := FitPosterior(nil, nil, rng, cfg); err == nil {
		t.Error("empty L: no error")
	}
	warm := &Posterior{M: []float64{0, 0}, C: []float64{1, 0, 0, 1}}
	if _, err := FitPosterior([]float64{1, 2, 3}, warm, rng, cfg); err == nil || !strings.Contains(err.Error(), "len(M)") {
		t.Errorf("mismatched warm start: error %v", err)
	}
	badC := &Posterior{M: []float64{0, 0}, C: []float64{1, 0, 1}}
	if _, err := FitPosterior([]float64{1, 2}, badC, rng, cfg); err == nil {
		t.Error("warm start with wrong C shape: no error")
	}
	if _, err := FitPosterior([]float64{1, 2}, nil, nil, cfg); err == nil {
		t.Error("nil rng: no error")
	}
	if _, err := FitPosterior([]float64{1, 2}, nil, rng, PosteriorConfig{Iters: -1}); err == nil {
		t.Error("negative Iters: no error")
	}
	if _, err := FitPosterior([]float64{1, 2}, nil, rng, PosteriorConfig{LR: math.NaN()}); err == nil {
		t.Error("NaN LR: no error")
	}

	m, c := []float64{0, 0}, []float64{1, 0, 0.5, 1}
	eta := [][]float64{{0.1, -0.2}}
	two := []float64{1, 2}
	for _, tc := range []struct {
		name    string
		L, m, c []float64
		eta     [][]float64
		pv      float64
	}{
		{"empty L", nil, nil, nil, eta, 1},
		{"m length", two, []float64{0}, c, eta, 1},
		{"C length", two, m, c[:3], eta, 1},
		{"no η", two, m, c, nil, 1},
		{"η length", two, m, c, [][]float64{{1}}, 1},
		{"non-finite η", two, m, c, [][]float64{{1, math.NaN()}}, 1},
		{"zero diagonal", two, m, []float64{1, 0, 0, 0}, eta, 1},
		{"upper part", two, m, []float64{1, 1, 0, 1}, eta, 1},
		{"prior variance 0", two, m, c, eta, 0},
		{"prior variance +Inf", two, m, c, eta, math.Inf(1)},
		{"non-finite L", []float64{1, math.Inf(-1)}, m, c, eta, 1},
		{"non-finite m", two, []float64{0, math.NaN()}, c, eta, 1},
	} {
		if _, _, _, err := GlobalELBO(tc.L, tc.m, tc.c, tc.eta, tc.pv); err == nil {
			t.Errorf("GlobalELBO %s: no error", tc.name)
		}
	}
}

// postCheckProbsSum fails unless p sums to 1 within rounding and has non-negative entries.
func postCheckProbsSum(t *testing.T, p []float64) {
	t.Helper()
	var s float64
	for i, v := range p {
		if v < 0 {
			t.Errorf("Probs[%d] = %v < 0", i, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-12 {
		t.Errorf("Probs sum to %.16g, want 1", s)
	}
}

func BenchmarkFitPosterior(b *testing.B) {
	for _, k := range []int{12, 144} {
		b.Run("K="+strconv.Itoa(k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			L := make([]float64, k)
			for i := range L {
				L[i] = 100 * rng.NormFloat64()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := FitPosterior(L, nil, rng, PosteriorConfig{Iters: 100}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
