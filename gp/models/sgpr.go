package models

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// DefaultSGPRJitter is the fixed jitter SGPR added to Kuu's diagonal by default before issue 31 (gp.JitterFixed),
// which model files written then store; SGPRConfig.Jitter = DefaultSGPRJitter asks for it. The default is now no
// fixed jitter (gp.JitterOnFailure).
const DefaultSGPRJitter = 1e-6

// DefaultNoiseVariance is the initial Gaussian noise variance when a config leaves it zero (standardised targets).
const DefaultNoiseVariance = 0.1

// SGPRConfig configures SGPR. Zero values mean defaults.
type SGPRConfig struct {
	Kernel        gp.Kernel       // required
	Z             *mat.Dense      // initial inducing inputs [M,D] (required)
	Mean          gp.MeanFunction // nil: zero
	NoiseVariance float64         // initial σ² (default DefaultNoiseVariance)
	// Jitter > 0 is a fixed jitter added to Kuu's diagonal before every factorisation (gp.JitterFixed; models
	// built before issue 31 used DefaultSGPRJitter). 0, the default, adds none (gp.JitterOnFailure): Kuu is
	// factorised as is and the graph's Cholesky adds jitter only if that fails, counted in its CholeskyStats.
	Jitter float64
	FixZ   bool // freeze the inducing inputs
	// X [N,D] and Y [N,P] are the training data Predict conditions on (optional here: SetTrainingData sets them
	// later, after fitting for example; both or neither).
	X, Y *mat.Dense
}

// SGPR is sparse GP regression with Titsias' (2009) collapsed variational bound (MATH.md §2):
// log N(y | 0, Q + σ²I) − tr(K_ff − Q)/(2σ²), Q = K_fu K_uu⁻¹ K_uf, always ≤ log p(y), equal when Z = X.
// It is trained full-batch (its Loss needs the whole data set). With the default jitter policy
// (gp.JitterOnFailure) and a Kuu that factorises, the objective is this bound exactly, with no jitter in Kuu;
// a fixed jitter j (gp.JitterFixed, SGPRConfig.Jitter) replaces Kuu by Kuu + jI throughout (bound and predictions).
type SGPR struct {
	Kernel gp.Kernel
	Z      *graph.Param
	Mean   gp.MeanFunction
	Noise  *graph.Param
	jitter float64

	data gp.TrainingSet // training data for Predict
}

var (
	_ gp.Predictor  = (*SGPR)(nil)
	_ gp.DataHolder = (*SGPR)(nil)
)

// NewSGPR returns an SGPR model.
func NewSGPR(c SGPRConfig) (*SGPR, error) {
	if c.Kernel == nil || c.Z == nil {
		return nil, fmt.Errorf("models: SGPR needs a Kernel and inducing inputs Z")
	}
	m, d := c.Z.Dims()
	if d != c.Kernel.InputDim() {
		return nil, &ops.ShapeError{Op: "models.NewSGPR", Want: fmt.Sprintf("Z with %d columns", c.Kernel.InputDim()), Got: fmt.Sprint(d)}
	}
	if err := gp.CheckJitter("models: SGPR", c.Jitter); err != nil {
		return nil, err
	}
	s := &SGPR{Kernel: c.Kernel, Mean: c.Mean, jitter: c.Jitter}
	var err error
	if s.Z, err = graph.NewParam("sgpr.Z", mat.DenseCopyOf(c.Z).RawMatrix().Data, graph.Identity{}, m, d); err != nil {
		return nil, err
	}
	s.Z.SetTrainable(!c.FixZ)
	nv := c.NoiseVariance
	if nv == 0 {
		nv = DefaultNoiseVariance
	}
	if s.Noise, err = graph.NewParam("likelihood.variance", []float64{nv}, graph.Positive{}); err != nil {
		return nil, err
	}
	if err := s.SetTrainingData(c.X, c.Y); err != nil {
		return nil, err
	}
	return s, nil
}

