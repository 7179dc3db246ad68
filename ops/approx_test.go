package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
)

// Test likelihoods of the exact-GP approximations (the real ones live in gp/likelihoods, which ops may not import).

// lapGauss is log N(y | f, θ₀): log-concave, and the Laplace approximation and EP are exact for it.
type lapGauss struct{}

func (lapGauss) Name() string  { return "test.LapGauss" }
func (lapGauss) NumTheta() int { return 1 }
func (lapGauss) LogProb(f, y float64, th []float64) float64 {
	return -0.5*math.Log(2*math.Pi*th[0]) - 0.5*(y-f)*(y-f)/th[0]
}
func (lapGauss) DLogProbDF(f, y float64, th []float64) float64 { return (y - f) / th[0] }
func (lapGauss) DLogProbDTheta(f, y float64, th []float64, dst []float64) {
	dst[0] = -0.5/th[0] + 0.5*(y-f)*(y-f)/(th[0]*th[0])
}
func (lapGauss) DerivsF(f, y float64, th []float64) (float64, float64, float64) {
	return (y - f) / th[0], -1 / th[0], 0
}
func (lapGauss) DerivsFTheta(f, y float64, th []float64, d1, d2 []float64) {
	d1[0], d2[0] = -(y-f)/(th[0]*th[0]), 1/(th[0]*th[0])
}
func (lapGauss) LogConcave() bool { return true }

// lapGaussTilted adds the closed-form tilted moments: Ẑ = N(y; μ, v + θ₀).
type lapGaussTilted struct{ lapGauss }

func (lapGaussTilted) Name() string { return "test.LapGaussTilted" }
func (lapGaussTilted) Tilted(y, mu, v float64, th []float64) (float64, float64, float64) {
	s := v + th[0]
	return -0.5*math.Log(2*math.Pi*s) - 0.5*(y-mu)*(y-mu)/s, (y - mu) / s, -1 / s
}

// lapLogistic is the logit Bernoulli log σ((2y − 1)f), y ∈ {0, 1}: log-concave, no parameters.
type lapLogistic struct{}

func (lapLogistic) Name() string  { return "test.LapLogistic" }
func (lapLogistic) NumTheta() int { return 0 }
func (lapLogistic) LogProb(f, y float64, _ []float64) float64 {
	return -ops.SoftplusFloat(-(2*y - 1) * f)
}
func (lapLogistic) DLogProbDF(f, y float64, _ []float64) float64 { return y - 1/(1+math.Exp(-f)) }
func (lapLogistic) DLogProbDTheta(_, _ float64, _, _ []float64)  {}
func (lapLogistic) DerivsF(f, y float64, _ []float64) (float64, float64, float64) {
	p := 1 / (1 + math.Exp(-f))
	return y - p, -p * (1 - p), -p * (1 - p) * (1 - 2*p)
}
func (lapLogistic) DerivsFTheta(_, _ float64, _, _, _ []float64) {}
func (lapLogistic) LogConcave() bool                             { return true }

// lapCauchy is −θ₀·log(1 + (y − f)²): heavy-tailed, not log-concave (W < 0 for |y − f| > 1).
type lapCauchy struct{}

func (lapCauchy) Name() string  { return "test.LapCauchy" }
func (lapCauchy) NumTheta() int { return 1 }
func (lapCauchy) LogProb(f, y float64, th []float64) float64 {
	r := y - f
	return -th[0] * math.Log1p(r*r)
}
func (lapCauchy) DLogProbDF(f, y float64, th []float64) float64 {
	r := y - f
	return 2 * th[0] * r / (1 + r*r)
}
func (lapCauchy) DLogProbDTheta(f, y float64, _ []float64, dst []float64) {
	r := y - f
	dst[0] = -math.Log1p(r * r)
}
func (lapCauchy) DerivsF(f, y float64, th []float64) (float64, float64, float64) {
	r := y - f
	u := 1 + r*r
	return 2 * th[0] * r / u, -2 * th[0] * (1 - r*r) / (u * u), -4 * th[0] * r * (3 - r*r) / (u * u * u)
}
func (lapCauchy) DerivsFTheta(f, y float64, _ []float64, d1, d2 []float64) {
	r := y - f
	u := 1 + r*r
	d1[0], d2[0] = 2*r/u, -2*(1-r*r)/(u*u)
}
func (lapCauchy) LogConcave() bool { return false }

