package gp

import "math"

// KindLogNormalPrior is the Spec kind of the log-normal prior.
const KindLogNormalPrior = "prior/lognormal"

func init() {
	RegisterPrior(PriorFamily{
		Name: "lognormal",
		Kind: KindLogNormalPrior,
		Doc:  "lognormal(mu,sigma): log c ~ N(mu, sigma²), c > 0 (length-scales, variances)",
		Args: []string{"mu", "sigma"},
		New:  func(a []float64) (Prior, error) { return NewLogNormalPrior(a[0], a[1]) },
	})
}

// LogNormalPrior is the log-normal density of a positive value c: log c ~ N(Mu, Sigma²),
// log p(c) = −log c − log σ − ½log 2π − (log c − μ)²/(2σ²) (gonum's distuv.LogNormal{Mu, Sigma}).
type LogNormalPrior struct{ Mu, Sigma float64 }

// NewLogNormalPrior returns the log-normal prior, or a *PriorError unless mu is finite and sigma finite and > 0.
func NewLogNormalPrior(mu, sigma float64) (*LogNormalPrior, error) {
	if err := CheckPriorArg("lognormal", "mu", 0, mu, true, ""); err != nil {
		return nil, err
	}
	if err := CheckPriorArg("lognormal", "sigma", 1, sigma, sigma > 0, "> 0"); err != nil {
		return nil, err
	}
	return &LogNormalPrior{Mu: mu, Sigma: sigma}, nil
}

// Name returns lognormal(mu,sigma).
func (p *LogNormalPrior) Name() string { return PriorName("lognormal", p.Mu, p.Sigma) }

// LogDensity returns log p(c) and its derivative −(1 + (log c − μ)/σ²)/c; −Inf and 0 for c ≤ 0.
func (p *LogNormalPrior) LogDensity(c float64) (float64, float64) {
	if !(c > 0) {
		return math.Inf(-1), 0
	}
	lc := math.Log(c)
	z := (lc - p.Mu) / p.Sigma
	return -lc - math.Log(p.Sigma) - 0.5*math.Log(2*math.Pi) - 0.5*z*z, -(1 + z/p.Sigma) / c
}

// Support returns (0, ∞).
func (p *LogNormalPrior) Support() (float64, float64) { return 0, math.Inf(1) }

// Spec describes the prior by its arguments.
func (p *LogNormalPrior) Spec() (Spec, error) {
	return PriorSpec(KindLogNormalPrior, []string{"mu", "sigma"}, []float64{p.Mu, p.Sigma})
}