// NewSGPRShared returns an SGPR over existing Params instead of new ones: the inducing inputs z [M,D] and the
// scalar noise variance noise, for example an SVGP layer's Z and its Gaussian likelihood's variance. Training it
// trains them (and the kernel's), so the collapsed bound can polish a model whose q(u) is kept elsewhere: at
// the optimal q(u) the SVGP ELBO equals this bound (Titsias 2009; MATH.md §2–3) when jitter is the layer's
// (layers.SVGP.Jitter). jitter > 0 is a fixed jitter (gp.JitterFixed); 0 adds none (gp.JitterOnFailure).
func NewSGPRShared(kernel gp.Kernel, z, noise *graph.Param, mean gp.MeanFunction, jitter float64) (*SGPR, error) {
	if kernel == nil || z == nil || noise == nil {
		return nil, fmt.Errorf("models: SGPR needs a Kernel, inducing inputs and a noise variance")
	}
	if sh := z.Shape(); len(sh) != 2 || sh[1] != kernel.InputDim() {
		return nil, &ops.ShapeError{Op: "models.NewSGPRShared", Want: fmt.Sprintf("Z [M,%d]", kernel.InputDim()), Got: fmt.Sprint(sh)}
	}
	if noise.Size() != 1 {
		return nil, &ops.ShapeError{Op: "models.NewSGPRShared", Want: "a scalar noise variance", Got: fmt.Sprint(noise.Shape())}
	}
	if err := gp.CheckJitter("models: SGPR", jitter); err != nil {
		return nil, err
	}
	return &SGPR{Kernel: kernel, Z: z, Mean: mean, Noise: noise, jitter: jitter}, nil
}

// Params returns the kernel's, Z, the mean function's and the noise parameters.
func (s *SGPR) Params() []*graph.Param {
	var mp []*graph.Param
	if s.Mean != nil {
		mp = s.Mean.Params()
	}
	return gp.UniqueParams(s.Kernel.Params(), []*graph.Param{s.Z}, mp, []*graph.Param{s.Noise})
}

// Jitter returns the fixed jitter added to Kuu's diagonal: > 0 under gp.JitterFixed, 0 under gp.JitterOnFailure
// (Kuu factorised as is; jitter only if that fails).
func (s *SGPR) Jitter() float64 { return s.jitter }

// NoiseVariance returns the current σ².
func (s *SGPR) NoiseVariance() float64 { return s.Noise.Value()[0] }

// sgprParts are the shared pieces of the bound and the predictions: with A = L_u⁻¹K_uf/σ [M,N], L_B = chol(I +
// AAᵀ), c = L_B⁻¹A r/σ [M,P] and trAAt = tr(AAᵀ).
type sgprParts struct {
	lu, lb, c, r, trAAt *graph.Node
}

// parts builds them with σ applied to the M×M and M×P products, never to an M×N matrix: B = L_u⁻¹K_uf, AAᵀ =
// BBᵀ/σ², c = L_B⁻¹B r/σ² (an elementwise pass over B and its gradient would cost as much as the kernel).
func (s *SGPR) parts(x, y *graph.Node) sgprParts {
	g := x.Graph()
	z := g.Param(s.Z)
	var p sgprParts
	p.r = y
	if s.Mean != nil {
		p.r = g.Sub(y, s.Mean.Mean(x))
	}
	noise := g.Param(s.Noise)
	p.lu = gp.CholKuu(g, s.Kernel.K(z, z), s.jitter, "sgpr.jitter")
	b := g.TriSolve(p.lu, s.Kernel.K(z, x), false, false)                              // B = L_u⁻¹K_uf [M,N]
	aat := g.Div(g.MatMul(b, b, false, true), noise)                                   // AAᵀ = BBᵀ/σ² [M,M]
	p.lb = g.Cholesky(g.AddDiag(aat, g.Scalar("sgpr.one", 1)))                         // chol(I + AAᵀ)
	p.c = g.Div(g.TriSolve(p.lb, g.MatMul(b, p.r, false, false), false, false), noise) // L_B⁻¹B r/σ² [M,P]
	p.trAAt = g.Sum(g.DiagPart(aat))
	return p
}

