package gp

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultNoiseVariance is the initial Gaussian noise variance of GPR when the config leaves it zero (suited to
// standardised targets).
const DefaultNoiseVariance = 0.1

// DefaultPredictChunk is the number of test rows predicted per graph run when PredictOptions.Chunk is zero.
const DefaultPredictChunk = 1024

// GPRConfig configures exact GP regression. Zero values mean defaults.
type GPRConfig struct {
	// Kernel is the prior covariance (required).
	Kernel Kernel
	// Mean is the prior mean; nil means the zero mean (of the targets' width).
	Mean MeanFunction
	// NoiseVariance is the initial noise variance σ² (default DefaultNoiseVariance).
	NoiseVariance float64
	// NoiseFloor is the lower bound of σ² (default graph.DefaultPositiveFloor).
	NoiseFloor float64
}

// GPR is exact Gaussian-process regression with Gaussian noise and P independent outputs sharing one kernel:
// y_p ~ N(m_p(X), K + σ²I) (Rasmussen & Williams 2006, Algorithm 2.1; MATH.md §1).
type GPR struct {
	Kernel Kernel
	Mean   MeanFunction // nil: zero
	Noise  *graph.Param // σ², scalar
}

// NewGPR returns an exact GP regression model.
func NewGPR(c GPRConfig) (*GPR, error) {
	if c.Kernel == nil {
		return nil, configErr("GPR: nil Kernel")
	}
	noise, err := graph.NewParam(gprNoiseName, []float64{orDefault(c.NoiseVariance, DefaultNoiseVariance)}, graph.Positive{Floor: c.NoiseFloor})
	if err != nil {
		return nil, fmt.Errorf("gp: GPR: %w", err)
	}
	return &GPR{Kernel: c.Kernel, Mean: c.Mean, Noise: noise}, nil
}

// Params returns the kernel's, the mean's and the noise parameters.
func (m *GPR) Params() []*graph.Param {
	ps := append([]*graph.Param(nil), m.Kernel.Params()...)
	if m.Mean != nil {
		ps = append(ps, m.Mean.Params()...)
	}
	return append(ps, m.Noise)
}

func (m *GPR) residual(x, y *graph.Node) *graph.Node {
	if m.Mean == nil {
		return y
	}
	return x.Graph().Sub(y, m.Mean.Mean(x))
}

// factor returns L = chol(K(x,x) + σ²I) and the whitened residual v = L⁻¹(y − m(x)).
func (m *GPR) factor(x, y *graph.Node) (l, v *graph.Node) {
	g := x.Graph()
	if s := x.Shape(); len(s) != 2 || s[1] != m.Kernel.InputDim() {
		g.Fail(&ops.ShapeError{Op: "GPR", Want: fmt.Sprintf("x [N,%d]", m.Kernel.InputDim()), Got: fmt.Sprint(s)})
	}
	l = g.Cholesky(g.AddDiag(m.Kernel.K(x, x), g.Param(m.Noise)))
	v = g.TriSolve(l, m.residual(x, y), false, false)
	return l, v
}

// LogMarginalLikelihood returns log p(y | X) for x [N,D], y [N,P]:
// −½‖L⁻¹(y−m)‖²_F − (P/2) log|K+σ²I| − (NP/2) log 2π.
func (m *GPR) LogMarginalLikelihood(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	l, v := m.factor(x, y)
	s := y.Shape()
	if len(s) != 2 {
		return g.Fail(&ops.ShapeError{Op: "GPR", Want: "y [N,P]", Got: fmt.Sprint(s)})
	}
	n, p := float64(s[0]), float64(s[1])
	quad := g.Dot(v, v)
	lml := g.Add(g.Scale(quad, -0.5), g.Scale(g.LogDetChol(l), -0.5*p))
	return g.AddConst(lml, -0.5*n*p*math.Log(2*math.Pi))
}

// Loss returns −log p(y | X) (the whole data set: train with full batches).
func (m *GPR) Loss(x, y *graph.Node) *graph.Node {
	return x.Graph().Neg(m.LogMarginalLikelihood(x, y))
}

// Prediction holds predictive marginals at test inputs.
type Prediction struct {
	Mean *mat.Dense // [Ns,P] latent mean
	Var  []float64  // [Ns] latent variance of f (shared by the P outputs; add the noise variance for y)
}

// PredictOptions configures Predict. Zero values mean defaults.
type PredictOptions struct {
	// Chunk is the number of test rows per graph run (default DefaultPredictChunk): memory is O(N·Chunk).
	Chunk int
	// Graph configures the prediction graph (Cholesky jitter).
	Graph graph.Options
}

// Predict returns the latent predictive mean and variance at xs [Ns,D] given training data (x [N,D], y [N,P]):
// μ* = m(x*) + K*ₓ(K+σ²I)⁻¹(y−m), σ²* = k** − ‖L⁻¹Kₓ*‖² (MATH.md §1). Test rows are processed in chunks.
func (m *GPR) Predict(x, y, xs *mat.Dense, o PredictOptions) (*Prediction, error) {
	n, d, p, err := m.checkData(x, y)
	if err != nil {
		return nil, err
	}
	ns, ds := xs.Dims()
	if ds != d {
		return nil, &ops.ShapeError{Op: "GPR.Predict", Want: fmt.Sprintf("test inputs with %d columns", d), Got: fmt.Sprint(ds)}
	}
	if err := ops.CheckFinite("GPR.Predict test inputs", xs.RawMatrix().Data, ds); err != nil {
		return nil, err
	}
	chunk := o.Chunk
	if chunk <= 0 {
		chunk = DefaultPredictChunk
	}
	chunk = min(chunk, ns)
	g := graph.New(o.Graph)
	xn, yn, xsn := g.Input("x", n, d), g.Input("y", n, p), g.Input("xs", chunk, d)
	l, v := m.factor(xn, yn)
	kxs := m.Kernel.K(xn, xsn)            // [N,C]
	a := g.TriSolve(l, kxs, false, false) // L⁻¹Kₓ* [N,C]
	mean := g.MatMul(a, v, true, false)   // [C,P]
	if m.Mean != nil {
		mean = g.Add(mean, m.Mean.Mean(xsn))
	}
	variance := g.Sub(m.Kernel.KDiag(xsn), g.SumRows(g.Square(a)))
	prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "var": variance})
	if err != nil {
		return nil, fmt.Errorf("gp: GPR.Predict: %w", err)
	}
	defer prog.Close()
	copyInto(prog.InputData("x"), x)
	copyInto(prog.InputData("y"), y)
	out := &Prediction{Mean: mat.NewDense(ns, p, nil), Var: make([]float64, ns)}
	buf := prog.InputData("xs")
	for lo := 0; lo < ns; lo += chunk {
		hi := min(lo+chunk, ns)
		for i := range buf {
			buf[i] = 0 // padding rows of the last chunk
		}
		for i := lo; i < hi; i++ {
			copy(buf[(i-lo)*d:], xs.RawRowView(i))
		}
		if err := prog.Run(); err != nil {
			return nil, fmt.Errorf("gp: GPR.Predict rows %d..%d: %w", lo, hi, err)
		}
		mv, vv := prog.Output("mean"), prog.Output("var")
		for i := lo; i < hi; i++ {
			copy(out.Mean.RawRowView(i), mv[(i-lo)*p:(i-lo+1)*p])
			out.Var[i] = math.Max(vv[i-lo], 0)
		}
	}
	return out, nil
}

