package graph

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpzoo/gpzoo/ops"
)

// Param is a trainable (or frozen) value: its unconstrained storage, its shape and the Transform to its
// constrained value. Graphs read it at every Run; optimisers write its raw value.
type Param struct {
	name      string
	shape     []int
	t         Transform
	raw       []float64
	trainable bool
	prior     Prior // nil: none (prior.go)
}

// NewParam returns a trainable Param named name with constrained value value (row-major, shape shape; an empty
// shape is a scalar) and transform t (nil means Identity). It fails on shape mismatch, non-finite values or a
// value outside the transform's range.
func NewParam(name string, value []float64, t Transform, shape ...int) (*Param, error) {
	if name == "" {
		return nil, errors.New("graph: NewParam: empty name")
	}
	if t == nil {
		t = Identity{}
	}
	n := 1
	for _, s := range shape {
		if s <= 0 {
			return nil, &ops.ShapeError{Op: "NewParam " + name, Want: "positive dimensions", Got: fmt.Sprint(shape)}
		}
		n *= s
	}
	if len(value) != n {
		return nil, &ops.ShapeError{Op: "NewParam " + name, Want: fmt.Sprintf("%d values for shape %v", n, shape), Got: fmt.Sprint(len(value))}
	}
	p := &Param{name: name, shape: slices.Clone(shape), t: t, trainable: true}
	if err := p.Set(value); err != nil {
		return nil, err
	}
	return p, nil
}

// Name returns the Param's name.
func (p *Param) Name() string { return p.name }

// Shape returns a copy of the Param's shape (empty for a scalar).
func (p *Param) Shape() []int { return slices.Clone(p.shape) }

// Size returns the number of entries.
func (p *Param) Size() int { return len(p.raw) }

// Transform returns the Param's transform.
func (p *Param) Transform() Transform { return p.t }

// Trainable reports whether optimisers update the Param (and whether programs compute its gradient).
func (p *Param) Trainable() bool { return p.trainable }

// SetTrainable freezes (false) or unfreezes (true) the Param. Programs compiled earlier keep the set they had.
func (p *Param) SetTrainable(on bool) { p.trainable = on }

// Value returns a copy of the constrained value.
func (p *Param) Value() []float64 { return p.t.Apply(p.raw, p.shape) }

// Set assigns the constrained value v (same size), through the transform's inverse.
func (p *Param) Set(v []float64) error {
	if len(v) != len(p.raw) && p.raw != nil {
		return &ops.ShapeError{Op: "Param.Set " + p.name, Want: fmt.Sprint(len(p.raw), " values"), Got: fmt.Sprint(len(v))}
	}
	raw, err := p.t.Inverse(v, p.shape)
	if err != nil {
		return fmt.Errorf("graph: param %q: %w", p.name, err)
	}
	p.raw = raw
	return nil
}

// Raw returns the unconstrained storage itself (not a copy): optimisers update it in place.
func (p *Param) Raw() []float64 { return p.raw }

// SetRaw copies raw into the unconstrained storage.
func (p *Param) SetRaw(raw []float64) error {
	if len(raw) != len(p.raw) {
		return &ops.ShapeError{Op: "Param.SetRaw " + p.name, Want: fmt.Sprint(len(p.raw), " values"), Got: fmt.Sprint(len(raw))}
	}
	if err := ops.CheckFinite("Param.SetRaw "+p.name, raw, 1); err != nil {
		return err
	}
	copy(p.raw, raw)
	return nil
}

// SnapshotRaw returns a copy of every Param's unconstrained values, for RestoreRaw.
func SnapshotRaw(ps []*Param) [][]float64 {
	s := make([][]float64, len(ps))
	for i, p := range ps {
		s[i] = append([]float64(nil), p.raw...)
	}
	return s
}

// SnapshotRawInto overwrites s, a SnapshotRaw of the same Params, with their current values.
func SnapshotRawInto(s [][]float64, ps []*Param) {
	for i, p := range ps {
		copy(s[i], p.raw)
	}
}

// RestoreRaw puts back the unconstrained values s that SnapshotRaw took of the same Params.
func RestoreRaw(ps []*Param, s [][]float64) {
	for i, p := range ps {
		copy(p.raw, s[i])
	}
}

func (p *Param) String() string { return fmt.Sprintf("%s%v %v", p.name, p.shape, p.t) }
