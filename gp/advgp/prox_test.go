package advgp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// proxCase is a proximal problem: θ′ = (μ′ [M], l′ [M,M] lower triangular, some diagonal entries negative) and
// steps γ (length 1, or M and M·M).
type proxCase struct {
	name           string
	mu, l          []float64
	gammaMu, gamma []float64
}

const proxM = 4

func proxCases() []proxCase {
	rng := rand.New(rand.NewPCG(5, 8))
	mu := uniform(rng, proxM, -2, 2)
	l := make([]float64, proxM*proxM)
	for i := 0; i < proxM; i++ {
		for j := 0; j < i; j++ {
			l[i*proxM+j] = uniform(rng, 1, -1.5, 1.5)[0]
		}
		l[i*proxM+i] = uniform(rng, 1, 0.2, 2)[0]
	}
	l[0] = -0.8          // negative diagonal entries: the gradient step can push l_ii below zero
	l[2*proxM+2] = -1.3  //
	l[3*proxM+3] = -3e-3 // and just below zero
	return []proxCase{
		{"scalar γ=0.3", mu, l, []float64{0.3}, []float64{0.3}},
		{"scalar γ=2.5", mu, l, []float64{2.5}, []float64{2.5}},
		{"scalar γ=1e-3", mu, l, []float64{1e-3}, []float64{1e-3}},
		{"per-coordinate γ", mu, l, uniform(rng, proxM, 0.05, 3), uniform(rng, proxM*proxM, 0.05, 3)},
	}
}

func at(gs []float64, k int) float64 {
	if len(gs) == 1 {
		return gs[0]
	}
	return gs[k]
}

// proxGrad returns the gradient of h(θ) + Σ (θ − θ′)²/(2γ) with respect to θ = (μ, l) (l's diagonal positive).
func (c proxCase) proxGrad(mu, l []float64) []float64 {
	g := make([]float64, 0, len(mu)+len(l))
	for i := range mu {
		g = append(g, mu[i]+(mu[i]-c.mu[i])/at(c.gammaMu, i))
	}
	for k := range l {
		d := l[k] + (l[k]-c.l[k])/at(c.gamma, k)
		if k/proxM == k%proxM {
			d -= 1 / l[k]
		}
		g = append(g, d)
	}
	return g
}

func runProx(t *testing.T, c proxCase) (mu, l []float64) {
	t.Helper()
	mu, l = slices.Clone(c.mu), slices.Clone(c.l)
	if err := advgp.Prox(mu, l, proxM, c.gammaMu, c.gamma); err != nil {
		t.Fatal(err)
	}
	return mu, l
}

// Each coordinate's prox problem is one-dimensional with a strictly increasing derivative (on l_ii > 0 for the
// diagonal): bisection of the derivative to machine precision is an independent minimiser.
func TestProxMatchesOneDimensionalMinimisation(t *testing.T) {
	for _, c := range proxCases() {
		t.Run(c.name, func(t *testing.T) {
			mu, l := runProx(t, c)
			worst := 0.0
			check := func(what string, got, prime, gamma float64, diag bool) {
				deriv := func(v float64) float64 {
					d := v + (v-prime)/gamma
					if diag {
						d -= 1 / v
					}
					return d
				}
				lo, hi := -100.0, 100.0
				if diag {
					lo = 1e-300
				}
				for range 2000 {
					mid := lo + (hi-lo)/2
					if mid == lo || mid == hi {
						break
					}
					if deriv(mid) > 0 {
						hi = mid
					} else {
						lo = mid
					}
				}
				want := lo + (hi-lo)/2
				e := math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
				if want == 0 && got == 0 {
					e = 0
				}
				worst = math.Max(worst, e)
				if !(e <= 1e-8) {
					t.Errorf("%s: Prox %.15g, 1-D minimiser %.15g (relative error %.3g)", what, got, want, e)
				}
			}
			for i := range mu {
				check("μ", mu[i], c.mu[i], at(c.gammaMu, i), false)
			}
			for k := range l {
				check("l", l[k], c.l[k], at(c.gamma, k), k/proxM == k%proxM)
			}
			t.Logf("largest relative error %.3g", worst)
		})
	}
}

