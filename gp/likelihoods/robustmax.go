package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindRobustMax is the Spec kind of a robust-max likelihood (gp.Spec).
const KindRobustMax = "likelihood/robustmax"

func init() {
	gp.RegisterKind(KindRobustMax, buildRobustMax)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name:    "robustmax",
		Kind:    KindRobustMax,
		Doc:     "K ≥ 2 class labels, robust-max, label noise ε = 1e-3 (the default for 3 or more classes)",
		Classes: true,
		New: func(o gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewRobustMax(RobustMaxConfig{NumClasses: o.Classes}))
		},
	})
}

// DefaultRobustMaxEpsilon is the robust-max ε when RobustMaxConfig.Epsilon is zero: the probability mass spread
// over the K−1 classes that are not the argmax (the usual value; GPflow uses it too).
const DefaultRobustMaxEpsilon = 1e-3

// RobustMaxConfig configures a RobustMax likelihood. Zero values mean defaults, except NumClasses (required).
type RobustMaxConfig struct {
	// NumClasses is K ≥ 2, the number of classes and of latent functions (required).
	NumClasses int
	// Epsilon is ε ∈ (0, 1) (default DefaultRobustMaxEpsilon). It is a fixed constant: a trainable ε (GPflow's
	// sigmoid-constrained parameter with a Beta prior) is not supported, because the op takes ε as a constant.
	Epsilon float64
	// QuadPoints is the number of Gauss–Hermite nodes of the one-dimensional quadrature (default
	// ops.DefaultQuadPoints).
	QuadPoints int
}

// RobustMax is the multiclass robust-max likelihood (Hernández-Lobato, Hernández-Lobato & Dupont 2011; MATH.md
// §4): p(y = k | f) = 1 − ε if k = argmax f, else ε/(K−1), with K latent functions f and one label column y
// holding the class 0..K−1 (as float64). Its expectations, E_q[log p(y|f)] = P·log(1−ε) + (1−P)·log(ε/(K−1)) with
// P = P(argmax f = y), use a one-dimensional Gauss–Hermite quadrature (ops.RobustMaxVE); it has no parameters.
type RobustMax struct {
	k      int
	eps    float64
	points int
}

var (
	_ gp.Likelihood      = (*RobustMax)(nil)
	_ gp.ClassLikelihood = (*RobustMax)(nil)
)

// NewRobustMax returns a robust-max likelihood. It returns an error wrapping gp.ErrConfig if NumClasses < 2,
// Epsilon is not in (0, 1) or QuadPoints is negative.
func NewRobustMax(cfg RobustMaxConfig) (*RobustMax, error) {
	if cfg.NumClasses < 2 {
		return nil, likConfigErr("RobustMax: NumClasses %d must be ≥ 2", cfg.NumClasses)
	}
	eps := cfg.Epsilon
	if eps == 0 {
		eps = DefaultRobustMaxEpsilon
	}
	if !(eps > 0 && eps < 1) {
		return nil, likConfigErr("RobustMax: Epsilon %v must lie in (0, 1)", cfg.Epsilon)
	}
	p, err := quadPointsOrDefault("RobustMax", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	return &RobustMax{k: cfg.NumClasses, eps: eps, points: p}, nil
}

// NumClasses returns K.
func (r *RobustMax) NumClasses() int { return r.k }

// Epsilon returns ε.
func (r *RobustMax) Epsilon() float64 { return r.eps }

// LatentDim returns K for p = 1 label column (error otherwise).
func (r *RobustMax) LatentDim(p int) (int, error) {
	return classLatentDim("RobustMax", r.k, p)
}

// VariationalExpectations returns [N]: E_q[log p(y_n | f_n)] for fMean, fVar [N,K] and labels y [N,1] (classes
// 0..K−1 as float64), by ops.RobustMaxVE. Shape errors are recorded in the graph; a label outside 0..K−1 is an
// ops.ErrLabel error when the program runs.
func (r *RobustMax) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	g, ok := classOperands("RobustMax", r.k, fMean, fVar, y)
	if !ok {
		return invalidVE(g)
	}
	return g.RobustMaxVE(fMean, fVar, y, r.eps, r.points)
}

// PredictMeanVar returns the class probabilities p(y = k) = (1−ε)P_k + (ε/(K−1))(1−P_k) as the mean [n,K] and
// p(1 − p) as the variance [n,K] (of the class indicator), given fMean, fVar [n,K] (row-major). The P_k come from
// quadrature and are normalised to sum to 1 (ops.RobustMaxProbs), so each row of the mean sums to 1.
func (r *RobustMax) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	mean, err = r.probs("RobustMax.PredictMeanVar", fMean, fVar, n)
	if err != nil {
		return nil, nil, err
	}
	return mean, indicatorVariance(mean), nil
}

