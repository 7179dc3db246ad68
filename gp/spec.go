package gp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
)

// Spec describes the structure of a model component (a kernel, mean function, likelihood, layer or model) so
// that it can be rebuilt: its registered Kind, its kind-specific Config (sizes, names, flags; JSON) and its
// ordered sub-components. A Spec holds no trained values: a rebuilt component has Params with the same names,
// shapes and transforms in the same order, and model files (package gp/modelfile) then restore their raw
// values. Rebuilding is deterministic: the same Spec always gives the same Params.
//
// Priors, when set, are priors on the built component's Params (by index and name in its Params()), which
// BuildSpec sets after building it: Describe fills them from the Params' priors (prior.go).
type Spec struct {
	Kind     string          `json:"kind"`
	Config   json.RawMessage `json:"config,omitempty"`
	Children []Spec          `json:"children,omitempty"`
	Priors   []ParamPrior    `json:"priors,omitempty"`
}

// Describer is implemented by every component that model files can save.
type Describer interface {
	// Spec returns the component's structural description.
	Spec() (Spec, error)
}

// BuildOptions carry what a Spec cannot: the random source of components that draw at run time (deep GPs'
// propagation noise, Monte Carlo likelihoods). Nil Rand means a fixed seed (1, 2).
type BuildOptions struct {
	Rand *rand.Rand
}

// Rng returns o.Rand, or a new PCG(1, 2) source when it is nil.
func (o BuildOptions) Rng() *rand.Rand {
	if o.Rand != nil {
		return o.Rand
	}
	return rand.New(rand.NewPCG(1, 2))
}

// Builder rebuilds a component of one kind from its Config and its already-built children (in Spec order).
type Builder func(config json.RawMessage, children []any, o BuildOptions) (any, error)

// ErrUnknownKind is returned by BuildSpec for a Kind no package has registered (the package that defines it
// is not linked in: import gp/modelfile, which links every family).
var ErrUnknownKind = errors.New("gp: unknown component kind")

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Builder{}
)

// RegisterKind registers the Builder of kind. Packages call it from init; registering a kind twice panics (a
// programming error, not a data error).
func RegisterKind(kind string, b Builder) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if kind == "" || b == nil {
		panic("gp: RegisterKind: empty kind or nil builder")
	}
	if _, dup := kinds[kind]; dup {
		panic("gp: RegisterKind: kind " + kind + " registered twice")
	}
	kinds[kind] = b
}

// Kinds returns the registered kinds, sorted.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxSpecDepth bounds the nesting of Specs read from files.
const maxSpecDepth = 64

// BuildSpec rebuilds the component s describes, children first. Every component that draws at run time shares
// o.Rand (nil: one PCG(1, 2) for the whole rebuild, so two such components do not repeat each other's draws).
func BuildSpec(s Spec, o BuildOptions) (any, error) {
	o.Rand = o.Rng()
	return buildSpec(s, o, 0)
}

func buildSpec(s Spec, o BuildOptions, depth int) (any, error) {
	if depth > maxSpecDepth {
		return nil, fmt.Errorf("gp: spec nested deeper than %d", maxSpecDepth)
	}
	kindsMu.RLock()
	b, ok := kinds[s.Kind]
	kindsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, s.Kind)
	}
	children := make([]any, len(s.Children))
	for i, c := range s.Children {
		v, err := buildSpec(c, o, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s child %d: %w", s.Kind, i, err)
		}
		children[i] = v
	}
	v, err := b(s.Config, children, o)
	if err != nil {
		return nil, fmt.Errorf("gp: building %s: %w", s.Kind, err)
	}
	if err := applyPriors(v, s, o, depth); err != nil {
		return nil, fmt.Errorf("gp: building %s: %w", s.Kind, err)
	}
	return v, nil
}

// NewSpec returns the Spec of kind with config marshalled to JSON (nil: none) and the Specs of children.
func NewSpec(kind string, config any, children ...any) (Spec, error) {
	s := Spec{Kind: kind}
	if config != nil {
		raw, err := json.Marshal(config)
		if err != nil {
			return Spec{}, fmt.Errorf("gp: spec of %s: %w", kind, err)
		}
		s.Config = raw
	}
	for i, c := range children {
		d, ok := c.(Describer)
		if !ok {
			return Spec{}, fmt.Errorf("gp: spec of %s: child %d (%T) cannot describe itself", kind, i, c)
		}
		cs, err := d.Spec()
		if err != nil {
			return Spec{}, err
		}
		s.Children = append(s.Children, cs)
	}
	return s, nil
}

// DecodeConfig unmarshals a Spec's Config into dst, rejecting unknown fields (a file from a different
// component version).
func DecodeConfig(kind string, raw json.RawMessage, dst any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := strictUnmarshal(raw, dst); err != nil {
		return fmt.Errorf("gp: config of %s: %w", kind, err)
	}
	return nil
}

// ChildAs returns children[i] as a T, or an error naming kind and the types.
func ChildAs[T any](kind string, children []any, i int) (T, error) {
	var zero T
	if i < 0 || i >= len(children) {
		return zero, fmt.Errorf("%w: %s needs at least %d children, got %d", ErrConfig, kind, i+1, len(children))
	}
	v, ok := children[i].(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s child %d is %T, want %v", ErrConfig, kind, i, children[i], reflect.TypeFor[T]())
	}
	return v, nil
}

// MaxSpecEntries bounds the number of entries of any one array (a Param, a fixed weight matrix) that a Builder
// allocates from the sizes in a Config, so that a corrupt or hostile Spec cannot exhaust memory: 2²⁵ float64
// values, 256 MiB.
const MaxSpecEntries = 1 << 25

// CheckSpecDims returns an error wrapping ErrConfig unless every dimension is positive and their product is at
// most MaxSpecEntries. Builders call it on sizes read from a Config before allocating.
func CheckSpecDims(kind string, dims ...int) error {
	n := 1
	for i, d := range dims {
		if d <= 0 {
			return fmt.Errorf("%w: %s: dimension %d is %d, want > 0", ErrConfig, kind, i, d)
		}
		if d > MaxSpecEntries || n > MaxSpecEntries/d {
			return fmt.Errorf("%w: %s: dimensions %v exceed %d entries", ErrConfig, kind, dims, MaxSpecEntries)
		}
		n *= d
	}
	return nil
}

func strictUnmarshal(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the config object")
	}
	return nil
}