// PredictCov returns the latent predictive mean [Ns,P] and the full predictive covariance [Ns,Ns] of f at xs:
// Σ* = K** − (L⁻¹Kₓ*)ᵀ(L⁻¹Kₓ*) (MATH.md §1). Memory is O(N·Ns + Ns²): use Predict for marginals of large sets.
func (m *GPR) PredictCov(x, y, xs *mat.Dense, o graph.Options) (*mat.Dense, *mat.SymDense, error) {
	n, d, p, err := m.checkData(x, y)
	if err != nil {
		return nil, nil, err
	}
	ns, ds := xs.Dims()
	if ds != d {
		return nil, nil, &ops.ShapeError{Op: "GPR.PredictCov", Want: fmt.Sprintf("test inputs with %d columns", d), Got: fmt.Sprint(ds)}
	}
	if err := ops.CheckFinite("GPR.PredictCov test inputs", xs.RawMatrix().Data, ds); err != nil {
		return nil, nil, err
	}
	g := graph.New(o)
	xn, yn, xsn := g.Input("x", n, d), g.Input("y", n, p), g.Input("xs", ns, d)
	l, v := m.factor(xn, yn)
	a := g.TriSolve(l, m.Kernel.K(xn, xsn), false, false) // [N,Ns]
	mean := g.MatMul(a, v, true, false)
	if m.Mean != nil {
		mean = g.Add(mean, m.Mean.Mean(xsn))
	}
	cov := g.Sub(m.Kernel.K(xsn, xsn), g.MatMul(a, a, true, false))
	prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "cov": cov})
	if err != nil {
		return nil, nil, fmt.Errorf("gp: GPR.PredictCov: %w", err)
	}
	defer prog.Close()
	copyInto(prog.InputData("x"), x)
	copyInto(prog.InputData("y"), y)
	copyInto(prog.InputData("xs"), xs)
	if err := prog.Run(); err != nil {
		return nil, nil, fmt.Errorf("gp: GPR.PredictCov: %w", err)
	}
	c := prog.Output("cov")
	sym := mat.NewSymDense(ns, nil)
	for i := 0; i < ns; i++ {
		for j := i; j < ns; j++ {
			sym.SetSym(i, j, 0.5*(c[i*ns+j]+c[j*ns+i]))
		}
	}
	return mat.NewDense(ns, p, append([]float64(nil), prog.Output("mean")...)), sym, nil
}

