package grammar

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/gp"
)

// BuildConfig configures Expr.Kernel. Zero values mean defaults.
type BuildConfig struct {
	// InputDim is D (required, > 0).
	InputDim int
	// Name prefixes every hyperparameter's name (default "k"): leaf i of base b gets "<Name>.<i>.<b>" (b in
	// lower case) and the gp constructors append ".variance", ".lengthscales", ".period", ".alpha" or
	// ".variances".
	Name string
	// Variance is the initial overall signal variance (default 1; must be positive and finite).
	Variance float64
	// Lengthscales are the initial length-scales of SE, RQ and PER: nil means gp.DefaultLengthscale in every
	// dimension, one value means that value in every dimension, D values are used as given. The built kernels
	// are always ARD (one length-scale per dimension). Values must be positive and finite.
	Lengthscales []float64
	// Period is the initial PER period (default gp.DefaultPeriod; must be positive and finite).
	Period float64
	// Alpha is the initial RQ shape α (default gp.DefaultAlpha; must be positive and finite).
	Alpha float64
	// ARDLinear gives LIN one variance per dimension instead of one shared variance.
	ARDLinear bool
	// Inputs are the training inputs [N, InputDim] row-major (as the kernel will see them), or nil: families that
	// size themselves from the data read them (gp.KernelOptions.Inputs; a leaf with columns gets those columns).
	Inputs []float64
}

// builder carries the validated configuration and the running leaf index.
type builder struct {
	c    BuildConfig
	ls   []float64 // D length-scales
	leaf int
}

