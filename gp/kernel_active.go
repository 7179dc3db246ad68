package gp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/graph"
)

// KindActive is the Spec kind of Active.
const KindActive = "kernel/active"

// Active is a kernel acting on chosen input columns, GPflow's active_dims: for inputs with InputDim columns,
// K(x1, x2) = k(x1[:, dims], x2[:, dims]), the one mechanism by which any kernel reads a subset of the columns
// (`se[0,1] * coregion[2]` in a kernel expression, gp/grammar). The columns are picked by graph.Col and
// graph.StackCols, whose gradients reach the chosen columns only: the others get zero.
type Active struct {
	k    Kernel
	dim  int
	dims []int
	key  string // dims, for the graph's memo
}

// NewActive returns k acting on columns dims (distinct, in [0, inputDim), as many as k.InputDim(), in the order
// k reads them) of inputs with inputDim columns.
func NewActive(k Kernel, inputDim int, dims []int) (*Active, error) {
	if k == nil {
		return nil, configErr("Active: nil kernel")
	}
	if inputDim <= 0 {
		return nil, configErr("Active: InputDim must be positive, got %d", inputDim)
	}
	if len(dims) != k.InputDim() {
		return nil, configErr("Active: %d columns %v for a kernel of InputDim %d", len(dims), dims, k.InputDim())
	}
	seen := map[int]bool{}
	for _, d := range dims {
		if d < 0 || d >= inputDim {
			return nil, configErr("Active: column %d outside [0, %d)", d, inputDim)
		}
		if seen[d] {
			return nil, configErr("Active: column %d given twice in %v", d, dims)
		}
		seen[d] = true
	}
	return &Active{k: k, dim: inputDim, dims: slices.Clone(dims), key: fmt.Sprint(dims)}, nil
}

// Kernel returns the wrapped kernel.
func (a *Active) Kernel() Kernel { return a.k }

// Dims returns the active columns, in the order the wrapped kernel reads them.
func (a *Active) Dims() []int { return slices.Clone(a.dims) }

// activeKey memoises a column selection per graph: K(X, X) and KDiag(X) share one selection of X, and the
// wrapped kernel sees the same node twice in K(X, X) (as White needs).
type activeKey struct {
	x    *graph.Node
	dims string
}

func (a *Active) pick(x *graph.Node) *graph.Node {
	if a.dim == len(a.dims) && slices.IsSorted(a.dims) { // every column, in order
		return x
	}
	g := x.Graph()
	return g.Memo(activeKey{x, a.key}, func() *graph.Node {
		cols := make([]*graph.Node, len(a.dims))
		for i, d := range a.dims {
			cols[i] = g.Col(x, d)
		}
		return g.StackCols(cols...)
	})
}

// K returns k(x1[:, dims], x2[:, dims]) [N,M].
func (a *Active) K(x1, x2 *graph.Node) *graph.Node {
	p1 := a.pick(x1)
	p2 := p1
	if x2 != x1 {
		p2 = a.pick(x2)
	}
	return a.k.K(p1, p2)
}

// KDiag returns k's diagonal on x[:, dims] [N].
func (a *Active) KDiag(x *graph.Node) *graph.Node { return a.k.KDiag(a.pick(x)) }

// InputDim returns the number of input columns (not the wrapped kernel's).
func (a *Active) InputDim() int { return a.dim }

// Params returns the wrapped kernel's hyperparameters.
func (a *Active) Params() []*graph.Param { return a.k.Params() }