// The full multivariate prox objective minimised by Newton's method with its analytic gradient and Hessian (diagonal entries
// parameterised as l_ii = exp(s_i), so the domain is the factors Prox returns: positive diagonal), from a start
// far from the answer; every entry of l, the strictly upper ones included, is a free variable.
func TestProxMatchesMultivariateMinimisation(t *testing.T) {
	nm, nl := proxM, proxM*proxM
	for _, c := range proxCases() {
		t.Run(c.name, func(t *testing.T) {
			unpack := func(v []float64) (mu, l []float64) {
				mu, l = slices.Clone(v[:nm]), slices.Clone(v[nm:])
				for i := 0; i < nm; i++ {
					l[i*nm+i] = math.Exp(l[i*nm+i])
				}
				return mu, l
			}
			f := func(v []float64) float64 {
				mu, l := unpack(v)
				s := -float64(nm)
				for i := range mu {
					s += mu[i]*mu[i] + (mu[i]-c.mu[i])*(mu[i]-c.mu[i])/at(c.gammaMu, i)
				}
				for k := range l {
					s += l[k]*l[k] + (l[k]-c.l[k])*(l[k]-c.l[k])/at(c.gamma, k)
				}
				s /= 2
				for i := 0; i < nm; i++ {
					s -= v[nm+i*nm+i] // ln l_ii
				}
				return s
			}
			grad := func(dst, v []float64) {
				mu, l := unpack(v)
				copy(dst, c.proxGrad(mu, l))
				for i := 0; i < nm; i++ {
					dst[nm+i*nm+i] *= l[i*nm+i] // ∂/∂s_i = l_ii ∂/∂l_ii
				}
			}
			hess := func(dst *mat.SymDense, v []float64) {
				mu, l := unpack(v)
				g := c.proxGrad(mu, l)
				for k := range v {
					for j := range v {
						dst.SetSym(k, j, 0)
					}
				}
				for i := 0; i < nm; i++ {
					dst.SetSym(i, i, 1+1/at(c.gammaMu, i))
				}
				for k := 0; k < nl; k++ {
					d := 1 + 1/at(c.gamma, k)
					if k/nm == k%nm { // ∂²/∂s² = l·F_l + l²·F_ll, F_ll = 1 + 1/l² + 1/γ
						d = l[k]*g[nm+k] + l[k]*l[k]*(d+1/(l[k]*l[k]))
					}
					dst.SetSym(nm+k, nm+k, d)
				}
			}
			x0 := make([]float64, nm+nl)
			for i := range x0 {
				x0[i] = 1.5
			}
			res, err := optimize.Minimize(optimize.Problem{Func: f, Grad: grad, Hess: hess}, x0,
				&optimize.Settings{GradientThreshold: 1e-13, Converger: &optimize.FunctionConverge{Iterations: 50}, MajorIterations: 10000},
				&optimize.Newton{})
			if err != nil || res.Status != optimize.GradientThreshold {
				t.Fatalf("Newton: %v (status %v)", err, res.Status)
			}
			wantMu, wantL := unpack(res.X)
			mu, l := runProx(t, c)
			got, want := append(mu, l...), append(wantMu, wantL...)
			e := normRelErr(got, want)
			maxAbs := 0.0
			for i := range got {
				maxAbs = math.Max(maxAbs, math.Abs(got[i]-want[i]))
			}
			t.Logf("Newton status %v after %d iterations; ‖Prox − Newton‖/‖Newton‖ = %.3g, max |Δ| = %.3g", res.Status, res.Stats.MajorIterations, e, maxAbs)
			if !(e <= 1e-8) || !(maxAbs <= 1e-8) {
				t.Errorf("Prox differs from the numerical minimiser: relative %.3g, max abs %.3g\nProx %v\nNewton %v", e, maxAbs, got, want)
			}
		})
	}
}

