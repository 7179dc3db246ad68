package grammar

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Base is one of the four base kernels of the grammar (Teng et al. 2020, Sec. 6.1: SE, RQ, LIN, PER). The
// constants are declared in canonical order PER < LIN < RQ < SE, the order of the paper's tables (App. E.1).
type Base int

// The base kernels.
const (
	// PER is the periodic kernel σ² exp(−2 Σ_d sin²(π(x_d−x'_d)/p)/ℓ_d²).
	PER Base = iota
	// LIN is the linear kernel Σ_d σ²_d x_d x'_d (no offset).
	LIN
	// RQ is the rational-quadratic kernel σ²(1 + r²/(2α))^(−α), r² = Σ_d (x_d−x'_d)²/ℓ_d².
	RQ
	// SE is the squared-exponential kernel σ² exp(−r²/2).
	SE
)

// numBases is the number of valid Base values.
const numBases = 4

var baseNames = [numBases]string{"PER", "LIN", "RQ", "SE"}

// String returns the base kernel's upper-case name ("PER", "LIN", "RQ", "SE"), or "Base(n)" for an invalid
// value.
func (b Base) String() string {
	if b.valid() {
		return baseNames[b]
	}
	return fmt.Sprintf("Base(%d)", int(b))
}

func (b Base) valid() bool { return b >= 0 && b < numBases }

// Op is the operator at the root of an Expr.
type Op int

// The operators.
const (
	// Leaf is a base kernel.
	Leaf Op = iota
	// Add is a sum of two or more operands.
	Add
	// Mul is a product of two or more operands.
	Mul
)

// Expr is an immutable kernel expression in canonical form (see the package documentation): a base kernel, or
// a sum or product of at least two operands, where no operand has the same operator as its parent and the
// operands are sorted. Build one with NewBase, Sum, Product or Parse. The zero value is the leaf PER; a nil
// *Expr prints as "<nil>" and has level 0.
type Expr struct {
	op    Op
	base  Base    // for Leaf (numBases for a registered kernel outside the base set)
	fam   string  // for a Leaf outside the base set: the gp.KernelFamily name (lower case)
	dims  []int   // for a Leaf: the input columns it acts on (nil: all of them), gp.Active
	terms []*Expr // for Add and Mul: ≥ 2, canonical order, none with the parent's op
	str   string  // canonical string, computed at construction
	level int     // number of leaves
}

// NewBase returns the leaf expression for base kernel b. An invalid b gives an expression that Sum, Product
// and Kernel reject.
func NewBase(b Base) *Expr {
	return &Expr{op: Leaf, base: b, str: b.String(), level: 1}
}

// newFamilyLeaf returns the leaf of a registered kernel family outside the base set (gp.LookupKernel(name)); it
// prints as the upper-case name, after the base kernels in the canonical order.
func newFamilyLeaf(name string) *Expr {
	name = strings.ToLower(name)
	return &Expr{op: Leaf, base: numBases, fam: name, str: strings.ToUpper(name), level: 1}
}

// withDims returns e acting on input columns dims (nil: e itself): a leaf gets dims (a leaf that already has
// columns gets dims[j] for each of its columns j: the columns of its operand), a sum or product distributes them
// over its operands ((SE+PER)[0] is SE[0]+PER[0]). It fails on a column index outside dims.
func (e *Expr) withDims(dims []int) (*Expr, error) {
	if dims == nil {
		return e, nil
	}
	if e.op == Leaf {
		nd := slices.Clone(dims)
		if e.dims != nil {
			nd = make([]int, len(e.dims))
			for i, j := range e.dims {
				if j >= len(dims) {
					return nil, fmt.Errorf("column %d of %v is outside the %d columns %v", j, e, len(dims), dims)
				}
				nd[i] = dims[j]
			}
		}
		l := *e
		l.dims = nd
		l.str = leafString(l.base, l.fam, nd)
		return &l, nil
	}
	terms := make([]*Expr, len(e.terms))
	for i, t := range e.terms {
		nt, err := t.withDims(dims)
		if err != nil {
			return nil, err
		}
		terms[i] = nt
	}
	return newNode(e.op, terms), nil
}

