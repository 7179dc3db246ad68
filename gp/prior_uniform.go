package gp

import "math"

// KindUniformPrior is the Spec kind of the uniform prior.
const KindUniformPrior = "prior/uniform"

func init() {
	RegisterPrior(PriorFamily{
		Name: "uniform",
		Kind: KindUniformPrior,
		Doc:  "uniform(lo,hi): flat on lo ≤ c ≤ hi, zero outside (a sampler rejects the moves that leave it)",
		Args: []string{"lo", "hi"},
		New:  func(a []float64) (Prior, error) { return NewUniformPrior(a[0], a[1]) },
	})
}

// UniformPrior is the flat density 1/(hi − lo) on [Lo, Hi], zero outside (gonum's distuv.Uniform{Min, Max}).
type UniformPrior struct{ Lo, Hi float64 }

// NewUniformPrior returns the uniform prior, or a *PriorError unless lo and hi are finite, lo < hi and hi − lo is
// finite (a proper density).
func NewUniformPrior(lo, hi float64) (*UniformPrior, error) {
	if err := CheckPriorArg("uniform", "lo", 0, lo, true, ""); err != nil {
		return nil, err
	}
	if err := CheckPriorArg("uniform", "hi", 1, hi, hi > lo && !math.IsInf(hi-lo, 0), "> lo with hi − lo finite (a proper density)"); err != nil {
		return nil, err
	}
	return &UniformPrior{Lo: lo, Hi: hi}, nil
}

// Name returns uniform(lo,hi).
func (p *UniformPrior) Name() string { return PriorName("uniform", p.Lo, p.Hi) }

// LogDensity returns −log(hi − lo) and 0 on [lo, hi], −Inf and 0 outside.
func (p *UniformPrior) LogDensity(c float64) (float64, float64) {
	if !(c >= p.Lo && c <= p.Hi) {
		return math.Inf(-1), 0
	}
	return -math.Log(p.Hi - p.Lo), 0
}

// Support returns [lo, hi].
func (p *UniformPrior) Support() (float64, float64) { return p.Lo, p.Hi }

// Spec describes the prior by its arguments.
func (p *UniformPrior) Spec() (Spec, error) {
	return PriorSpec(KindUniformPrior, []string{"lo", "hi"}, []float64{p.Lo, p.Hi})
}
