package likelihoods

import (
	"encoding/json"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// Kinds of the likelihoods' Specs (gp.Spec), registered with gp.RegisterKind.
const (
	KindGaussian  = "likelihood/gaussian"
	KindBernoulli = "likelihood/bernoulli"
	KindStudentT  = "likelihood/studentt"
	KindPoisson   = "likelihood/poisson"
	KindRobustMax = "likelihood/robustmax"
	KindSoftmax   = "likelihood/softmax"
)

func init() {
	gp.RegisterKind(KindGaussian, buildGaussian)
	gp.RegisterKind(KindBernoulli, buildBernoulli)
	gp.RegisterKind(KindStudentT, buildStudentT)
	gp.RegisterKind(KindPoisson, buildPoisson)
	gp.RegisterKind(KindRobustMax, buildRobustMax)
	gp.RegisterKind(KindSoftmax, buildSoftmax)
}

// The Config of each kind: structure only. Trained values (σ², the Student-t scale and degrees of freedom) are
// Params, which model files restore after gp.BuildSpec.

type gaussianSpec struct {
	VarianceFloor float64 `json:"variance_floor"`
}

type bernoulliSpec struct {
	QuadPoints int `json:"quad_points"`
}

type studentTSpec struct {
	ScaleFloor float64 `json:"scale_floor"`
	TrainDF    bool    `json:"train_df"`
	QuadPoints int     `json:"quad_points"`
}

type poissonSpec struct {
	BinSize    float64 `json:"bin_size"`
	QuadPoints int     `json:"quad_points"`
}

type robustMaxSpec struct {
	NumClasses int     `json:"num_classes"`
	Epsilon    float64 `json:"epsilon"`
	QuadPoints int     `json:"quad_points"`
}

type softmaxSpec struct {
	NumClasses     int `json:"num_classes"`
	NumSamples     int `json:"num_samples"`
	PredictSamples int `json:"predict_samples"`
}

// decodeLeaf decodes the Config of a likelihood (which has no children); a missing Config is an error.
func decodeLeaf(kind string, raw json.RawMessage, children []any, dst any) error {
	if len(children) != 0 {
		return likConfigErr("%s takes no children, got %d", kind, len(children))
	}
	if len(raw) == 0 {
		return likConfigErr("%s: missing config", kind)
	}
	return gp.DecodeConfig(kind, raw, dst)
}

// positiveFloor returns the Floor field of p's Positive transform (0 if p has another transform).
func positiveFloor(p *graph.Param) float64 {
	if t, ok := p.Transform().(graph.Positive); ok {
		return t.Floor
	}
	return 0
}

// placeholderAbove returns a value strictly above floor for a Param whose real value the model file restores.
func placeholderAbove(floor float64) float64 { return 2*floor + 1 }

// Spec describes g: its variance floor (σ² itself is a Param).
func (g *Gaussian) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindGaussian, gaussianSpec{VarianceFloor: positiveFloor(g.variance)})
}

func buildGaussian(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c gaussianSpec
	if err := decodeLeaf(KindGaussian, raw, children, &c); err != nil {
		return nil, err
	}
	if c.VarianceFloor <= 0 {
		return nil, likConfigErr("%s: variance floor %v must be > 0", KindGaussian, c.VarianceFloor)
	}
	return NewGaussian(GaussianConfig{VarianceFloor: c.VarianceFloor, Variance: placeholderAbove(c.VarianceFloor)})
}

// Spec describes b: its number of quadrature points.
func (b *Bernoulli) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindBernoulli, bernoulliSpec{QuadPoints: b.points})
}

func buildBernoulli(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c bernoulliSpec
	if err := decodeLeaf(KindBernoulli, raw, children, &c); err != nil {
		return nil, err
	}
	if c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: QuadPoints %d must be > 0", KindBernoulli, c.QuadPoints)
	}
	return NewBernoulli(BernoulliConfig{QuadPoints: c.QuadPoints})
}

// Spec describes s: its scale floor, whether ν is trainable and its number of quadrature points (σ and ν are
// Params).
func (s *StudentT) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindStudentT, studentTSpec{ScaleFloor: positiveFloor(s.scale), TrainDF: s.df.Trainable(), QuadPoints: s.points})
}

func buildStudentT(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c studentTSpec
	if err := decodeLeaf(KindStudentT, raw, children, &c); err != nil {
		return nil, err
	}
	if c.ScaleFloor <= 0 || c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: scale floor %v and QuadPoints %d must be > 0", KindStudentT, c.ScaleFloor, c.QuadPoints)
	}
	return NewStudentT(StudentTConfig{ScaleFloor: c.ScaleFloor, Scale: placeholderAbove(c.ScaleFloor), TrainDF: c.TrainDF, QuadPoints: c.QuadPoints})
}

// Spec describes p: its bin size (fixed data) and number of quadrature points.
func (p *Poisson) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindPoisson, poissonSpec{BinSize: p.binSize, QuadPoints: p.points})
}

func buildPoisson(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c poissonSpec
	if err := decodeLeaf(KindPoisson, raw, children, &c); err != nil {
		return nil, err
	}
	if c.BinSize <= 0 || c.QuadPoints <= 0 {
		return nil, likConfigErr("%s: BinSize %v and QuadPoints %d must be > 0", KindPoisson, c.BinSize, c.QuadPoints)
	}
	return NewPoisson(PoissonConfig{BinSize: c.BinSize, QuadPoints: c.QuadPoints})
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
	return NewRobustMax(RobustMaxConfig{NumClasses: c.NumClasses, Epsilon: c.Epsilon, QuadPoints: c.QuadPoints})
}

// Spec describes sm: K and its sample counts. Its generator is not part of the Spec: the rebuilt Softmax draws
// from gp.BuildOptions.Rng().
func (sm *Softmax) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindSoftmax, softmaxSpec{NumClasses: sm.k, NumSamples: sm.s, PredictSamples: sm.predS})
}

func buildSoftmax(raw json.RawMessage, children []any, o gp.BuildOptions) (any, error) {
	var c softmaxSpec
	if err := decodeLeaf(KindSoftmax, raw, children, &c); err != nil {
		return nil, err
	}
	if c.NumSamples <= 0 || c.PredictSamples <= 0 {
		return nil, likConfigErr("%s: NumSamples %d and PredictSamples %d must be > 0", KindSoftmax, c.NumSamples, c.PredictSamples)
	}
	return NewSoftmax(SoftmaxConfig{NumClasses: c.NumClasses, NumSamples: c.NumSamples, PredictSamples: c.PredictSamples, Rand: o.Rng()})
}

// Compile-time checks that every likelihood describes itself.
var (
	_ gp.Describer = (*Gaussian)(nil)
	_ gp.Describer = (*Bernoulli)(nil)
	_ gp.Describer = (*StudentT)(nil)
	_ gp.Describer = (*Poisson)(nil)
	_ gp.Describer = (*RobustMax)(nil)
	_ gp.Describer = (*Softmax)(nil)
)