// leafString prints a leaf: the base kernel's or the family's upper-case name, then its columns, e.g. "SE[0,2]".
func leafString(b Base, fam string, dims []int) string {
	s := b.String()
	if fam != "" {
		s = strings.ToUpper(fam)
	}
	if dims == nil {
		return s
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	return s + "[" + strings.Join(parts, ",") + "]"
}

// Dims returns the input columns a leaf acts on (nil: all of them, or a non-leaf).
func (e *Expr) Dims() []int {
	if e == nil || e.op != Leaf {
		return nil
	}
	return slices.Clone(e.dims)
}

// Family returns the registered kernel family name of a leaf outside the base set ("" for a base kernel or a
// non-leaf).
func (e *Expr) Family() string {
	if e == nil || e.op != Leaf {
		return ""
	}
	return e.fam
}

// Sum returns the canonical sum of terms (Duvenaud et al. 2013's S → S + B rule is Sum(S, NewBase(B))): sums
// among the terms are flattened into their operands and the operands are sorted. It fails on fewer than two
// terms, on a nil term, and on a term holding an invalid Base.
func Sum(terms ...*Expr) (*Expr, error) { return combine(Add, terms) }

// Product returns the canonical product of terms: products among the terms are flattened and the operands are
// sorted; sums stay as operands (no distributivity). It fails like Sum.
func Product(terms ...*Expr) (*Expr, error) { return combine(Mul, terms) }

func combine(op Op, terms []*Expr) (*Expr, error) {
	name := map[Op]string{Add: "Sum", Mul: "Product"}[op]
	if len(terms) < 2 {
		return nil, fmt.Errorf("grammar: %s needs at least two terms, got %d", name, len(terms))
	}
	var flat []*Expr
	for i, t := range terms {
		if t == nil {
			return nil, fmt.Errorf("grammar: %s: term %d is nil", name, i)
		}
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("grammar: %s: term %d: %w", name, i, err)
		}
		if t.op == op {
			flat = append(flat, t.terms...)
		} else {
			flat = append(flat, t)
		}
	}
	return newNode(op, flat), nil
}

// newNode sorts flat (operands already valid and flattened) and fills the cached string and level.
func newNode(op Op, flat []*Expr) *Expr {
	flat = slices.Clone(flat)
	slices.SortStableFunc(flat, compare)
	e := &Expr{op: op, terms: flat}
	var sb strings.Builder
	for i, t := range flat {
		if i > 0 {
			sb.WriteString(map[Op]string{Add: "+", Mul: "*"}[op])
		}
		if op == Mul && t.op == Add {
			sb.WriteString("(" + t.String() + ")")
		} else {
			sb.WriteString(t.String())
		}
		e.level += t.Level()
	}
	e.str = sb.String()
	return e
}

// errInvalidBase reports an Expr holding a Base outside PER..SE.
var errInvalidBase = errors.New("grammar: invalid base kernel")

// check reports whether e is well formed: valid bases and, for nodes, at least two operands. Exprs built by
// this package are always well formed except for NewBase of an invalid Base; the zero value is the leaf PER.
func (e *Expr) check() error {
	switch e.op {
	case Leaf:
		if e.fam != "" {
			return nil
		}
		if !e.base.valid() {
			return fmt.Errorf("%w: %v", errInvalidBase, e.base)
		}
		return nil
	case Add, Mul:
		if len(e.terms) < 2 {
			return fmt.Errorf("grammar: malformed expression with %d operands", len(e.terms))
		}
		for _, t := range e.terms {
			if t == nil {
				return errors.New("grammar: malformed expression with a nil operand")
			}
			if err := t.check(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("grammar: malformed expression with operator %d", int(e.op))
}

// compare is the canonical operand order: compound operands before leaves, leaves by Base (PER < LIN < RQ <
// SE), compound operands by their canonical strings.
func compare(a, b *Expr) int {
	ac, bc := a.op != Leaf, b.op != Leaf
	switch {
	case ac && !bc:
		return -1
	case !ac && bc:
		return 1
	case !ac:
		if a.base != b.base {
			return int(a.base) - int(b.base)
		}
		if c := strings.Compare(a.fam, b.fam); c != 0 {
			return c
		}
		if (a.dims == nil) != (b.dims == nil) { // a leaf on every column first
			if a.dims == nil {
				return -1
			}
			return 1
		}
		return slices.Compare(a.dims, b.dims)
	}
	return strings.Compare(a.String(), b.String())
}

// Op returns the operator at the root: Leaf, Add or Mul.
func (e *Expr) Op() Op {
	if e == nil {
		return Leaf
	}
	return e.op
}

// Base returns the base kernel of a Leaf (PER for a non-leaf, where it has no meaning).
func (e *Expr) Base() Base {
	if e == nil || e.op != Leaf {
		return PER
	}
	return e.base
}

// Terms returns a copy of the operands of a sum or product in canonical order, and nil for a Leaf.
func (e *Expr) Terms() []*Expr {
	if e == nil || e.op == Leaf {
		return nil
	}
	return slices.Clone(e.terms)
}

// String returns the canonical ASCII form, without spaces and with minimal parentheses (only a sum inside a
// product is parenthesised), e.g. "(PER+RQ)*LIN" or "LIN*RQ+PER". Parse(e.String()) gives back e.
func (e *Expr) String() string {
	switch {
	case e == nil:
		return "<nil>"
	case e.str == "" && e.op == Leaf: // the zero value
		return e.base.String()
	}
	return e.str
}

// Level returns the number of base-kernel occurrences (leaves) in e: 1 for a base kernel, 3 for PER+PER+SE or
// (PER+RQ)*LIN. The kernel space K_144 holds every expression of level at most 3 (Teng et al. 2020, Sec. 6.1).
func (e *Expr) Level() int {
	switch {
	case e == nil:
		return 0
	case e.op == Leaf:
		return 1
	}
	return e.level
}

// Equal reports whether e and o have the same canonical form, i.e. are equal up to associativity and
// commutativity of + and ×. Two nil expressions are equal.
func (e *Expr) Equal(o *Expr) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.String() == o.String()
}
