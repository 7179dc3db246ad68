package likelihoods

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindHeteroscedastic is the Spec kind of a heteroscedastic Gaussian likelihood (gp.Spec).
const KindHeteroscedastic = "likelihood/heteroscedastic"

func init() {
	gp.RegisterKind(KindHeteroscedastic, buildHeteroscedastic)
	gp.RegisterLikelihood(gp.LikelihoodFamily{
		Name: "heteroscedastic",
		Kind: KindHeteroscedastic,
		Doc:  "real targets with input-dependent Gaussian noise: 2 latents per target (mean, log variance)",
		New: func(gp.LikelihoodOptions) (gp.Likelihood, error) {
			return asLikelihood(NewHeteroscedastic(HeteroscedasticConfig{}))
		},
	})
}

// HeteroscedasticConfig configures a Heteroscedastic likelihood. Zero values mean defaults.
type HeteroscedasticConfig struct {
	// QuadPoints is the number of Gauss–Hermite nodes over the log noise g of the predictive log density
	// (default ops.DefaultQuadPoints).
	QuadPoints int
}

// Heteroscedastic is the Gaussian likelihood with input-dependent noise y = f + ε, ε ~ N(0, exp(g)), where f (the
// mean) and g (the log noise variance) are two latent functions per observed column (Lázaro-Gredilla & Titsias
// 2011, "Variational heteroscedastic Gaussian process regression"; Saul et al. 2016, "Chained Gaussian
// processes", §3 with the exp link on the variance; GPflow's HeteroskedasticTFPConditional). For P observed
// columns it takes L = 2P latent columns: columns 0 … P−1 are the means f_1 … f_P, columns P … 2P−1 the log
// noise variances g_1 … g_P. It has no parameters of its own: the noise is the latent g.
//
// Under independent q(f) = N(μf, vf) and q(g) = N(μg, vg) the expected log density is closed form (E[e^{−g}] =
// e^{−μg + vg/2}, Lázaro-Gredilla & Titsias 2011, eq. 6):
//
//	E_q[log N(y | f, e^g)] = −½ log 2π − ½ μg − ½ ((y − μf)² + vf) · exp(−μg + vg/2),
//
// built from graph ops. The predictive distribution of y has mean μf and variance vf + E[e^g] = vf +
// exp(μg + vg/2); its log density log ∫ N(y | μf, vf + e^g) N(g; μg, vg) dg is computed by Gauss–Hermite
// quadrature over g (exact in f). With vg = 0 and μg = log σ² it is the Gaussian likelihood with variance σ².
type Heteroscedastic struct {
	points int
}

var _ gp.Likelihood = (*Heteroscedastic)(nil)

// NewHeteroscedastic returns a heteroscedastic Gaussian likelihood. It returns an error wrapping gp.ErrConfig if
// QuadPoints is negative.
func NewHeteroscedastic(cfg HeteroscedasticConfig) (*Heteroscedastic, error) {
	pts, err := quadPointsOrDefault("Heteroscedastic", cfg.QuadPoints)
	if err != nil {
		return nil, err
	}
	return &Heteroscedastic{points: pts}, nil
}

// QuadPoints returns the number of Gauss–Hermite nodes of the predictive log density.
func (h *Heteroscedastic) QuadPoints() int { return h.points }

// LatentDim returns 2p: a mean and a log noise variance per observed column (error for p < 1).
func (*Heteroscedastic) LatentDim(p int) (int, error) {
	if p < 1 {
		return 0, &ops.ShapeError{Op: "Heteroscedastic.LatentDim", Want: "P ≥ 1", Got: fmt.Sprint(p)}
	}
	return 2 * p, nil
}

// PredictiveDim returns l/2, the P target columns of 2P latent columns (gp.PredictiveDimer: columns 0 … P−1,
// the means, are in the targets' units; P … 2P−1 are log noise variances). A *ops.ShapeError for an odd or
// non-positive l.
func (*Heteroscedastic) PredictiveDim(l int) (int, error) {
	if l < 2 || l%2 != 0 {
		return 0, &ops.ShapeError{Op: "Heteroscedastic.PredictiveDim", Want: "2P latent columns (a mean and a log noise variance per target), P ≥ 1", Got: fmt.Sprint(l)}
	}
	return l / 2, nil
}

var _ gp.PredictiveDimer = (*Heteroscedastic)(nil)

// VariationalExpectations returns [N]: Σ_j −½ log 2π − ½ μg_j − ½ ((y_j − μf_j)² + vf_j)·exp(−μg_j + vg_j/2), the
// exact E_q[log N(y | f, e^g)] for fMean, fVar [N,2P] (means then log noise variances) and y [N,P]. Shape errors
// are recorded in the graph.
func (h *Heteroscedastic) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	g, p, ok := heteroscedasticOperands(fMean, fVar, y)
	if !ok {
		return invalidVE(g)
	}
	var sum *graph.Node
	for j := 0; j < p; j++ {
		mf, vf, mg, vg := g.Col(fMean, j), g.Col(fVar, j), g.Col(fMean, p+j), g.Col(fVar, p+j)
		quad := g.Add(g.Square(g.Sub(g.Col(y, j), mf)), vf) // (y − μf)² + vf
		prec := g.Exp(g.Sub(g.Scale(vg, 0.5), mg))          // E[e^{−g}] = exp(−μg + vg/2)
		term := g.Scale(g.Add(mg, g.Mul(quad, prec)), -0.5) // −½ μg − ½ quad·E[e^{−g}]
		if sum == nil {
			sum = term
		} else {
			sum = g.Add(sum, term)
		}
	}
	return g.AddConst(sum, -0.5*float64(p)*log2Pi)
}

