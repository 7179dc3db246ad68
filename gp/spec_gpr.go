package gp

import (
	"encoding/json"
	"math"

	"github.com/gpzoo/gpzoo/graph"
)

// KindGPR is the kind of exact GP regression models (see GPR.Spec).
const KindGPR = "model/gpr"

// gprSpec is the Config of GPR: the lower bound of the noise variance's Positive transform, and the replicates
// of collapsed training data.
type gprSpec struct {
	NoiseFloor float64     `json:"noise_floor,omitempty"`
	Replicates *Replicates `json:"replicates,omitempty"`
}

func init() {
	RegisterKind(KindGPR, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c gprSpec
		if err := DecodeConfig(KindGPR, raw, &c); err != nil {
			return nil, err
		}
		if math.IsNaN(c.NoiseFloor) || math.IsInf(c.NoiseFloor, 0) || c.NoiseFloor < 0 {
			return nil, configErr("%s: noise floor %v must be finite and ≥ 0", KindGPR, c.NoiseFloor)
		}
		if len(children) < 1 || len(children) > 2 {
			return nil, configErr("%s needs a kernel and optionally a mean function, got %d children", KindGPR, len(children))
		}
		k, err := ChildAs[Kernel](KindGPR, children, 0)
		if err != nil {
			return nil, err
		}
		gc := GPRConfig{Kernel: k, NoiseFloor: c.NoiseFloor, Replicates: c.Replicates}
		if len(children) == 2 {
			if gc.Mean, err = ChildAs[MeanFunction](KindGPR, children, 1); err != nil {
				return nil, err
			}
		}
		return NewGPR(gc)
	})
}

// Spec describes the model: the noise floor (Config), then the kernel and, if any, the mean function
// (children). The training data are not part of a Spec (model files store them).
func (m *GPR) Spec() (Spec, error) {
	if m.Kernel == nil || m.Noise == nil {
		return Spec{}, configErr("spec of GPR: nil Kernel or Noise")
	}
	pos, ok := m.Noise.Transform().(graph.Positive)
	if !ok {
		return Spec{}, configErr("spec of GPR: noise transform %v is not Positive", m.Noise.Transform())
	}
	if m.Noise.Name() != gprNoiseName {
		return Spec{}, configErr("spec of GPR: noise Param is named %q, want %q", m.Noise.Name(), gprNoiseName)
	}
	children := []any{m.Kernel}
	if m.Mean != nil {
		children = append(children, m.Mean)
	}
	return NewSpec(KindGPR, gprSpec{NoiseFloor: pos.Floor, Replicates: m.reps}, children...)
}

// gprNoiseName is the name of GPR's noise-variance Param.
const gprNoiseName = "likelihood.variance"
