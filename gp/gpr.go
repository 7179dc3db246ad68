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
	// X [N,D] and Y [N,P] are the training data Predict conditions on (optional here: SetTrainingData sets
	// them later, after fitting for example; both or neither).
	X, Y *mat.Dense
	// Replicates, when set, says the training data are collapsed repeated inputs (Collapse): row j is the mean of
	// Counts[j] targets, with noise σ²/n_j. Every x the model is given (Loss, SetTrainingData) must have its rows.
	Replicates *Replicates
}

// GPR is exact Gaussian-process regression with Gaussian noise and P independent outputs sharing one kernel:
// y_p ~ N(m_p(X), K + σ²I) (Rasmussen & Williams 2006, Algorithm 2.1; MATH.md §1). It is a Predictor: it holds
// the training data its predictions condition on (DataHolder).
type GPR struct {
	Kernel Kernel
	Mean   MeanFunction // nil: zero
	Noise  *graph.Param // σ², scalar

	reps *Replicates // nil: every row one observation
	data TrainingSet // training data for Predict
}

var (
	_ Predictor  = (*GPR)(nil)
	_ DataHolder = (*GPR)(nil)
)

// NewGPR returns an exact GP regression model.
func NewGPR(c GPRConfig) (*GPR, error) {
	if c.Kernel == nil {
		return nil, configErr("GPR: nil Kernel")
	}
	noise, err := graph.NewParam(gprNoiseName, []float64{orDefault(c.NoiseVariance, DefaultNoiseVariance)}, graph.Positive{Floor: c.NoiseFloor})
	if err != nil {
		return nil, fmt.Errorf("gp: GPR: %w", err)
	}
	if r := c.Replicates; r != nil {
		if err := r.Check("GPR", len(r.Counts), len(r.Scatter)); err != nil {
			return nil, err
		}
	}
	m := &GPR{Kernel: c.Kernel, Mean: c.Mean, Noise: noise, reps: c.Replicates}
	if (c.X == nil) != (c.Y == nil) {
		return nil, configErr("GPR: X and Y must be both set or both nil")
	}
	if err := m.SetTrainingData(c.X, c.Y); err != nil {
		return nil, fmt.Errorf("gp: GPR: %w", err)
	}
	return m, nil
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

// factor returns L = chol(K(x,x) + σ²I) and the whitened residual v = L⁻¹(y − m(x)); with Replicates, those of
// the scaled system SKS + σ²I and S(y − m(x)) (Replicates).
func (m *GPR) factor(x, y *graph.Node) (l, v *graph.Node) {
	g := x.Graph()
	s := x.Shape()
	if len(s) != 2 || s[1] != m.Kernel.InputDim() {
		g.Fail(&ops.ShapeError{Op: "GPR", Want: fmt.Sprintf("x [N,%d]", m.Kernel.InputDim()), Got: fmt.Sprint(s)})
	}
	k, r := m.Kernel.K(x, x), m.residual(x, y)
	if m.reps != nil {
		if len(m.reps.Counts) != s[0] {
			g.Fail(&ops.ShapeError{Op: "GPR", Want: fmt.Sprintf("x of the replicates' %d rows", len(m.reps.Counts)), Got: fmt.Sprint(s)})
		}
		sc := m.scale(g)
		k, r = g.MulCol(g.MulRow(k, sc), sc), g.MulCol(r, sc)
	}
	l = g.Cholesky(g.AddDiag(k, g.Param(m.Noise)))
	v = g.TriSolve(l, r, false, false)
	return l, v
}

// scaleKey memoises the replicates' scale S in a graph.
type scaleKey struct{ m *GPR }

// scale returns the constant diag(S) = √n of the replicates.
func (m *GPR) scale(g *graph.Graph) *graph.Node {
	return g.Memo(scaleKey{m}, func() *graph.Node { return g.Const("gpr.replicates", m.reps.Scales(), len(m.reps.Counts)) })
}

// crossCov returns K(x, xs) [N,C], scaled by S with Replicates (the scaled system's cross-covariance).
func (m *GPR) crossCov(x, xs *graph.Node) *graph.Node {
	k := m.Kernel.K(x, xs)
	if m.reps != nil {
		k = x.Graph().MulCol(k, m.scale(x.Graph()))
	}
	return k
}

// Replicates returns the model's Replicates (nil: every row one observation).
func (m *GPR) Replicates() *Replicates { return m.reps }

// Observations returns the number of observations the training rows stand for with Replicates (the sum of the
// counts; 0 without: one per row), for per-observation objectives (train.Observations).
func (m *GPR) Observations() int { return m.reps.Observations() }

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
	lml = g.AddConst(lml, -0.5*n*p*math.Log(2*math.Pi))
	if m.reps != nil {
		lml = g.Add(lml, ReplicatesTerm(g, m.reps, g.Param(m.Noise), s[1]))
	}
	return lml
}