// The prox objective's gradient vanishes at Prox's output (to round-off), and strictly upper zeros stay zero.
func TestProxOptimality(t *testing.T) {
	for _, c := range proxCases() {
		mu, l := runProx(t, c)
		worst := 0.0
		for _, g := range c.proxGrad(mu, l) {
			worst = math.Max(worst, math.Abs(g))
		}
		if !(worst <= 1e-10) {
			t.Errorf("%s: largest |∂/∂θ| of the prox objective at Prox's output %.3g > 1e-10", c.name, worst)
		}
		for i := 0; i < proxM; i++ {
			if !(l[i*proxM+i] > 0) {
				t.Errorf("%s: l[%d,%d] = %g, want > 0", c.name, i, i, l[i*proxM+i])
			}
			for j := i + 1; j < proxM; j++ {
				if l[i*proxM+j] != 0 {
					t.Errorf("%s: strictly upper l[%d,%d] = %g, want exactly 0", c.name, i, j, l[i*proxM+j])
				}
			}
		}
		t.Logf("%s: largest gradient entry %.3g", c.name, worst)
	}
}

func TestProxErrors(t *testing.T) {
	mu, l := make([]float64, proxM), make([]float64, proxM*proxM)
	for i := 0; i < proxM; i++ {
		mu[i], l[i*proxM+i] = 0.5, 1.5
	}
	one := []float64{0.1}
	var se *ops.ShapeError
	for name, c := range map[string]struct{ mu, l, gm, gl []float64 }{
		"μ length":      {mu[:3], l, one, one},
		"factor length": {mu, l[:15], one, one},
		"γ_μ length":    {mu, l, []float64{0.1, 0.2}, one},
		"γ_l length":    {mu, l, one, make([]float64, proxM)},
		"γ_μ empty":     {mu, l, nil, one},
	} {
		if err := advgp.Prox(slices.Clone(c.mu), slices.Clone(c.l), proxM, c.gm, c.gl); !errors.As(err, &se) {
			t.Errorf("%s: %v, want *ops.ShapeError", name, err)
		}
	}
	for _, bad := range []float64{0, -0.1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		vec := []float64{0.1, 0.2, bad, 0.3}
		vecL := slices.Repeat([]float64{0.2}, proxM*proxM)
		vecL[7] = bad
		for name, c := range map[string]struct{ gm, gl []float64 }{
			"scalar γ_μ": {[]float64{bad}, one},
			"scalar γ_l": {one, []float64{bad}},
			"vector γ_μ": {vec, one},
			"vector γ_l": {one, vecL},
		} {
			m2, l2 := slices.Clone(mu), slices.Clone(l)
			if err := advgp.Prox(m2, l2, proxM, c.gm, c.gl); !errors.Is(err, advgp.ErrConfig) {
				t.Errorf("%s = %g: %v, want ErrConfig", name, bad, err)
			}
			if !slices.Equal(m2, mu) || !slices.Equal(l2, l) {
				t.Errorf("%s = %g: Prox modified its arguments before failing", name, bad)
			}
		}
	}
}

// dirs returns random step directions for μ and the factor (garbage in the strictly upper part, which ProxStep
// must not read).
func dirs(rng *rand.Rand, nm int) (dMu, dL []float64) {
	return uniform(rng, nm, -1, 1), uniform(rng, nm*nm, -1, 1)
}