func (a *Active) String() string {
	s := make([]string, len(a.dims))
	for i, d := range a.dims {
		s[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%v[%s]", a.k, strings.Join(s, ","))
}

// activeSpec is the Config of Active: the number of input columns and the active ones.
type activeSpec struct {
	InputDim int   `json:"input_dim"`
	Dims     []int `json:"dims"`
}

// Spec describes the wrapper: D and the columns, with the wrapped kernel as its one child.
func (a *Active) Spec() (Spec, error) {
	return NewSpec(KindActive, activeSpec{InputDim: a.dim, Dims: a.dims}, a.k)
}

// CategoricalInputs maps the wrapped kernel's categorical columns to the input's.
func (a *Active) CategoricalInputs() []CategoricalInput {
	var out []CategoricalInput
	for _, c := range CategoricalInputs(a.k) {
		if c.Column >= 0 && c.Column < len(a.dims) {
			out = append(out, CategoricalInput{Column: a.dims[c.Column], Levels: c.Levels})
		}
	}
	return mergeCategorical(out)
}

func init() {
	RegisterKind(KindActive, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c activeSpec
		if err := DecodeConfig(KindActive, raw, &c); err != nil {
			return nil, err
		}
		if len(raw) == 0 || len(children) != 1 {
			return nil, configErr("%s needs a config and one child kernel, got %d", KindActive, len(children))
		}
		if err := CheckSpecDims(KindActive, c.InputDim); err != nil {
			return nil, err
		}
		k, err := ChildAs[Kernel](KindActive, children, 0)
		if err != nil {
			return nil, err
		}
		return NewActive(k, c.InputDim, c.Dims)
	})
}

// ---------------------------------------------------------------------------------------------------------------
// Categorical input columns.

// CategoricalInput is an input column a kernel reads as a category index in {0, …, Levels−1}: a coregion kernel's
// task column (Álvarez, Rosasco & Lawrence 2012). Such a column must never be standardised (the indices would
// become non-integers), and the kernel's gradient with respect to it is zero.
type CategoricalInput struct {
	Column int // 0-based input column
	Levels int // number of categories (tasks)
}

// Categorical is implemented by kernels that read some input columns as category indices (Coregion, and
// wrappers and combinations that hold one: Active, ChangePoints).
type Categorical interface {
	CategoricalInputs() []CategoricalInput
}

// CategoricalInputs returns the categorical input columns of k, sorted by column (nil if none): k's own if it
// implements Categorical, else the union over the parts of a Sum or Product. A column two parts read with
// different numbers of levels is reported with the smaller (the values must be valid for both).
func CategoricalInputs(k Kernel) []CategoricalInput {
	switch k := k.(type) {
	case Categorical:
		return k.CategoricalInputs()
	case *Sum:
		return categoricalOf(k.parts...)
	case *Product:
		return categoricalOf(k.parts...)
	}
	return nil
}

// categoricalOf is the union of the parts' categorical columns.
func categoricalOf(parts ...Kernel) []CategoricalInput {
	var all []CategoricalInput
	for _, p := range parts {
		all = append(all, CategoricalInputs(p)...)
	}
	return mergeCategorical(all)
}

// mergeCategorical sorts cs by column and keeps one entry per column, with the fewest levels.
func mergeCategorical(cs []CategoricalInput) []CategoricalInput {
	if len(cs) == 0 {
		return nil
	}
	slices.SortFunc(cs, func(a, b CategoricalInput) int { return a.Column - b.Column })
	out := cs[:1]
	for _, c := range cs[1:] {
		if last := &out[len(out)-1]; last.Column == c.Column {
			last.Levels = min(last.Levels, c.Levels)
			continue
		}
		out = append(out, c)
	}
	return out
}

// CategoryError reports an input value that is not a valid category index of a categorical column: not an
// integer, or outside {0, …, Levels−1}.
type CategoryError struct {
	Where  string // what read it, e.g. "Coregion(P=3,R=1,col=2)"
	Row    int    // 0-based row
	Column int    // 0-based input column
	Value  float64
	Levels int
}

func (e *CategoryError) Error() string {
	return fmt.Sprintf("gp: %s: input row %d, column %d holds %v, not a category index in {0, …, %d} (a task column must hold integers and must not be standardised)",
		e.Where, e.Row, e.Column, e.Value, e.Levels-1)
}

// Unwrap returns ErrConfig.
func (e *CategoryError) Unwrap() error { return ErrConfig }

// validCategory reports whether v is an integer in [0, levels).
func validCategory(v float64, levels int) bool {
	return v >= 0 && v < float64(levels) && v == math.Trunc(v)
}

// CheckCategorical returns a *CategoryError for the first value of x (row-major, d columns) in a column of cs that
// is not a valid category index, or nil: callers validate data once before training (and must leave these
// columns unstandardised).
func CheckCategorical(where string, x []float64, d int, cs []CategoricalInput) error {
	if d <= 0 {
		return nil
	}
	for i := 0; i*d < len(x); i++ {
		for _, c := range cs {
			if c.Column < 0 || c.Column >= d {
				continue
			}
			if v := x[i*d+c.Column]; !validCategory(v, c.Levels) {
				return &CategoryError{Where: where, Row: i, Column: c.Column, Value: v, Levels: c.Levels}
			}
		}
	}
	return nil
}