// seK returns the squared-exponential covariance s2·exp(−‖x_i − x_j‖²/(2ℓ²)) of the rows of x [n,d] (row-major),
// plus jitter on the diagonal.
func seK(x []float64, d int, s2, ell, jitter float64) []float64 {
	n := len(x) / d
	k := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			r2 := 0.0
			for a := 0; a < d; a++ {
				u := (x[i*d+a] - x[j*d+a]) / ell
				r2 += u * u
			}
			k[i*n+j] = s2 * math.Exp(-0.5*r2)
		}
		k[i*n+i] += jitter
	}
	return k
}

// approxProblem is a small 1-D problem: inputs, K, a prior mean and targets of kind "real", "binary" or
// "outliers" (real targets with two gross outliers).
func approxProblem(rng *rand.Rand, n int, kind string) (x, k, m, y []float64) {
	x, m, y = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 4 * rng.Float64()
		m[i] = 0.2*x[i] - 0.3
		f := math.Sin(2 * x[i])
		switch kind {
		case "binary":
			if f+0.5*rng.NormFloat64() > 0 {
				y[i] = 1
			}
		default:
			y[i] = f + 0.1*rng.NormFloat64()
		}
	}
	switch kind {
	case "outliers":
		y[1] += 6
		y[n-2] -= 8
	case "mild": // outliers within the reach of the cavity's quadrature nodes (EP's tilted moments)
		y[1] += 2.5
		y[n-2] -= 3
	}
	return x, seK(x, 1, 1.3, 0.8, 1e-6), m, y
}

// exactGaussLML returns log N(y | m, K + s2·I).
func exactGaussLML(t *testing.T, k, m, y []float64, s2 float64) float64 {
	t.Helper()
	n := len(y)
	c := append([]float64(nil), k...)
	for i := 0; i < n; i++ {
		c[i*n+i] += s2
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, c)) {
		t.Fatal("K + s2·I not PD")
	}
	r := mat.NewVecDense(n, nil)
	for i := range y {
		r.SetVec(i, y[i]-m[i])
	}
	var a mat.VecDense
	if err := ch.SolveVecTo(&a, r); err != nil {
		t.Fatal(err)
	}
	return -0.5*mat.Dot(r, &a) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
}

// TestApproxGaussianExact: for a Gaussian likelihood the Laplace approximation and EP (parallel and sequential,
// closed-form and quadrature tilted moments) are exact: their log marginal likelihood is the GP's
// log N(y | m, K + s²I) and their predictive variances GP regression's.
func TestApproxGaussianExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 1))
	const n, s2 = 15, 0.3
	x, k, m, y := approxProblem(rng, n, "real")
	want := exactGaussLML(t, k, m, y, s2)
	theta := []float64{s2}
	xs := []float64{-0.5, 1.1, 2.0, 5}
	kxs := make([]float64, n*len(xs))
	kss := make([]float64, len(xs))
	for i := range x {
		for j, v := range xs {
			d := (x[i] - v) / 0.8
			kxs[i*len(xs)+j] = 1.3 * math.Exp(-0.5*d*d)
		}
	}
	for j := range kss {
		kss[j] = 1.3
	}
	// GP regression's variances k** − k*ᵀ(K + s²I)⁻¹k*.
	c := append([]float64(nil), k...)
	for i := 0; i < n; i++ {
		c[i*n+i] += s2
	}
	var ch mat.Cholesky
	ch.Factorize(mat.NewSymDense(n, c))
	var sol mat.Dense
	if err := ch.SolveTo(&sol, mat.NewDense(n, len(xs), kxs)); err != nil {
		t.Fatal(err)
	}
	wantVar := make([]float64, len(xs))
	for j := range wantVar {
		wantVar[j] = kss[j]
		for i := 0; i < n; i++ {
			wantVar[j] -= kxs[i*len(xs)+j] * sol.At(i, j)
		}
	}
	check := func(name string, q *ops.GaussApprox, err error, tol float64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := math.Abs(q.LogZ - want); d > tol*math.Abs(want) {
			t.Errorf("%s: log Z %.15g, exact %.15g (rel err %.2g)", name, q.LogZ, want, d/math.Abs(want))
		}
		v, err := q.PredictVar(kxs, kss)
		if err != nil {
			t.Fatal(err)
		}
		for j := range v {
			if d := math.Abs(v[j] - wantVar[j]); d > 1e-8*(1+wantVar[j]) {
				t.Errorf("%s: predictive variance %d = %.12g, GP regression's %.12g", name, j, v[j], wantVar[j])
			}
		}
	}
	q, err := ops.LaplaceApprox(k, m, y, n, lapGauss{}, theta, ops.LaplaceOptions{}, nil)
	check("Laplace", q, err, 1e-12)
	for _, lik := range []ops.ScalarLogLik{lapGauss{}, lapGaussTilted{}} {
		for _, seq := range []bool{false, true} {
			q, err := ops.EPApprox(k, m, y, n, lik, theta, ops.EPOptions{Tol: 1e-13, Sequential: seq}, nil, nil)
			check(fmt.Sprintf("EP(%s, sequential=%t)", lik.Name(), seq), q, err, 1e-11)
		}
	}
}