// With a tiny step, ProxStep is a plain gradient step on F + w·h to first order:
// Δθ = −η⊙(d + w∇h) + O(η²), ∇h = (μ, l − diag(1/l_ii)); per-coordinate η.
func TestProxStepFirstOrder(t *testing.T) {
	p := newProblem(t, 6, 4, 2, 10, true)
	nm := p.m.M()
	rng := rand.New(rand.NewPCG(9, 9))
	dMu, dL := dirs(rng, nm)
	const w = 0.7
	for _, c := range []struct {
		name        string
		etaMu, etaL []float64
	}{
		{"scalar η", []float64{1e-7}, []float64{1e-7}},
		{"per-coordinate η", uniform(rng, nm, 0.5e-7, 2e-7), uniform(rng, nm*nm, 0.5e-7, 2e-7)},
	} {
		mu0, l0 := p.m.Mu().Value(), p.m.Sqrt().Value()
		clamped, err := p.m.ProxStep(dMu, dL, c.etaMu, c.etaL, w)
		if err != nil || clamped != 0 {
			t.Fatalf("%s: ProxStep: clamped %d, %v", c.name, clamped, err)
		}
		mu1, l1 := p.m.Mu().Value(), p.m.Sqrt().Value()
		worst := 0.0
		cmp := func(what string, k int, got, want float64) {
			if e := math.Abs(got - want); e > worst {
				worst = e
			}
			if !(math.Abs(got-want) <= 1e-5) {
				t.Errorf("%s: %s[%d]: Δθ/η = %.10g, gradient step %.10g", c.name, what, k, got, want)
			}
		}
		for i := 0; i < nm; i++ {
			eta := at(c.etaMu, i)
			cmp("μ", i, (mu1[i]-mu0[i])/eta, -(dMu[i] + w*mu0[i]))
		}
		for i := 0; i < nm; i++ {
			for j := 0; j < nm; j++ {
				k := i*nm + j
				eta := at(c.etaL, k)
				switch {
				case j > i:
					if l1[k] != 0 {
						t.Errorf("%s: strictly upper l[%d,%d] = %g", c.name, i, j, l1[k])
					}
				case j == i:
					cmp("l", k, (l1[k]-l0[k])/eta, -(dL[k] + w*(l0[k]-1/l0[k])))
				default:
					cmp("l", k, (l1[k]-l0[k])/eta, -(dL[k] + w*l0[k]))
				}
			}
		}
		t.Logf("%s: largest |Δθ/η − gradient step| %.3g", c.name, worst)
	}
}