// Kernel builds the gp.Kernel of e: a leaf becomes its kernel, built through the kernel registry by name
// (a base kernel through families periodic, linear, rq and se, as gp.NewPeriodic, gp.NewLinear,
// gp.NewRationalQuadratic and gp.NewSquaredExp would: the forms of Teng et al. 2020, App. E.1; an error
// wrapping gp.ErrConfig if its family is not registered), a sum becomes gp.NewSum of its operands' kernels and
// a product gp.NewProduct; a leaf with input columns is its kernel built at the number of its columns (with
// the length-scales and Inputs of those columns) inside gp.NewActive.
//
// Initial variances follow build(e, v) with v = c.Variance: a leaf gets signal variance v (LIN: every variance
// v); a sum of n operands builds each with v/n; a product builds its first operand (canonical order) with v and
// every other operand with 1, and the variance Param of every leaf operand of a product other than the first is
// fixed (not trainable), since a product has only one overall scale. Leaf i (canonical print order) of base b
// names its Params "<c.Name>.<i>.<b>.…", e.g. (PER+RQ)*LIN gives k.0.per.*, k.1.rq.*, k.2.lin.variances.
//
// It fails, with an error wrapping gp.ErrConfig, on a nil or malformed e, InputDim ≤ 0, a Lengthscales length
// other than 0, 1 or InputDim, a negative, zero (Lengthscales only), NaN or infinite value, and an initial
// value the base-kernel constructor rejects (e.g. a leaf variance v/n at or below graph.DefaultPositiveFloor).
func (e *Expr) Kernel(c BuildConfig) (gp.Kernel, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: grammar: Kernel of a nil expression", gp.ErrConfig)
	}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("%w: grammar: Kernel of %v: %v", gp.ErrConfig, e, err)
	}
	if c.InputDim <= 0 {
		return nil, configErr("InputDim must be positive, got %d", c.InputDim)
	}
	if c.Name == "" {
		c.Name = "k"
	}
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"Variance", &c.Variance, 1}, {"Period", &c.Period, gp.DefaultPeriod}, {"Alpha", &c.Alpha, gp.DefaultAlpha}} {
		if !(*f.v >= 0) || math.IsInf(*f.v, 0) {
			return nil, configErr("%s must be positive and finite, got %v", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	b := &builder{c: c, ls: make([]float64, c.InputDim)}
	switch len(c.Lengthscales) {
	case 0:
		for i := range b.ls {
			b.ls[i] = gp.DefaultLengthscale
		}
	case 1:
		for i := range b.ls {
			b.ls[i] = c.Lengthscales[0]
		}
	case c.InputDim:
		copy(b.ls, c.Lengthscales)
	default:
		return nil, configErr("%d Lengthscales for InputDim %d (want none, 1 or %d)", len(c.Lengthscales), c.InputDim, c.InputDim)
	}
	for i, l := range b.ls {
		if !(l > 0) || math.IsInf(l, 0) {
			return nil, configErr("Lengthscales[%d] must be positive and finite, got %v", i, l)
		}
	}
	return b.build(e, c.Variance, false)
}

// leafErr wraps a base-kernel constructor's error (e.g. an initial value at or below the Positive floor) so
// that it also matches gp.ErrConfig.
func leafErr(name string, err error) error {
	if errors.Is(err, gp.ErrConfig) {
		return err
	}
	return fmt.Errorf("%w: grammar: Kernel: leaf %s: %w", gp.ErrConfig, name, err)
}

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: grammar: Kernel: "+format, append([]any{gp.ErrConfig}, args...)...)
}

// build returns the kernel of e with initial signal variance v; fixed freezes a leaf's variance (a leaf operand
// of a product other than the first).
func (b *builder) build(e *Expr, v float64, fixed bool) (gp.Kernel, error) {
	if !(v > 0) { // underflow of Variance/n
		return nil, configErr("initial variance of %v underflows to %v", e, v)
	}
	switch e.op {
	case Leaf:
		cols, err := b.columns(e)
		if err != nil {
			return nil, err
		}
		var k gp.Kernel
		if e.fam != "" {
			k, err = b.familyKernel(e.fam, fixed, cols)
		} else {
			k, err = b.leafKernel(e.base, v, fixed, cols)
		}
		if err != nil || e.dims == nil {
			return k, err
		}
		return gp.NewActive(k, b.c.InputDim, e.dims)
	case Add:
		ks := make([]gp.Kernel, len(e.terms))
		for i, t := range e.terms {
			k, err := b.build(t, v/float64(len(e.terms)), false)
			if err != nil {
				return nil, err
			}
			ks[i] = k
		}
		return gp.NewSum(ks...)
	default: // Mul (check has rejected anything else)
		ks := make([]gp.Kernel, len(e.terms))
		for i, t := range e.terms {
			vi, fi := v, false
			if i > 0 {
				vi, fi = 1, t.op == Leaf
			}
			k, err := b.build(t, vi, fi)
			if err != nil {
				return nil, err
			}
			ks[i] = k
		}
		return gp.NewProduct(ks...)
	}
}

// leafCols is what a leaf's kernel is built for: its input dimension, length-scales and training inputs (the
// leaf's columns when it has them, else all).
type leafCols struct {
	dim    int
	ls     []float64
	inputs []float64
}

// columns returns e's leafCols, or an error for a column outside [0, InputDim).
func (b *builder) columns(e *Expr) (leafCols, error) {
	d := b.c.InputDim
	if e.dims == nil {
		return leafCols{dim: d, ls: b.ls, inputs: b.c.Inputs}, nil
	}
	c := leafCols{dim: len(e.dims), ls: make([]float64, len(e.dims))}
	for i, j := range e.dims {
		if j >= d {
			return c, configErr("%v: column %d outside the %d input columns", e, j, d)
		}
		c.ls[i] = b.ls[j]
	}
	if n := len(b.c.Inputs); n > 0 && n%d == 0 {
		c.inputs = make([]float64, 0, n/d*len(e.dims))
		for r := 0; r < n; r += d {
			for _, j := range e.dims {
				c.inputs = append(c.inputs, b.c.Inputs[r+j])
			}
		}
	}
	return c, nil
}

// familyKernel builds a leaf outside the base set through its registered family (ARD, the family's initial
// values; Params "<Name>.<leaf>.<name>.…"). fixed freezes its variance Params (names ending in ".variance" or
// ".variances").
func (b *builder) familyKernel(name string, fixed bool, cols leafCols) (gp.Kernel, error) {
	f, ok := gp.LookupKernel(name)
	if !ok {
		return nil, configErr("kernel %q is not registered", name)
	}
	pname := fmt.Sprintf("%s.%d.%s", b.c.Name, b.leaf, name)
	b.leaf++
	k, err := f.New(gp.KernelOptions{InputDim: cols.dim, ARD: true, Name: pname, Inputs: cols.inputs})
	if err != nil {
		return nil, leafErr(pname, err)
	}
	if fixed {
		for _, q := range k.Params() {
			if strings.HasSuffix(q.Name(), ".variance") || strings.HasSuffix(q.Name(), ".variances") {
				q.SetTrainable(false)
			}
		}
	}
	return k, nil
}

// baseFamily names the registered kernel family of each base kernel.
var baseFamily = map[Base]string{SE: "se", RQ: "rq", PER: "periodic", LIN: "linear"}

// leafKernel builds a base-kernel leaf through its registered family (baseFamily; an error if it is not
// registered) and sets its initial values: signal variance v (LIN: every variance v, one per dimension if
// ARDLinear), the length-scales, period and α of the configuration. fixed freezes its variance.
func (b *builder) leafKernel(base Base, v float64, fixed bool, cols leafCols) (gp.Kernel, error) {
	name := fmt.Sprintf("%s.%d.%s", b.c.Name, b.leaf, strings.ToLower(base.String()))
	b.leaf++
	fam := baseFamily[base]
	f, ok := gp.LookupKernel(fam)
	if !ok {
		return nil, configErr("base kernel %v: kernel family %q is not registered", base, fam)
	}
	k, err := f.New(gp.KernelOptions{InputDim: cols.dim, ARD: base != LIN || b.c.ARDLinear, Name: name, Inputs: cols.inputs})
	if err != nil {
		return nil, leafErr(name, err)
	}
	for _, q := range k.Params() {
		var val []float64
		switch field := q.Name()[strings.LastIndex(q.Name(), ".")+1:]; field {
		case "variance", "variances":
			val = fill(q.Size(), v)
			if fixed {
				q.SetTrainable(false)
			}
		case "lengthscales":
			val = append([]float64(nil), cols.ls...)
		case "period":
			val = fill(q.Size(), b.c.Period)
		case "alpha":
			val = fill(q.Size(), b.c.Alpha)
		default:
			return nil, configErr("base kernel %v (family %q): unexpected Param %q", base, fam, q.Name())
		}
		if err := q.Set(val); err != nil {
			return nil, leafErr(name, err)
		}
	}
	return k, nil
}

func fill(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// LeafParam is what a Param name given by Expr.Kernel says about the Param: the leaf it belongs to (canonical
// print order), the leaf's base kernel and the field (the gp constructors' suffix: "variance", "variances",
// "lengthscales", "period" or "alpha").
type LeafParam struct {
	Leaf  int
	Base  Base
	Field string
}

// ParseParamName reads a Param name of the form "<Name>.<leaf>.<base>.<field>" that Expr.Kernel gives; ok is
// false for any other name. Name may itself contain dots.
func ParseParamName(name string) (p LeafParam, ok bool) {
	parts := strings.Split(name, ".")
	n := len(parts)
	if n < 4 {
		return p, false
	}
	leaf, err := strconv.Atoi(parts[n-3])
	if err != nil || leaf < 0 {
		return p, false
	}
	for b, s := range baseNames {
		if strings.ToLower(s) == parts[n-2] {
			return LeafParam{Leaf: leaf, Base: Base(b), Field: parts[n-1]}, true
		}
	}
	return p, false
}