// approxBuild builds LaplaceLML or EPLML over the inputs (K, m, y, θ...).
func approxBuild(ep bool, lik ops.LaplaceLogLik, lo ops.LaplaceOptions, eo ops.EPOptions) gradcheck.Build {
	return func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		if ep {
			return ops.EPLML(lik, eo, in[0], in[1], in[2], in[3:]...)
		}
		return ops.LaplaceLML(lik, lo, in[0], in[1], in[2], in[3:]...)
	}
}

// TestApproxLMLGradients checks the gradients of LaplaceLML and EPLML in K, m and θ against central finite
// differences: log-concave likelihoods with and without parameters, and a heavy-tailed one on data with
// outliers (negative W and EP sites: the factorisation through chol(K)).
func TestApproxLMLGradients(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lik   ops.LaplaceLogLik
		data  string
		theta []float64
	}{{lapLogistic{}, "binary", nil}, {lapGauss{}, "real", []float64{0.4}}, {lapCauchy{}, "outliers", []float64{0.8}},
		{lapCauchy{}, "mild", []float64{2}}} {
		for _, ep := range []bool{false, true} {
			if ep && c.data == "outliers" {
				continue // far outliers: the cavity's quadrature misses the likelihood's peak at ~1e-8 (TestTiltedMoments)
			}
			name := fmt.Sprintf("%s/%s/ep=%t", c.lik.Name(), c.data, ep)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(7, uint64(len(c.data))))
				const n = 9
				_, k, m, y := approxProblem(rng, n, c.data)
				in := []gradcheck.Input{{Name: "K", Shape: []int{n, n}, Value: k}, {Name: "m", Shape: []int{n, 1}, Value: m},
					{Name: "y", Shape: []int{n, 1}, Value: y, NoGrad: true}}
				for j, v := range c.theta {
					in = append(in, gradcheck.Input{Name: fmt.Sprint("theta", j), Value: []float64{v}})
				}
				// Cold starts: every evaluation takes the same iterations from the same start, so that the central
				// differences see the function, not the round-off of different paths to the mode (TestApproxWarm
				// checks that warm starts reach the same values).
				eo := ops.EPOptions{Tol: 1e-14, MaxSweeps: 20000, Cold: true}
				if !c.lik.LogConcave() {
					eo.QuadPoints = 200 // the cavity's Gauss–Hermite rule: see TestTiltedMoments
				}
				worst := gradcheck.Check(t, approxBuild(ep, c.lik, ops.LaplaceOptions{Cold: true}, eo), in)
				t.Logf("%s: largest relative error %.2g", name, worst)
			})
		}
	}
}

