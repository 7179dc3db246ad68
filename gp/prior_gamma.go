package gp

import (
	"fmt"
	"math"
)

// KindGammaPrior is the Spec kind of the gamma prior.
const KindGammaPrior = "prior/gamma"

func init() {
	RegisterPrior(PriorFamily{
		Name: "gamma",
		Kind: KindGammaPrior,
		Doc:  "gamma(shape,rate): density ∝ c^(shape−1) e^(−rate·c), c > 0; mean shape/rate",
		Args: []string{"shape", "rate"},
		New:  func(a []float64) (Prior, error) { return NewGammaPrior(a[0], a[1]) },
	})
}

// GammaPrior is the gamma density of a positive value c with shape α and rate β:
// log p(c) = α log β − log Γ(α) + (α − 1) log c − βc (gonum's distuv.Gamma{Alpha: α, Beta: β}, β a rate; TensorFlow
// Probability's Gamma(concentration, rate)).
type GammaPrior struct{ Shape, Rate float64 }

// NewGammaPrior returns the gamma prior, or a *PriorError unless shape and rate are finite and > 0.
func NewGammaPrior(shape, rate float64) (*GammaPrior, error) {
	if err := CheckPriorArg("gamma", "shape", 0, shape, shape > 0, "> 0"); err != nil {
		return nil, err
	}
	if err := CheckPriorArg("gamma", "rate", 1, rate, rate > 0, "> 0"); err != nil {
		return nil, err
	}
	lg, _ := math.Lgamma(shape)
	if c := shape*math.Log(rate) - lg; math.IsNaN(c) || math.IsInf(c, 0) {
		return nil, &PriorError{Prior: "gamma", Arg: "rate", Index: 1, Value: rate, Want: fmt.Sprintf("a value whose normalising constant with shape %v is finite", shape)}
	}
	return &GammaPrior{Shape: shape, Rate: rate}, nil
}

// Name returns gamma(shape,rate).
func (p *GammaPrior) Name() string { return PriorName("gamma", p.Shape, p.Rate) }

// LogDensity returns log p(c) and its derivative (α − 1)/c − β; −Inf and 0 for c ≤ 0.
func (p *GammaPrior) LogDensity(c float64) (float64, float64) {
	if !(c > 0) {
		return math.Inf(-1), 0
	}
	lg, _ := math.Lgamma(p.Shape)
	return p.Shape*math.Log(p.Rate) - lg + (p.Shape-1)*math.Log(c) - p.Rate*c, (p.Shape-1)/c - p.Rate
}

// Support returns (0, ∞).
func (p *GammaPrior) Support() (float64, float64) { return 0, math.Inf(1) }

// Spec describes the prior by its arguments.
func (p *GammaPrior) Spec() (Spec, error) {
	return PriorSpec(KindGammaPrior, []string{"shape", "rate"}, []float64{p.Shape, p.Rate})
}