// heteroscedasticOperands checks fMean, fVar [N,2P] and y [N,P] and returns the graph and P; on failure the
// error is recorded in the graph (if there is one).
func heteroscedasticOperands(fMean, fVar, y *graph.Node) (*graph.Graph, int, bool) {
	g, op, ok := operandGraph("Heteroscedastic", fMean, fVar, y)
	if !ok {
		return g, 0, false
	}
	ys, s := y.Shape(), fMean.Shape()
	if len(ys) != 2 || ys[1] < 1 {
		g.Fail(&ops.ShapeError{Op: op, Want: "y [N,P]", Got: fmt.Sprint(ys)})
		return g, 0, false
	}
	if len(s) != 2 || s[0] != ys[0] || s[1] != 2*ys[1] {
		g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("fMean [%d,%d] (a mean and a log noise variance per column of y)", ys[0], 2*ys[1]), Got: fmt.Sprint(s)})
		return g, 0, false
	}
	if vs := fVar.Shape(); len(vs) != 2 || vs[0] != s[0] || vs[1] != s[1] {
		g.Fail(&ops.ShapeError{Op: op, Want: fmt.Sprintf("fVar of fMean's shape %v", s), Got: fmt.Sprint(vs)})
		return g, 0, false
	}
	return g, ys[1], g.Err() == nil
}

// heteroscedasticMarginals validates plain-Go marginals fMean, fVar [n,2P] and returns P.
func heteroscedasticMarginals(op string, fMean, fVar []float64, n int) (int, error) {
	l, err := checkMarginals(op, fMean, fVar, n)
	if err != nil {
		return 0, err
	}
	if l%2 != 0 {
		return 0, &ops.ShapeError{Op: op, Want: "fMean [n,2P]: a mean and a log noise variance per output", Got: fmt.Sprintf("%d latent columns", l)}
	}
	return l / 2, nil
}

// PredictMeanVar returns the predictive mean μf and variance vf + exp(μg + vg/2) of y [n,P] given fMean, fVar
// [n,2P] (row-major; negative variances are treated as 0). It returns an error for inconsistent sizes or
// non-finite values.
func (h *Heteroscedastic) PredictMeanVar(fMean, fVar []float64, n int) (mean, variance []float64, err error) {
	p, err := heteroscedasticMarginals("Heteroscedastic.PredictMeanVar", fMean, fVar, n)
	if err != nil {
		return nil, nil, err
	}
	mean, variance = make([]float64, n*p), make([]float64, n*p)
	for i := range n {
		row, vrow := fMean[2*p*i:2*p*(i+1)], fVar[2*p*i:2*p*(i+1)]
		for j := range p {
			mean[i*p+j] = row[j]
			variance[i*p+j] = math.Max(vrow[j], 0) + math.Exp(row[p+j]+0.5*math.Max(vrow[p+j], 0))
		}
	}
	return mean, variance, nil
}

// PredictLogDensity returns log p(y_n) = Σ_j log ∫ N(y_j | μf_j, vf_j + e^g) N(g; μg_j, vg_j) dg [n], by
// Gauss–Hermite quadrature over g with QuadPoints nodes (exact at vg = 0). It returns an error for inconsistent
// sizes or non-finite values.
func (h *Heteroscedastic) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	const op = "Heteroscedastic.PredictLogDensity"
	p, err := heteroscedasticMarginals(op, fMean, fVar, n)
	if err != nil {
		return nil, err
	}
	if len(y) != n*p {
		return nil, &ops.ShapeError{Op: op, Want: fmt.Sprintf("y [%d,%d]", n, p), Got: fmt.Sprintf("%d values", len(y))}
	}
	if err := ops.CheckFinite(op+" y", y, p); err != nil {
		return nil, err
	}
	x, w, err := ops.GaussHermite(h.points)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		row, vrow := fMean[2*p*i:2*p*(i+1)], fVar[2*p*i:2*p*(i+1)]
		for j := range p {
			r, vf := y[i*p+j]-row[j], math.Max(vrow[j], 0)
			out[i] += ops.GaussHermiteLogExpect(func(g float64) float64 {
				t := vf + math.Exp(g)
				return -0.5*(log2Pi+math.Log(t)) - 0.5*r*r/t
			}, row[p+j], math.Max(vrow[p+j], 0), x, w)
		}
	}
	return out, nil
}

// Params returns nil: the noise is the latent log variance g, not a parameter.
func (*Heteroscedastic) Params() []*graph.Param { return nil }

// String names the likelihood and its quadrature.
func (h *Heteroscedastic) String() string {
	return fmt.Sprintf("Heteroscedastic(log-noise latent, quadPoints=%d)", h.points)
}

// heteroscedasticSpec is the Config of KindHeteroscedastic.
type heteroscedasticSpec struct {
	QuadPoints int `json:"quad_points"`
}

// Spec describes h: its number of quadrature points.
func (h *Heteroscedastic) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindHeteroscedastic, heteroscedasticSpec{QuadPoints: h.points})
}

func buildHeteroscedastic(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c heteroscedasticSpec
	if err := decodeLeaf(KindHeteroscedastic, raw, children, &c); err != nil {
		return nil, err
	}
	if c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: QuadPoints %d must be > 0", KindHeteroscedastic, c.QuadPoints)
	}
	return NewHeteroscedastic(HeteroscedasticConfig(c))
}

var _ gp.Describer = (*Heteroscedastic)(nil)