// TestApproxNegativeSites: the heavy-tailed likelihood on the gradient checks' data with outliers has negative W at
// the Laplace mode and negative EP site precisions, so both used the factorisation's Woodbury correction — whose
// results the gradient checks above cover — and EP's parallel and sequential schedules reach the same fixed point.
func TestApproxNegativeSites(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, uint64(len("outliers"))))
	const n = 9
	_, k, m, y := approxProblem(rng, n, "outliers")
	theta := []float64{0.8}
	q, err := ops.LaplaceApprox(k, m, y, n, lapCauchy{}, theta, ops.LaplaceOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNegative(q.W) {
		t.Errorf("Laplace: W %v has no negative entry: the test does not reach the general factorisation", q.W)
	}
	_, k, m, y = approxProblem(rand.New(rand.NewPCG(7, uint64(len("mild")))), n, "mild")
	theta = []float64{2}
	par, err := ops.EPApprox(k, m, y, n, lapCauchy{}, theta, ops.EPOptions{Tol: 1e-12, MaxSweeps: 5000, QuadPoints: 128}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := ops.EPApprox(k, m, y, n, lapCauchy{}, theta, ops.EPOptions{Tol: 1e-12, MaxSweeps: 5000, Sequential: true, QuadPoints: 128}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasNegative(par.W) {
		t.Errorf("EP: τ̃ %v has no negative entry", par.W)
	}
	if d := math.Abs(par.LogZ - seq.LogZ); d > 1e-9*math.Abs(par.LogZ) {
		t.Errorf("EP log Z: parallel %.15g, sequential %.15g", par.LogZ, seq.LogZ)
	}
	t.Logf("log Z: Laplace %.10g, EP %.10g (%d parallel, %d sequential sweeps)", q.LogZ, par.LogZ, par.Iters, seq.Iters)
}

func hasNegative(v []float64) bool {
	for _, x := range v {
		if x < 0 {
			return true
		}
	}
	return false
}

// TestApproxNotConverged: an iteration limit below what the problem needs is a *ConvergenceError (ErrNotConverged)
// naming the method, for the functions and the ops.
func TestApproxNotConverged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	const n = 12
	_, k, m, y := approxProblem(rng, n, "binary")
	var stats ops.ApproxStats
	_, err := ops.EPApprox(k, m, y, n, lapLogistic{}, nil, ops.EPOptions{MaxSweeps: 2, Tol: 1e-12, Stats: &stats}, nil, nil)
	var ce *ops.ConvergenceError
	if !errors.As(err, &ce) || !errors.Is(err, ops.ErrNotConverged) || ce.Method != "EP" || ce.Iters != 2 {
		t.Errorf("EP with 2 sweeps: error %v, want a *ConvergenceError of EP after 2 sweeps", err)
	}
	if s := stats.Snapshot(); s.Calls != 1 || s.Failures != 1 || s.LastIters != 2 {
		t.Errorf("stats %+v, want one failed call of 2 sweeps", s)
	}
	_, err = ops.LaplaceApprox(k, m, y, n, lapLogistic{}, nil, ops.LaplaceOptions{MaxIter: 1}, nil)
	if !errors.As(err, &ce) || ce.Method != "Laplace" {
		t.Errorf("Laplace with 1 iteration: error %v, want a *ConvergenceError", err)
	}
	// Through the op: the run fails with the typed error.
	g := G.NewGraph()
	in := gradcheck.Leaves(g, []gradcheck.Input{{Name: "K", Shape: []int{n, n}, Value: k}, {Name: "m", Shape: []int{n, 1}, Value: m},
		{Name: "y", Shape: []int{n, 1}, Value: y}})
	out, err := ops.EPLML(lapLogistic{}, ops.EPOptions{MaxSweeps: 2, Tol: 1e-12}, in[0], in[1], in[2])
	if err != nil {
		t.Fatal(err)
	}
	_ = out
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); !errors.As(ops.UnwrapVM(err), &ce) {
		t.Errorf("running EPLML with 2 sweeps: %v, want a *ConvergenceError", err)
	}
}