func (r *RobustMax) probs(op string, fMean, fVar []float64, n int) ([]float64, error) {
	if err := checkClassMarginals(op, r.k, fMean, fVar, n); err != nil {
		return nil, err
	}
	out := make([]float64, len(fMean))
	// Rows are independent and each costs K² Gauss–Hermite evaluations of log Φ: split them over the cores.
	err := ops.ForRows(n, 64, func(lo, hi int) error {
		v := make([]float64, r.k)
		for i := lo; i < hi; i++ {
			for j := range v {
				v[j] = math.Max(fVar[i*r.k+j], 0)
			}
			if err := ops.RobustMaxProbs(fMean[i*r.k:(i+1)*r.k], v, r.k, r.eps, r.points, out[i*r.k:(i+1)*r.k]); err != nil {
				return fmt.Errorf("likelihoods: %s: row %d: %w", op, i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClassProbs returns a copy of the class probabilities [N,K] (PredictMeanVar's mean; gp.ClassLikelihood).
func (*RobustMax) ClassProbs(mean *mat.Dense) *mat.Dense { return mat.DenseCopyOf(mean) }

// PredictLogDensity returns log p(y_n) [n], the log of the predictive probability (PredictMeanVar's mean) of each
// row's label y_n (y has n entries, classes 0..K−1). It returns an error for inconsistent sizes, non-finite values
// or a bad label.
func (r *RobustMax) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	const op = "RobustMax.PredictLogDensity"
	labels, err := checkLabels(op, r.k, y, n)
	if err != nil {
		return nil, err
	}
	p, err := r.probs(op, fMean, fVar, n)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i, c := range labels {
		out[i] = math.Log(p[i*r.k+c])
	}
	return out, nil
}

// Params returns nil: ε is a fixed constant.
func (*RobustMax) Params() []*graph.Param { return nil }

// String names the likelihood and its constants.
func (r *RobustMax) String() string {
	return fmt.Sprintf("RobustMax(K=%d, epsilon=%g, quadPoints=%d)", r.k, r.eps, r.points)
}

// Helpers shared by the multiclass likelihoods (RobustMax, Softmax).

// classLatentDim returns K for p = 1 label column.
func classLatentDim(lik string, k, p int) (int, error) {
	if p != 1 {
		return 0, &ops.ShapeError{Op: lik + ".LatentDim", Want: "P = 1 label column", Got: fmt.Sprint(p)}
	}
	return k, nil
}

// classOperands checks the operands of a multiclass VariationalExpectations: fMean and fVar [N,K], y [N,1]. It
// returns the graph and whether the operands are valid; on failure the error is recorded in the graph (if any).
func classOperands(lik string, k int, fMean, fVar, y *graph.Node) (*graph.Graph, bool) {
	g, op, ok := operandGraph(lik, fMean, fVar, y)
	if !ok {
		return g, false
	}
	s := fMean.Shape()
	if len(s) != 2 || s[1] != k {
		g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("fMean [N,%d]", k), Got: fmt.Sprint(s)})
		return g, false
	}
	if vs := fVar.Shape(); len(vs) != 2 || vs[0] != s[0] || vs[1] != k {
		g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("fVar [%d,%d]", s[0], k), Got: fmt.Sprint(vs)})
		return g, false
	}
	if ys := y.Shape(); len(ys) != 2 || ys[0] != s[0] || ys[1] != 1 {
		g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("labels y [%d,1]", s[0]), Got: fmt.Sprint(ys)})
		return g, false
	}
	return g, g.Err() == nil
}

// checkClassMarginals validates plain-Go marginals fMean, fVar [n,K].
func checkClassMarginals(op string, k int, fMean, fVar []float64, n int) error {
	l, err := checkMarginals(op, fMean, fVar, n)
	if err != nil {
		return err
	}
	if l != k {
		return &ops.ShapeError{Op: op, Want: fmt.Sprintf("fMean [%d,%d]", n, k), Got: fmt.Sprintf("%d values", len(fMean))}
	}
	return nil
}

// checkLabels validates n labels (classes 0..k−1 stored as float64) and returns them as ints.
func checkLabels(op string, k int, y []float64, n int) ([]int, error) {
	if len(y) != n {
		return nil, &ops.ShapeError{Op: op, Want: fmt.Sprintf("%d labels [n,1]", n), Got: fmt.Sprintf("%d values", len(y))}
	}
	out := make([]int, n)
	for i, v := range y {
		if !(v >= 0 && v < float64(k)) || v != math.Trunc(v) {
			return nil, fmt.Errorf("%w: likelihoods: %s: row %d: label %v is not a class 0..%d", ops.ErrLabel, op, i, v, k-1)
		}
		out[i] = int(v)
	}
	return out, nil
}

// robustMaxSpec is the Config of KindRobustMax.
type robustMaxSpec struct {
	NumClasses int     `json:"num_classes"`
	Epsilon    float64 `json:"epsilon"`
	QuadPoints int     `json:"quad_points"`
}

// Spec describes r: K, ε and its number of quadrature points.
func (r *RobustMax) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindRobustMax, robustMaxSpec{NumClasses: r.k, Epsilon: r.eps, QuadPoints: r.points})
}

func buildRobustMax(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c robustMaxSpec
	if err := decodeLeaf(KindRobustMax, raw, children, &c); err != nil {
		return nil, err
	}
	if c.Epsilon == 0 || c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: Epsilon %v and QuadPoints %d must be > 0", KindRobustMax, c.Epsilon, c.QuadPoints)
	}
	return NewRobustMax(RobustMaxConfig(c))
}

var _ gp.Describer = (*RobustMax)(nil)