// ELBO returns the collapsed bound for the full data set x [N,D], y [N,P] (P outputs share the kernel):
// −(NP/2)log 2πσ² − P Σ log diag L_B − ‖r‖²/(2σ²) + ‖c‖²/2 − P·tr K_ff/(2σ²) + P·tr(AAᵀ)/2.
func (s *SGPR) ELBO(x, y *graph.Node) *graph.Node {
	g := x.Graph()
	sh := y.Shape()
	if len(sh) != 2 {
		return g.Fail(&ops.ShapeError{Op: "models.SGPR", Want: "y [N,P]", Got: fmt.Sprint(sh)})
	}
	n, pp := float64(sh[0]), float64(sh[1])
	pt := s.parts(x, y)
	noise := g.Param(s.Noise)
	bound := g.Scale(g.Log(noise), -0.5*n*pp)
	bound = g.Sub(bound, g.Scale(g.LogDetChol(pt.lb), 0.5*pp))
	bound = g.Sub(bound, g.Div(g.Scale(g.Dot(pt.r, pt.r), 0.5), noise))
	bound = g.Add(bound, g.Scale(g.Dot(pt.c, pt.c), 0.5))
	bound = g.Sub(bound, g.Div(g.Scale(g.Sum(s.Kernel.KDiag(x)), 0.5*pp), noise))
	bound = g.Add(bound, g.Scale(pt.trAAt, 0.5*pp))
	return g.AddConst(bound, -0.5*n*pp*math.Log(2*math.Pi))
}

// Loss returns −ELBO (full batch).
func (s *SGPR) Loss(x, y *graph.Node) *graph.Node { return x.Graph().Neg(s.ELBO(x, y)) }