// TestApproxHashes: every option that changes what the ops compute, and the likelihood, is in their hash.
func TestApproxHashes(t *testing.T) {
	lap := func(lik ops.LaplaceLogLik, o ops.LaplaceOptions) variant {
		return func(a, b *G.Node) (*G.Node, error) {
			m, y := approxVec(a.Graph(), "m"), approxVec(a.Graph(), "y")
			var th []*G.Node
			if lik.NumTheta() > 0 {
				th = append(th, G.NewScalar(a.Graph(), G.Float64, G.WithName("theta")))
			}
			return ops.LaplaceLML(lik, o, a, m, y, th...)
		}
	}
	ep := func(lik ops.ScalarLogLik, o ops.EPOptions) variant {
		return func(a, b *G.Node) (*G.Node, error) {
			m, y := approxVec(a.Graph(), "m"), approxVec(a.Graph(), "y")
			var th []*G.Node
			if lik.NumTheta() > 0 {
				th = append(th, G.NewScalar(a.Graph(), G.Float64, G.WithName("theta")))
			}
			return ops.EPLML(lik, o, a, m, y, th...)
		}
	}
	checkHashes(t, 4, map[string]variant{
		"lap":          lap(lapLogistic{}, ops.LaplaceOptions{}),
		"lap-default":  lap(lapLogistic{}, ops.LaplaceOptions{Tol: ops.DefaultLaplaceTol, MaxIter: ops.DefaultLaplaceMaxIter}),
		"lap-stats":    lap(lapLogistic{}, ops.LaplaceOptions{Stats: &ops.ApproxStats{}}),
		"lap-gauss":    lap(lapGauss{}, ops.LaplaceOptions{}),
		"lap-tol":      lap(lapLogistic{}, ops.LaplaceOptions{Tol: 1e-6}),
		"lap-iter":     lap(lapLogistic{}, ops.LaplaceOptions{MaxIter: 7}),
		"lap-cold":     lap(lapLogistic{}, ops.LaplaceOptions{Cold: true}),
		"ep":           ep(lapLogistic{}, ops.EPOptions{}),
		"ep-default":   ep(lapLogistic{}, ops.EPOptions{Damping: ops.DefaultEPParallelDamping, QuadPoints: ops.DefaultEPQuadPoints}),
		"ep-gauss":     ep(lapGauss{}, ops.EPOptions{}),
		"ep-tol":       ep(lapLogistic{}, ops.EPOptions{Tol: 1e-3}),
		"ep-sweeps":    ep(lapLogistic{}, ops.EPOptions{MaxSweeps: 3}),
		"ep-damping":   ep(lapLogistic{}, ops.EPOptions{Damping: 0.3}),
		"ep-seq":       ep(lapLogistic{}, ops.EPOptions{Sequential: true}),
		"ep-points":    ep(lapLogistic{}, ops.EPOptions{QuadPoints: 11}),
		"ep-cold":      ep(lapLogistic{}, ops.EPOptions{Cold: true}),
		"ep-seq-damp1": ep(lapLogistic{}, ops.EPOptions{Sequential: true, Damping: 1}),
	}, [2]string{"lap", "lap-default"}, [2]string{"lap", "lap-stats"}, [2]string{"lap-default", "lap-stats"}, [2]string{"ep", "ep-default"}, [2]string{"ep-seq", "ep-seq-damp1"})
}

// approxVec returns the graph's [4,1] node named name, created once.
func approxVec(g *G.ExprGraph, name string) *G.Node {
	if n := g.ByName(name); len(n) > 0 {
		return n[0]
	}
	return G.NewMatrix(g, G.Float64, G.WithShape(4, 1), G.WithName(name))
}