// A gradient step that pushes two diagonal entries far below zero with a tiny γ = wη puts them below the floor:
// they are raised to twice the floor and counted; the third diagonal entry is not.
func TestProxStepClamps(t *testing.T) {
	p := newProblem(t, 7, 3, 2, 10, false) // q = N(0, I)
	nm := p.m.M()
	dMu, dL := make([]float64, nm), make([]float64, nm*nm)
	dL[0], dL[2*nm+2] = 1e4, 5e3
	clamped, err := p.m.ProxStep(dMu, dL, []float64{1}, []float64{1}, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	l := p.m.Sqrt().Value()
	floor := graph.DefaultPositiveFloor
	if clamped != 2 {
		t.Errorf("clamped = %d, want 2", clamped)
	}
	for _, k := range []int{0, 2*nm + 2} {
		if relErr(l[k], 2*floor) > 1e-9 {
			t.Errorf("l[%d] = %g, want 2·floor = %g", k, l[k], 2*floor)
		}
	}
	if relErr(l[nm+1], 1) > 1e-8 {
		t.Errorf("unclamped l[1,1] = %.12g, want ≈ 1", l[nm+1])
	}
	for name, w := range map[string]float64{"zero": 0, "negative": -1, "NaN": math.NaN(), "Inf": math.Inf(1)} {
		if _, err := p.m.ProxStep(dMu, dL, []float64{1}, []float64{1}, w); !errors.Is(err, advgp.ErrConfig) {
			t.Errorf("w %s: %v, want ErrConfig", name, err)
		}
	}
	var se *ops.ShapeError
	if _, err := p.m.ProxStep(dMu[:2], dL, []float64{1}, []float64{1}, 1); !errors.As(err, &se) {
		t.Errorf("short dMu: %v, want *ops.ShapeError", err)
	}
}

// optimalQ returns the optimal q(w) = N(μ*, Σ*) of a whitened SVGP with a Gaussian likelihood at fixed kernel,
// Z and noise: A = I + βΦΦᵀ (Φ = C⁻¹K_mx [M,N], C = chol(K_mm + jitter·I)), Σ* = A⁻¹, μ* = βA⁻¹Φy. Computed
// here independently of WeightSpace.
func optimalQ(t *testing.T, p *problem) (mu, sigma []float64) {
	t.Helper()
	m := p.m
	nm, d := m.M(), m.Layer.InputDim()
	z := mat.NewDense(nm, d, m.Layer.Z.Value())
	kmm, err := gp.KernelMatrix(m.Layer.Kernel, z, z)
	if err != nil {
		t.Fatal(err)
	}
	kmx, err := gp.KernelMatrix(m.Layer.Kernel, z, p.x)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nm; i++ {
		kmm.Set(i, i, kmm.At(i, i)+m.Layer.Jitter())
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(nm, kmm.RawMatrix().Data)) {
		t.Fatal("K_mm not PD")
	}
	var c mat.TriDense
	ch.LTo(&c)
	var phi mat.Dense
	if err := phi.Solve(&c, kmx); err != nil {
		t.Fatal(err)
	}
	beta := 1 / m.Lik.Variance()
	var a mat.Dense
	a.Mul(&phi, phi.T())
	a.Scale(beta, &a)
	for i := 0; i < nm; i++ {
		a.Set(i, i, a.At(i, i)+1)
	}
	var ach mat.Cholesky
	if !ach.Factorize(mat.NewSymDense(nm, a.RawMatrix().Data)) {
		t.Fatal("A not PD")
	}
	var s mat.SymDense
	if err := ach.InverseTo(&s); err != nil {
		t.Fatal(err)
	}
	var py, muv mat.Dense
	py.Mul(&phi, p.y)
	py.Scale(beta, &py)
	if err := ach.SolveTo(&muv, &py); err != nil {
		t.Fatal(err)
	}
	return muv.RawMatrix().Data, mat.DenseCopyOf(&s).RawMatrix().Data
}

// sigmaOf returns Σ = LLᵀ for the lower factor l [n,n].
func sigmaOf(l []float64, n int) []float64 {
	lm := mat.NewDense(n, n, l)
	var s mat.Dense
	s.Mul(lm, lm.T())
	return s.RawMatrix().Data
}

// step is one proximal gradient update of q(w) with value-space directions dMu, dL, scalar step η and weight w.
type step func(m *advgp.Model, dMu, dL []float64, eta, w float64) error

func proxStep(m *advgp.Model, dMu, dL []float64, eta, w float64) error {
	_, err := m.ProxStep(dMu, dL, []float64{eta}, []float64{eta}, w)
	return err
}

// shrinkStep is a wrong proximal step (the negative control): the diagonal is shrunk like the other entries,
// l_ii ← l′_ii/(1+γ), as if h had no −ln|Σ| term.
func shrinkStep(m *advgp.Model, dMu, dL []float64, eta, w float64) error {
	n := m.M()
	mu, l := m.Mu().Value(), m.Sqrt().Value()
	for i := range mu {
		mu[i] = (mu[i] - eta*dMu[i]) / (1 + eta*w)
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l[i*n+j] = (l[i*n+j] - eta*dL[i*n+j]) / (1 + eta*w)
		}
		l[i*n+i] = math.Max(l[i*n+i], 2*graph.DefaultPositiveFloor)
	}
	if err := m.Mu().Set(mu); err != nil {
		return err
	}
	return m.Sqrt().Set(l)
}

// iterate runs steps proximal gradient updates with the exact full-data gradients of the data term per point
// (ShardTerm(N) / N, w = 1/N) and returns −ELBO/N before each step and after the last.
func iterate(t *testing.T, p *problem, s step, steps int, eta float64) []float64 {
	t.Helper()
	prog := p.shardProgram(t)
	n := float64(p.n)
	objs := make([]float64, 0, steps+1)
	for k := 0; ; k++ {
		g := runLoss(t, prog)
		objs = append(objs, (g+p.m.H())/n)
		if k == steps {
			return objs
		}
		gMu, gL, err := p.m.QGrads(prog.Grad(p.m.Mu()), prog.Grad(p.m.Sqrt()))
		if err != nil {
			t.Fatal(err)
		}
		for i := range gMu {
			gMu[i] /= n
		}
		for i := range gL {
			gL[i] /= n
		}
		if err := s(p.m, gMu, gL, eta, 1/n); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
	}
}

