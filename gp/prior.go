package gp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpzoo/gpzoo/graph"
)

// Prior is a prior density on each entry of a Param's constrained value (graph.Prior: log p(c) and its
// derivative), which describes itself (a Spec, so that model files keep it) and its support. The built-in
// families are log-normal, gamma, half-normal, uniform and normal, one file each (prior_<name>.go); a user's own
// registers with RegisterPrior from one file, as kernels do.
//
// The density is of the constrained value c (a length-scale, a variance), not of the raw value the optimiser
// and the sampler move: a MAP fit adds −Σ log p(c) to the loss (WithLogPrior), and NUTS, which samples the raw
// values r with c = t(r), adds the change of variables log t′(r) (graph.Graph.LogJacobian; Stan Reference
// Manual, "Variable transforms"), so that the posterior of c is the one the prior and the likelihood define
// whatever transform the Param has.
type Prior interface {
	graph.Prior
	Describer
	// Support returns the interval [lo, hi] outside which the density is zero (lo or hi may be infinite).
	Support() (lo, hi float64)
}

// PriorFamily is a prior users name: `gpzoo train --prior SELECTOR=NAME(ARGS)` and model files read the
// families registered with RegisterPrior.
type PriorFamily struct {
	// Name is the name users give (lower-case letters and digits), e.g. "lognormal".
	Name string
	// Kind is the Spec kind of the priors New returns (RegisterPrior registers it).
	Kind string
	// Doc is one line for --help: the density and its arguments.
	Doc string
	// Args name the arguments in order, e.g. ["mu", "sigma"]: the written form is NAME(a1,a2,...), and a Spec's
	// Config holds them by name.
	Args []string
	// New returns the prior with these arguments (len(Args) of them), or a *PriorError for values that do not make
	// a proper, finite density.
	New func(args []float64) (Prior, error)
}

// ErrBadPrior marks a prior whose arguments do not make a proper density with a finite log: a non-finite argument
// (NaN, ±Inf), a scale that is not positive, an interval that is empty or unbounded.
var ErrBadPrior = errors.New("gp: improper or non-finite prior")

// PriorError is the error of a prior family's New for one argument: the family, the argument's name and index,
// its value and what it must be. It wraps ErrBadPrior.
type PriorError struct {
	Prior string  // the family, e.g. "gamma"
	Arg   string  // the argument's name, e.g. "rate"
	Index int     // the argument's position (0-based)
	Value float64 // the value given
	Want  string  // what it must be, e.g. "> 0"
}

func (e *PriorError) Error() string {
	return fmt.Sprintf("gp: prior %s: %s = %v, want %s (an improper or non-finite prior)", e.Prior, e.Arg, e.Value, e.Want)
}

// Unwrap returns ErrBadPrior.
func (e *PriorError) Unwrap() error { return ErrBadPrior }

var (
	priorsMu  sync.RWMutex
	priorFams = map[string]PriorFamily{}
)

// RegisterPrior registers f under f.Name and its Spec kind f.Kind (whose Config holds the arguments by name; the
// builder calls f.New). Packages call it from init. It panics (a programming error) for an empty name or one that
// is not lower-case letters and digits, a name or kind registered twice, a nil New or an argument list with an
// empty or repeated name.
func RegisterPrior(f PriorFamily) {
	if f.Name == "" || f.New == nil || f.Kind == "" {
		panic("gp: RegisterPrior: empty name or kind, or nil New")
	}
	for _, r := range f.Name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			panic("gp: RegisterPrior: name " + f.Name + " is not lower-case letters and digits")
		}
	}
	seen := map[string]bool{}
	for _, a := range f.Args {
		if a == "" || seen[a] {
			panic("gp: RegisterPrior: " + f.Name + ": empty or repeated argument name")
		}
		seen[a] = true
	}
	priorsMu.Lock()
	if _, dup := priorFams[f.Name]; dup {
		priorsMu.Unlock()
		panic("gp: RegisterPrior: prior " + f.Name + " registered twice")
	}
	priorFams[f.Name] = f
	priorsMu.Unlock()
	RegisterKind(f.Kind, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		if len(children) != 0 {
			return nil, configErr("%s takes no children, got %d", f.Kind, len(children))
		}
		byName := map[string]float64{}
		if err := DecodeConfig(f.Kind, raw, &byName); err != nil {
			return nil, err
		}
		if len(byName) != len(f.Args) {
			return nil, configErr("%s: %d arguments, want %s", f.Kind, len(byName), strings.Join(f.Args, ", "))
		}
		args := make([]float64, len(f.Args))
		for i, a := range f.Args {
			v, ok := byName[a]
			if !ok {
				return nil, configErr("%s: missing argument %s", f.Kind, a)
			}
			args[i] = v
		}
		return f.New(args)
	})
}

