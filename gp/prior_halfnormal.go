package gp

import "math"

// KindHalfNormalPrior is the Spec kind of the half-normal prior.
const KindHalfNormalPrior = "prior/halfnormal"

func init() {
	RegisterPrior(PriorFamily{
		Name: "halfnormal",
		Kind: KindHalfNormalPrior,
		Doc:  "halfnormal(sigma): |N(0, sigma²)|, c ≥ 0 (variances, noise)",
		Args: []string{"sigma"},
		New:  func(a []float64) (Prior, error) { return NewHalfNormalPrior(a[0]) },
	})
}

// HalfNormalPrior is the density of |z| for z ~ N(0, σ²): log p(c) = ½log(2/π) − log σ − c²/(2σ²) for c ≥ 0 (twice
// gonum's distuv.Normal{Mu: 0, Sigma: σ} density on c ≥ 0).
type HalfNormalPrior struct{ Sigma float64 }

// NewHalfNormalPrior returns the half-normal prior, or a *PriorError unless sigma is finite and > 0.
func NewHalfNormalPrior(sigma float64) (*HalfNormalPrior, error) {
	if err := CheckPriorArg("halfnormal", "sigma", 0, sigma, sigma > 0, "> 0"); err != nil {
		return nil, err
	}
	return &HalfNormalPrior{Sigma: sigma}, nil
}

// Name returns halfnormal(sigma).
func (p *HalfNormalPrior) Name() string { return PriorName("halfnormal", p.Sigma) }

// LogDensity returns log p(c) and its derivative −c/σ²; −Inf and 0 for c < 0.
func (p *HalfNormalPrior) LogDensity(c float64) (float64, float64) {
	if !(c >= 0) {
		return math.Inf(-1), 0
	}
	z := c / p.Sigma
	return 0.5*math.Log(2/math.Pi) - math.Log(p.Sigma) - 0.5*z*z, -z / p.Sigma
}

// Support returns [0, ∞).
func (p *HalfNormalPrior) Support() (float64, float64) { return 0, math.Inf(1) }

// Spec describes the prior by its argument.
func (p *HalfNormalPrior) Spec() (Spec, error) {
	return PriorSpec(KindHalfNormalPrior, []string{"sigma"}, []float64{p.Sigma})
}