// Proximal gradient descent with ProxStep and the exact gradients decreases −ELBO/N at every step from q = N(0, I)
// and converges to the optimal q of the whitened SVGP for the fixed kernel and noise (optimalQ): μ and Σ to
// 1e-6 relative (Frobenius), −ELBO/N to its optimum. The negative control, a prox that shrinks the diagonal
// (no −ln|Σ| term), also decreases its own objective but misses Σ* by orders of magnitude more than the tolerance.
func TestProxStepConvergesToOptimalQ(t *testing.T) {
	const (
		seed  = 13
		steps = 600
		eta   = 0.1
		tol   = 1e-5
	)
	p := newProblem(t, seed, 4, 1, 30, false)
	nm := p.m.M()
	muStar, sigmaStar := optimalQ(t, p)

	objs := iterate(t, p, proxStep, steps, eta)
	for k := 1; k < len(objs); k++ {
		// Strictly decreasing while far from the optimum; afterwards never rising beyond round-off.
		if (k <= 100 && !(objs[k] < objs[k-1])) || !(objs[k] <= objs[k-1]+1e-13) {
			t.Fatalf("−ELBO/N rose at step %d: %.17g → %.17g", k, objs[k-1], objs[k])
		}
	}
	if !(objs[30] < objs[0]-0.1) {
		t.Errorf("−ELBO/N after 30 steps %.6g, initial %.6g: not decreasing", objs[30], objs[0])
	}
	eMu := normRelErr(p.m.Mu().Value(), muStar)
	eSigma := normRelErr(sigmaOf(p.m.Sqrt().Value(), nm), sigmaStar)

	// −ELBO/N at the optimum, through the weight-space reference.
	final := objs[len(objs)-1]
	l, err := mat.NewDense(nm, nm, nil), error(nil)
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(nm, sigmaStar)) {
		t.Fatal("Σ* not PD")
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l.Copy(&lt)
	if err = p.m.Mu().Set(muStar); err != nil {
		t.Fatal(err)
	}
	if err = p.m.Sqrt().Set(l.RawMatrix().Data); err != nil {
		t.Fatal(err)
	}
	ws, err := p.m.WeightSpace(p.x, p.y)
	if err != nil {
		t.Fatal(err)
	}
	opt := (ws.G + ws.H) / float64(p.n)
	t.Logf("−ELBO/N: initial %.10g, after 30 steps %.10g, after %d steps %.12g, optimum %.12g", objs[0], objs[30], steps, final, opt)
	t.Logf("relative error after %d steps: μ %.3g, Σ %.3g", steps, eMu, eSigma)
	if !(eMu <= tol) || !(eSigma <= tol) {
		t.Errorf("q after %d steps is not the optimum: relative errors μ %.3g, Σ %.3g > %g", steps, eMu, eSigma, tol)
	}
	if !(final >= opt-1e-12) || !(final-opt <= 1e-9) {
		t.Errorf("final −ELBO/N %.15g, optimum %.15g", final, opt)
	}

	// Negative control.
	c := newProblem(t, seed, 4, 1, 30, false)
	iterate(t, c, shrinkStep, steps, eta)
	cMu := normRelErr(c.m.Mu().Value(), muStar)
	cSigma := normRelErr(sigmaOf(c.m.Sqrt().Value(), nm), sigmaStar)
	t.Logf("negative control (diagonal shrinkage): relative errors μ %.3g, Σ %.3g", cMu, cSigma)
	if cSigma <= 1e3*tol {
		t.Errorf("the check cannot tell a wrong prox: diagonal shrinkage reaches Σ within %.3g", cSigma)
	}
}