// TestTiltedMoments: the quadrature's tilted moments against closed forms (Gaussian) and a fine trapezoidal rule
// (logistic, heavy-tailed with a far observation), and ∂log Ẑ/∂θ against central differences.
func TestTiltedMoments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lik          ops.ScalarLogLik
		y, mu, v, th float64
		points       int // 0: the default
	}{{lapGauss{}, 0.7, -0.2, 1.5, 0.3, 0}, {lapLogistic{}, 1, -1.3, 4, 0, 0}, {lapLogistic{}, 0, 2.5, 0.2, 0, 0},
		{lapCauchy{}, 3, 0.2, 0.8, 1.5, 128}, {lapCauchy{}, -0.4, 0.1, 2, 0.7, 128}} {
		var theta []float64
		if c.lik.NumTheta() > 0 {
			theta = []float64{c.th}
		}
		got, err := ops.TiltedMoments(c.lik, c.y, c.mu, c.v, theta, c.points, make([]float64, len(theta)))
		if err != nil {
			t.Fatal(err)
		}
		// A heavy-tailed likelihood's tilted moments on the cavity's Gauss–Hermite rule converge slowly (its poles at
		// y ± i): 128 nodes.
		// Trapezoid over ±14 cavity standard deviations, 2·10⁵ panels.
		lo, hi, panels := c.mu-14*math.Sqrt(c.v), c.mu+14*math.Sqrt(c.v), 200000
		h := (hi - lo) / float64(panels)
		var z, m1, m2 float64
		for i := 0; i <= panels; i++ {
			f := lo + float64(i)*h
			w := h
			if i == 0 || i == panels {
				w /= 2
			}
			p := w * math.Exp(c.lik.LogProb(f, c.y, theta)-(f-c.mu)*(f-c.mu)/(2*c.v)) / math.Sqrt(2*math.Pi*c.v)
			z, m1, m2 = z+p, m1+p*f, m2+p*f*f
		}
		mean := m1 / z
		want := ops.Tilted{LogZ: math.Log(z), Mean: mean, Var: m2/z - mean*mean}
		tol := 1e-9
		if c.points > 0 {
			tol = 1e-7
		}
		if math.Abs(got.LogZ-want.LogZ) > tol || math.Abs(got.Mean-want.Mean) > 10*tol || math.Abs(got.Var-want.Var) > 10*tol {
			t.Errorf("%s y=%v at N(%v, %v): quadrature %+v, trapezoid %+v", c.lik.Name(), c.y, c.mu, c.v, got, want)
		}
		if len(theta) == 1 {
			dth := make([]float64, 1)
			if _, err := ops.TiltedMoments(c.lik, c.y, c.mu, c.v, theta, c.points, dth); err != nil {
				t.Fatal(err)
			}
			const step = 1e-5
			p, _ := ops.TiltedMoments(c.lik, c.y, c.mu, c.v, []float64{c.th + step}, c.points, nil)
			m, _ := ops.TiltedMoments(c.lik, c.y, c.mu, c.v, []float64{c.th - step}, c.points, nil)
			if fd := (p.LogZ - m.LogZ) / (2 * step); math.Abs(fd-dth[0]) > 1e-7*(1+math.Abs(fd)) {
				t.Errorf("%s: ∂log Ẑ/∂θ %.10g, central difference %.10g", c.lik.Name(), dth[0], fd)
			}
		}
	}
	if _, err := ops.TiltedMoments(lapLogistic{}, 1, 0, 0, nil, 0, nil); err == nil {
		t.Error("a zero cavity variance: no error")
	}
}

// TestEPStopsAtFixedPoint: EP stops when the sweeps' undamped update moves no site by more than its tolerance, not
// when the damped step is that small (a damping δ shrinks the step δ-fold without bringing the sites closer):
// from the sites it returns, one undamped sweep converges at once. On coupled problems, where the adaptation damps
// the parallel sweeps, this failed before the criterion was the undamped residual.
func TestEPStopsAtFixedPoint(t *testing.T) {
	const n, d = 200, 2
	rng := rand.New(rand.NewPCG(41, 5))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	m, y := make([]float64, n), make([]float64, n)
	for i := range y {
		if f := math.Sin(3*x[i*d]) + x[i*d+1]; (f > 0) != (rng.Float64() < 0.1) {
			y[i] = 1
		}
	}
	for _, c := range []struct{ variance, ell float64 }{{100, 0.5}, {1000, 0.5}, {100, 2}, {1000, 2}} {
		k := seK(x, d, c.variance, c.ell, 0)
		q, err := ops.EPApprox(k, m, y, n, lapLogistic{}, nil, ops.EPOptions{}, nil, nil)
		if err != nil {
			t.Fatalf("variance %g, ℓ %g: %v", c.variance, c.ell, err)
		}
		again, err := ops.EPApprox(k, m, y, n, lapLogistic{}, nil, ops.EPOptions{MaxSweeps: 1}, q.W, q.Nu)
		if err != nil {
			t.Errorf("variance %g, ℓ %g: EP stopped after %d sweeps at sites one more sweep moves: %v", c.variance, c.ell, q.Iters, err)
			continue
		}
		if d := math.Abs(again.LogZ - q.LogZ); d > 1e-9*math.Abs(q.LogZ) {
			t.Errorf("variance %g, ℓ %g: log Z %.12g, one sweep on %.12g", c.variance, c.ell, q.LogZ, again.LogZ)
		}
	}
}