// LogMarginalLikelihoodValue evaluates log p(y | X) for data matrices (a convenience over a forward graph).
func (m *GPR) LogMarginalLikelihoodValue(x, y *mat.Dense, o graph.Options) (float64, error) {
	n, d, p, err := m.checkData(x, y)
	if err != nil {
		return 0, err
	}
	g := graph.New(o)
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	prog, err := g.CompileForward(map[string]*graph.Node{"lml": m.LogMarginalLikelihood(xn, yn)})
	if err != nil {
		return 0, err
	}
	defer prog.Close()
	copyInto(prog.InputData("x"), x)
	copyInto(prog.InputData("y"), y)
	if err := prog.Run(); err != nil {
		return 0, err
	}
	return prog.Output("lml")[0], nil
}

// NoiseVariance returns the current σ².
func (m *GPR) NoiseVariance() float64 { return m.Noise.Value()[0] }

func (m *GPR) checkData(x, y *mat.Dense) (n, d, p int, err error) {
	if x == nil || y == nil {
		return 0, 0, 0, configErr("GPR: nil data")
	}
	n, d = x.Dims()
	ny, p := y.Dims()
	if ny != n {
		return 0, 0, 0, &ops.ShapeError{Op: "GPR", Want: "x and y with the same number of rows", Got: fmt.Sprintf("%d and %d", n, ny)}
	}
	if d != m.Kernel.InputDim() {
		return 0, 0, 0, &ops.ShapeError{Op: "GPR", Want: fmt.Sprintf("x with %d columns", m.Kernel.InputDim()), Got: fmt.Sprint(d)}
	}
	if err := ops.CheckFinite("GPR inputs", x.RawMatrix().Data, d); err != nil {
		return 0, 0, 0, err
	}
	if err := ops.CheckFinite("GPR targets", y.RawMatrix().Data, p); err != nil {
		return 0, 0, 0, err
	}
	return n, d, p, nil
}

// copyInto copies the rows of a into the row-major buffer dst.
func copyInto(dst []float64, a *mat.Dense) {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		copy(dst[i*c:(i+1)*c], a.RawRowView(i))
	}
}
