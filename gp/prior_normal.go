package gp

import "math"

// KindNormalPrior is the Spec kind of the normal prior.
const KindNormalPrior = "prior/normal"

func init() {
	RegisterPrior(PriorFamily{
		Name: "normal",
		Kind: KindNormalPrior,
		Doc:  "normal(mu,sigma): N(mu, sigma²) on any real c (mean constants, locations)",
		Args: []string{"mu", "sigma"},
		New:  func(a []float64) (Prior, error) { return NewNormalPrior(a[0], a[1]) },
	})
}

// NormalPrior is the normal density N(Mu, Sigma²): log p(c) = −log σ − ½log 2π − (c − μ)²/(2σ²) (gonum's
// distuv.Normal{Mu, Sigma}).
type NormalPrior struct{ Mu, Sigma float64 }

// NewNormalPrior returns the normal prior, or a *PriorError unless mu is finite and sigma finite and > 0.
func NewNormalPrior(mu, sigma float64) (*NormalPrior, error) {
	if err := CheckPriorArg("normal", "mu", 0, mu, true, ""); err != nil {
		return nil, err
	}
	if err := CheckPriorArg("normal", "sigma", 1, sigma, sigma > 0, "> 0"); err != nil {
		return nil, err
	}
	return &NormalPrior{Mu: mu, Sigma: sigma}, nil
}

// Name returns normal(mu,sigma).
func (p *NormalPrior) Name() string { return PriorName("normal", p.Mu, p.Sigma) }

// LogDensity returns log p(c) and its derivative −(c − μ)/σ².
func (p *NormalPrior) LogDensity(c float64) (float64, float64) {
	z := (c - p.Mu) / p.Sigma
	return -math.Log(p.Sigma) - 0.5*math.Log(2*math.Pi) - 0.5*z*z, -z / p.Sigma
}

// Support returns (−∞, ∞).
func (p *NormalPrior) Support() (float64, float64) { return math.Inf(-1), math.Inf(1) }

// Spec describes the prior by its arguments.
func (p *NormalPrior) Spec() (Spec, error) {
	return PriorSpec(KindNormalPrior, []string{"mu", "sigma"}, []float64{p.Mu, p.Sigma})
}
