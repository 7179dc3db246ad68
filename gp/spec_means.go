package gp

import (
	"encoding/json"
)

// The kinds of the built-in mean functions (see Spec).
const (
	KindZeroMean       = "mean/zero"
	KindConstantMean   = "mean/constant"
	KindLinearMean     = "mean/linear"
	KindIdentityMean   = "mean/identity"
	KindProjectionMean = "mean/projection"
)

// zeroMeanSpec is the Config of ZeroMean and IdentityMean: the output width.
type zeroMeanSpec struct {
	Dim int `json:"dim"`
}

// constantMeanSpec is the Config of ConstantMean: the Param's name prefix and Q.
type constantMeanSpec struct {
	Name      string `json:"name"`
	OutputDim int    `json:"output_dim"`
}

// linearMeanSpec is the Config of LinearMean: the Params' name prefix, D and Q.
type linearMeanSpec struct {
	Name      string `json:"name"`
	InputDim  int    `json:"input_dim"`
	OutputDim int    `json:"output_dim"`
}

// projectionMeanSpec is the Config of ProjectionMean: D, Q and the fixed W (row-major [D,Q]). JSON numbers
// written by encoding/json are the shortest decimal that parses back to the same float64, so W round-trips
// bit for bit.
type projectionMeanSpec struct {
	InputDim  int       `json:"input_dim"`
	OutputDim int       `json:"output_dim"`
	W         []float64 `json:"w"`
}

func init() {
	RegisterKind(KindZeroMean, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c zeroMeanSpec
		if err := decodeLeaf(KindZeroMean, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindZeroMean, c.Dim); err != nil {
			return nil, err
		}
		return NewZeroMean(c.Dim)
	})
	RegisterKind(KindConstantMean, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c constantMeanSpec
		if err := decodeLeaf(KindConstantMean, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindConstantMean, c.OutputDim); err != nil {
			return nil, err
		}
		return NewConstantMean(c.Name, make([]float64, c.OutputDim))
	})
	RegisterKind(KindLinearMean, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c linearMeanSpec
		if err := decodeLeaf(KindLinearMean, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindLinearMean, c.InputDim, c.OutputDim); err != nil {
			return nil, err
		}
		return NewLinearMean(c.Name, c.InputDim, c.OutputDim, nil, nil)
	})
	RegisterKind(KindIdentityMean, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c zeroMeanSpec
		if err := decodeLeaf(KindIdentityMean, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindIdentityMean, c.Dim); err != nil {
			return nil, err
		}
		return IdentityMean{D: c.Dim}, nil
	})
	RegisterKind(KindProjectionMean, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c projectionMeanSpec
		if err := decodeLeaf(KindProjectionMean, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindProjectionMean, c.InputDim, c.OutputDim); err != nil {
			return nil, err
		}
		return NewProjectionMean(c.InputDim, c.OutputDim, c.W)
	})
}

// Spec describes the mean by its width Q.
func (m *ZeroMean) Spec() (Spec, error) { return NewSpec(KindZeroMean, zeroMeanSpec{Dim: m.Q}) }

// Spec describes the mean by its Param's name prefix and Q (c itself is a Param).
func (m *ConstantMean) Spec() (Spec, error) {
	name, err := paramPrefix(m.C, ".c")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindConstantMean, constantMeanSpec{Name: name, OutputDim: m.OutputDim()})
}

// Spec describes the mean by its Params' name prefix, D and Q (A and b are Params).
func (m *LinearMean) Spec() (Spec, error) {
	name, err := paramPrefix(m.A, ".A")
	if err != nil {
		return Spec{}, err
	}
	if s := m.A.Shape(); len(s) != 2 || s[1] != m.OutputDim() {
		return Spec{}, configErr("spec of LinearMean: A has shape %v, b has %d entries", s, m.OutputDim())
	}
	return NewSpec(KindLinearMean, linearMeanSpec{Name: name, InputDim: m.A.Shape()[0], OutputDim: m.OutputDim()})
}

// Spec describes the mean by its width D.
func (m IdentityMean) Spec() (Spec, error) { return NewSpec(KindIdentityMean, zeroMeanSpec{Dim: m.D}) }

// Spec describes the mean by D, Q and its fixed weights W (stored exactly).
func (m *ProjectionMean) Spec() (Spec, error) {
	// NewProjectionMean refused non-finite weights and W cannot change afterwards.
	return NewSpec(KindProjectionMean, projectionMeanSpec{InputDim: m.d, OutputDim: m.q, W: m.w})
}