// PriorFamilies returns the registered prior families, sorted by name.
func PriorFamilies() []PriorFamily {
	priorsMu.RLock()
	defer priorsMu.RUnlock()
	out := make([]PriorFamily, 0, len(priorFams))
	for _, f := range priorFams {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupPrior returns the family registered under name (case-insensitive).
func LookupPrior(name string) (PriorFamily, bool) {
	priorsMu.RLock()
	defer priorsMu.RUnlock()
	f, ok := priorFams[strings.ToLower(name)]
	return f, ok
}

// PriorSpec returns the Spec of a prior of kind with arguments vals named names (a family's Args): what a prior's
// Spec method returns.
func PriorSpec(kind string, names []string, vals []float64) (Spec, error) {
	if len(names) != len(vals) {
		return Spec{}, configErr("spec of %s: %d argument names, %d values", kind, len(names), len(vals))
	}
	byName := make(map[string]float64, len(names))
	for i, n := range names {
		byName[n] = vals[i]
	}
	return NewSpec(kind, byName)
}

// PriorName returns the written form NAME(a1,a2,...) of a prior, each argument in the shortest form that reads
// back to the same float64 (the prior's graph.Prior Name: it goes into op hashes, so it must be exact).
func PriorName(name string, args ...float64) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = strconv.FormatFloat(a, 'g', -1, 64)
	}
	return name + "(" + strings.Join(s, ",") + ")"
}

// CheckPriorArg returns a *PriorError for argument i (named arg) of prior family name when v is not finite or ok
// is false (want says what v must be).
func CheckPriorArg(name, arg string, i int, v float64, ok bool, want string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return &PriorError{Prior: name, Arg: arg, Index: i, Value: v, Want: "a finite number"}
	}
	if !ok {
		return &PriorError{Prior: name, Arg: arg, Index: i, Value: v, Want: want}
	}
	return nil
}

// ParamPrior is the prior of one Param in a Spec (Spec.Priors): the Param's name and its index in the described
// component's Params(), and the prior's own Spec.
type ParamPrior struct {
	Param string `json:"param"`
	Index int    `json:"index"`
	Prior Spec   `json:"prior"`
}

// paramHolder is a component with Params (every model, kernel, likelihood, mean and layer).
type paramHolder interface {
	Params() []*graph.Param
}

// Describe returns c's Spec with the priors of its Params (Spec.Priors), so that BuildSpec rebuilds c with the same
// priors: model files and a cluster's job describe their models through it. A prior that is not a gp.Prior (it
// cannot describe itself) is an error.
func Describe(c Describer) (Spec, error) {
	if c == nil {
		return Spec{}, configErr("Describe: nil component")
	}
	s, err := c.Spec()
	if err != nil {
		return Spec{}, err
	}
	h, ok := c.(paramHolder)
	if !ok {
		return s, nil
	}
	for i, p := range h.Params() {
		if p == nil || p.Prior() == nil {
			continue
		}
		d, ok := p.Prior().(Describer)
		if !ok {
			return Spec{}, configErr("Describe: the prior %s of Param %s cannot describe itself (not a gp.Prior)", p.Prior().Name(), p.Name())
		}
		ps, err := d.Spec()
		if err != nil {
			return Spec{}, fmt.Errorf("gp: Describe: prior of %s: %w", p.Name(), err)
		}
		s.Priors = append(s.Priors, ParamPrior{Param: p.Name(), Index: i, Prior: ps})
	}
	return s, nil
}

// applyPriors sets the priors of Spec s on v, the component built from it (buildSpec).
func applyPriors(v any, s Spec, o BuildOptions, depth int) error {
	if len(s.Priors) == 0 {
		return nil
	}
	h, ok := v.(paramHolder)
	if !ok {
		return configErr("%s: priors given for a %T, which has no Params", s.Kind, v)
	}
	ps := h.Params()
	for _, pp := range s.Priors {
		if pp.Index < 0 || pp.Index >= len(ps) || ps[pp.Index] == nil || ps[pp.Index].Name() != pp.Param {
			return configErr("%s: a prior for Param %d %q, which the component does not have", s.Kind, pp.Index, pp.Param)
		}
		built, err := buildSpec(pp.Prior, o, depth+1)
		if err != nil {
			return fmt.Errorf("%s: prior of %s: %w", s.Kind, pp.Param, err)
		}
		pr, ok := built.(graph.Prior)
		if !ok {
			return configErr("%s: the prior of %s builds a %T, not a prior", s.Kind, pp.Param, built)
		}
		if err := ps[pp.Index].SetPrior(pr); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrConfig, s.Kind, err)
		}
	}
	return nil
}

// WithLogPrior returns loss − Σ log p(c) over the priors of ps (graph.Graph.LogPrior): the objective of a maximum
// a posteriori fit; loss itself when no Param of ps has a prior (the same graph as before priors existed).
func WithLogPrior(loss *graph.Node, ps []*graph.Param) *graph.Node {
	g := loss.Graph()
	if g == nil {
		return loss
	}
	lp := g.LogPrior(ps)
	if lp == nil {
		return loss
	}
	return g.Sub(loss, lp)
}