// Predict returns the predictive distribution at xs [Ns,D] given the model's training data (ErrNoTrainingData
// without; gp.Predictor): the latent mean μ* = K*ᵤL_u⁻ᵀL_B⁻ᵀc and variance σ²* = k** − ‖L_u⁻¹Kᵤ*‖² +
// ‖L_B⁻¹L_u⁻¹Kᵤ*‖² (Titsias 2009; shared by the P outputs), and y's, the same mean with variance σ²* + σ². Test
// rows run in chunks of o.ChunkRows (default DefaultChunk). o.Full adds the full covariance of f,
// K** − (L_u⁻¹Kᵤ*)ᵀ(L_u⁻¹Kᵤ*) + (L_B⁻¹L_u⁻¹Kᵤ*)ᵀ(L_B⁻¹L_u⁻¹Kᵤ*) (one matrix shared by the outputs), and o.Draws joint
// samples of f from it.
func (s *SGPR) Predict(xs *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if s == nil || s.Kernel == nil || s.Z == nil || s.Noise == nil {
		return nil, fmt.Errorf("models: SGPR.Predict: incomplete model (nil kernel, Z or noise)")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs("models.SGPR.Predict", xs, s.Kernel.InputDim()); err != nil {
		return nil, err
	}
	x, y := s.data.Data()
	if x == nil {
		return nil, gp.ErrNoTrainingData
	}
	n, d := x.Dims()
	_, p := y.Dims()
	res, _, err := chunked("SGPR", xs, o, map[string]*mat.Dense{"x": x, "y": y}, func(g *graph.Graph, xsn *graph.Node) map[string]*graph.Node {
		mean, v, _ := s.predictNodes(g, xsn, n, d, p, false)
		return map[string]*graph.Node{"mean": mean, "var": v}
	})
	if err != nil {
		return nil, err
	}
	ns, _ := xs.Dims()
	latent := res["var"]
	for i, v := range latent {
		latent[i] = math.Max(v, 0)
	}
	return gp.GaussianPrediction("models: SGPR.Predict", mat.NewDense(ns, p, res["mean"]), latent, s.NoiseVariance(), o,
		func() (*mat.SymDense, error) { return s.predictCov(xs, o.Graph) })
}

// predictNodes adds the predictive mean [C,P] and the marginal variances [C] (or, full, the covariance [C,C]) of f
// at xsn [C,D] to g, reading the training data from g's inputs "x" [n,d] and "y" [n,p].
func (s *SGPR) predictNodes(g *graph.Graph, xsn *graph.Node, n, d, p int, full bool) (mean, variance, cov *graph.Node) {
	xn, yn := g.Input("x", n, d), g.Input("y", n, p)
	pt := s.parts(xn, yn)
	t1 := g.TriSolve(pt.lu, s.Kernel.K(g.Param(s.Z), xsn), false, false) // [M,C]
	t2 := g.TriSolve(pt.lb, t1, false, false)
	mean = g.MatMul(t2, pt.c, true, false)
	if s.Mean != nil {
		mean = g.Add(mean, s.Mean.Mean(xsn))
	}
	if full {
		cov = g.Add(g.Sub(s.Kernel.K(xsn, xsn), g.MatMul(t1, t1, true, false)), g.MatMul(t2, t2, true, false))
		return mean, nil, cov
	}
	variance = g.Add(g.Sub(s.Kernel.KDiag(xsn), g.SumRowsSq(t1)), g.SumRowsSq(t2))
	return mean, variance, nil
}

// predictCov returns the full predictive covariance [Ns,Ns] of f at xs, in one run.
func (s *SGPR) predictCov(xs *mat.Dense, o graph.Options) (*mat.SymDense, error) {
	x, y := s.data.Data()
	n, d := x.Dims()
	_, p := y.Dims()
	ns, _ := xs.Dims()
	g := graph.New(o)
	_, _, cov := s.predictNodes(g, g.Input("xs", ns, d), n, d, p, true)
	prog, err := g.CompileForward(map[string]*graph.Node{"cov": cov})
	if err != nil {
		return nil, fmt.Errorf("models: SGPR.Predict (full covariance): %w", err)
	}
	defer prog.Close()
	for name, v := range map[string]*mat.Dense{"x": x, "y": y, "xs": xs} {
		if err := prog.Set(name, mat.DenseCopyOf(v).RawMatrix().Data); err != nil {
			return nil, err
		}
	}
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("models: SGPR.Predict (full covariance): %w", err)
	}
	return gp.SymFromRowMajor(prog.Output("cov"), ns), nil
}

// TrainingData returns the training data the model predicts from (gp.DataHolder; nil, nil when unset).
func (s *SGPR) TrainingData() (x, y *mat.Dense) { return s.data.Data() }

// SetTrainingData copies the training data x [N,D] and y [N,P] into the model, for Predict (gp.DataHolder):
// after fitting, or when a model file is loaded. Both nil unset them.
func (s *SGPR) SetTrainingData(x, y *mat.Dense) error {
	return s.data.Set("SGPR training", x, y, s.Kernel.InputDim())
}

// InputDim returns the kernel's input dimension D (0 without a kernel).
func (s *SGPR) InputDim() int {
	if s == nil || s.Kernel == nil {
		return 0
	}
	return s.Kernel.InputDim()
}

// PredictiveDim returns P, OutputDim's (gp.Predictor: a Gaussian likelihood, one column of y per latent function).
func (s *SGPR) PredictiveDim() int { return s.OutputDim() }

// OutputDim returns P, the width of the training targets (the mean function's width without training data; 0
// without either).
func (s *SGPR) OutputDim() int {
	if s == nil {
		return 0
	}
	return s.data.OutputDim(s.Mean)
}