// ReplicatesTerm returns the f-free part of the log likelihood of collapsed replicates (Replicates) for the noise
// variance node σ² and p outputs: −(p/2)·Σ_j(n_j − 1)·log(2πσ²) − Σ Scatter/(2σ²).
func ReplicatesTerm(g *graph.Graph, r *Replicates, noise *graph.Node, p int) *graph.Node {
	a := 0.5 * float64(p) * r.Extra()
	t := g.Add(g.Scale(g.Log(noise), -a), g.Scale(g.Recip(noise), -0.5*r.ScatterSum()))
	return g.AddConst(t, -a*math.Log(2*math.Pi))
}

// Loss returns −log p(y | X) (the whole data set: train with full batches).
func (m *GPR) Loss(x, y *graph.Node) *graph.Node {
	return x.Graph().Neg(m.LogMarginalLikelihood(x, y))
}

// Predict returns the predictive distribution at xs [Ns,D] given the model's training data (x [N,D], y [N,P];
// ErrNoTrainingData without): the latent mean μ* = m(x*) + K*ₓ(K+σ²I)⁻¹(y−m) and variance σ²* = k** − ‖L⁻¹Kₓ*‖²
// (MATH.md §1; shared by the P outputs), and y's, the same mean with variance σ²* + σ². Test rows are processed in
// chunks of o.ChunkRows (default DefaultPredictChunk). o.Full adds the full covariance of f,
// Σ* = K** − (L⁻¹Kₓ*)ᵀ(L⁻¹Kₓ*) (one matrix shared by the outputs; memory O(N·Ns + Ns²)), and o.Draws joint
// samples of f from it.
func (m *GPR) Predict(xs *mat.Dense, o PredictOptions) (*Prediction, error) {
	if m == nil || m.Kernel == nil || m.Noise == nil {
		return nil, configErr("GPR.Predict: incomplete model (nil kernel or noise)")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := CheckInputs("GPR.Predict", xs, m.Kernel.InputDim()); err != nil {
		return nil, err
	}
	if x, _ := m.data.Data(); x == nil {
		return nil, ErrNoTrainingData
	}
	mean, latent, err := m.predictMarginals(xs, o)
	if err != nil {
		return nil, err
	}
	return GaussianPrediction("gp: GPR.Predict", mean, latent, m.NoiseVariance(), o, func() (*mat.SymDense, error) {
		return m.predictCov(xs, o.Graph)
	})
}

// predictMarginals returns the latent predictive mean [Ns,P] and variance [Ns] at xs, in chunks.
func (m *GPR) predictMarginals(xs *mat.Dense, o PredictOptions) (*mat.Dense, []float64, error) {
	x, y := m.data.Data()
	n, d := x.Dims()
	_, p := y.Dims()
	ns, _ := xs.Dims()
	chunk := o.ChunkRows
	if chunk <= 0 {
		chunk = DefaultPredictChunk
	}
	chunk = min(chunk, ns)
	build := func() (*graph.Program, any, error) {
		g := graph.New(o.Graph)
		xn, yn, xsn := g.Input("x", n, d), g.Input("y", n, p), g.Input("xs", chunk, d)
		l, v := m.factor(xn, yn)
		kxs := m.crossCov(xn, xsn)            // [N,C]
		a := g.TriSolve(l, kxs, false, false) // L⁻¹Kₓ* [N,C]
		mean := g.MatMul(a, v, true, false)   // [C,P]
		if m.Mean != nil {
			mean = g.Add(mean, m.Mean.Mean(xsn))
		}
		variance := g.Sub(m.Kernel.KDiag(xsn), g.SumRowsSq(a))
		prog, err := g.CompileForward(map[string]*graph.Node{"mean": mean, "var": variance})
		if err != nil {
			return nil, nil, fmt.Errorf("gp: GPR.Predict: %w", err)
		}
		copyInto(prog.InputData("x"), x)
		copyInto(prog.InputData("y"), y)
		return prog, nil, nil
	}
	outMean, outVar := mat.NewDense(ns, p, nil), make([]float64, ns)
	err := o.Programs.Use(fmt.Sprintf("gp.GPR.marginals/%d,%d,%d/%d", n, d, p, chunk), build, func(prog *graph.Program, _ any) error {
		buf := prog.InputData("xs")
		for lo := 0; lo < ns; lo += chunk {
			hi := min(lo+chunk, ns)
			clear(buf) // padding rows of the last chunk
			for i := lo; i < hi; i++ {
				copy(buf[(i-lo)*d:], xs.RawRowView(i))
			}
			if err := prog.Run(); err != nil {
				return fmt.Errorf("gp: GPR.Predict rows %d..%d: %w", lo, hi, err)
			}
			mv, vv := prog.Output("mean"), prog.Output("var")
			for i := lo; i < hi; i++ {
				copy(outMean.RawRowView(i), mv[(i-lo)*p:(i-lo+1)*p])
				outVar[i] = math.Max(vv[i-lo], 0)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return outMean, outVar, nil
}

// predictCov returns the full predictive covariance [Ns,Ns] of f at xs (MATH.md §1), in one run.
func (m *GPR) predictCov(xs *mat.Dense, o graph.Options) (*mat.SymDense, error) {
	x, y := m.data.Data()
	n, d := x.Dims()
	_, p := y.Dims()
	ns, _ := xs.Dims()
	g := graph.New(o)
	xn, yn, xsn := g.Input("x", n, d), g.Input("y", n, p), g.Input("xs", ns, d)
	l, _ := m.factor(xn, yn)
	a := g.TriSolve(l, m.crossCov(xn, xsn), false, false) // [N,Ns]
	cov := g.Sub(m.Kernel.K(xsn, xsn), g.MatMul(a, a, true, false))
	prog, err := g.CompileForward(map[string]*graph.Node{"cov": cov})
	if err != nil {
		return nil, fmt.Errorf("gp: GPR.Predict (full covariance): %w", err)
	}
	defer prog.Close()
	copyInto(prog.InputData("x"), x)
	copyInto(prog.InputData("y"), y)
	copyInto(prog.InputData("xs"), xs)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("gp: GPR.Predict (full covariance): %w", err)
	}
	return SymFromRowMajor(prog.Output("cov"), ns), nil
}

// TrainingData returns the training data the model predicts from (DataHolder; nil, nil when unset).
func (m *GPR) TrainingData() (x, y *mat.Dense) { return m.data.Data() }

// SetTrainingData copies the training data x [N,D] and y [N,P] into the model, for Predict (DataHolder): after
// fitting, or when a model file is loaded. Both nil unset them.
func (m *GPR) SetTrainingData(x, y *mat.Dense) error {
	if err := m.data.Set("GPR", x, y, m.Kernel.InputDim()); err != nil {
		return err
	}
	if x != nil && m.reps != nil {
		n, _ := x.Dims()
		_, p := y.Dims()
		if err := m.reps.Check("GPR", n, p); err != nil {
			m.data.Set("GPR", nil, nil, 0)
			return err
		}
	}
	return nil
}

// InputDim returns the kernel's input dimension D (0 without a kernel).
func (m *GPR) InputDim() int {
	if m == nil || m.Kernel == nil {
		return 0
	}
	return m.Kernel.InputDim()
}

// PredictiveDim returns P, OutputDim's (gp.Predictor: a Gaussian likelihood, one column of y per latent function).
func (m *GPR) PredictiveDim() int { return m.OutputDim() }

// OutputDim returns P, the width of the training targets (the mean function's width without training data; 0
// without either).
func (m *GPR) OutputDim() int {
	if m == nil {
		return 0
	}
	return m.data.OutputDim(m.Mean)
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
	d = m.Kernel.InputDim()
	n, p, err = CheckTrainingData("GPR", x, y, d)
	return n, d, p, err
}

// copyInto copies the rows of a into the row-major buffer dst.
func copyInto(dst []float64, a *mat.Dense) {
	r, c := a.Dims()
	for i := 0; i < r; i++ {
		copy(dst[i*c:(i+1)*c], a.RawRowView(i))
	}
}
