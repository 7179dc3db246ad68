package zoo

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// DefaultKernel is the kernel of TrainCustom when CustomConfig.Kernel is empty: SE with one length-scale per
// input (SE-ARD).
const DefaultKernel = "SE"

// ParseKernel reads a kernel expression as `gpzoo train --kernel` takes it: a registered kernel name
// (gp.KernelFamilies, e.g. "matern52") or an expression of gp/grammar over registered names ("se+per*lin"); ""
// means DefaultKernel. Failures are the grammar's *grammar.SyntaxError (with the byte position).
func ParseKernel(s string) (*grammar.Expr, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultKernel
	}
	return grammar.Parse(s)
}

// newKernel builds the kernel of e (nil: DefaultKernel) for inputs of dimension dim: every layer of every
// TrainCustom family (and the deep-GP entries) gets its kernel here. Lengthscale-based kernels are ARD, LIN has
// one variance per dimension. The single leaf SE is built as the zoo always built it (gp.NewSquaredExp, Params
// "<prefix>.se.*", or the kernel's default names for prefix ""), so that default runs are unchanged; any other
// expression goes through Expr.Kernel with Params "<prefix>.<leaf>.<name>.*" (prefix "" gives "k"), unique
// when a kernel occurs twice. variance and ls are the initial signal variance and length-scale (0: 1), which
// the grammar's base kernels take; other registered families start at their own defaults. inputs are the
// training inputs [N, dim] row-major as the kernel sees them (nil where unknown: a deep GP's inner layers), which
// families that size themselves from the data read (coregion: its number of tasks).
func newKernel(e *grammar.Expr, prefix string, dim int, variance, ls float64, inputs []float64) (gp.Kernel, error) {
	variance, ls = orOne(variance), orOne(ls)
	if e == nil || (e.Op() == grammar.Leaf && e.Family() == "" && e.Base() == grammar.SE && e.Dims() == nil) {
		lss := make([]float64, dim)
		for i := range lss {
			lss[i] = ls
		}
		name := ""
		if prefix != "" {
			name = prefix + ".se"
		}
		return gp.NewSquaredExp(gp.KernelConfig{Name: name, InputDim: dim, Variance: variance, Lengthscales: lss})
	}
	k, err := e.Kernel(grammar.BuildConfig{InputDim: dim, Name: prefix, Variance: variance, Lengthscales: []float64{ls}, ARDLinear: true, Inputs: inputs})
	if err != nil {
		return nil, fmt.Errorf("%w: kernel %v: %w", ErrBadCustom, e, err)
	}
	return k, nil
}

// rawRows returns x's values row-major (its own storage when contiguous).
func rawRows(x *mat.Dense) []float64 {
	if x == nil {
		return nil
	}
	r, c := x.Dims()
	if raw := x.RawMatrix(); raw.Stride == c {
		return raw.Data[:r*c]
	}
	return mat.DenseCopyOf(x).RawMatrix().Data
}

// keepCategorical leaves the categorical input columns of c's kernel (gp.CategoricalInputs: a coregion kernel's
// task column) out of std's standardisation (mean 0, deviation 1: the category indices pass unchanged, in
// training and in every prediction through the model file) after checking that every input row of rows, in its
// own units (the test rows too; nil matrices are skipped), holds valid indices there for the kernel built on raw,
// the training rows (a coregion kernel counts its tasks in them). It returns those columns; a kernel without
// any leaves std as it is.
func keepCategorical(c CustomConfig, raw *mat.Dense, std *datasets.Standardizer, rows ...*mat.Dense) ([]gp.CategoricalInput, error) {
	expr, err := ParseKernel(c.Kernel)
	if err != nil {
		return nil, fmt.Errorf("%w: kernel: %w", ErrBadCustom, err)
	}
	_, dim := raw.Dims()
	k, err := newKernel(expr, "", dim, c.KernelVariance, c.KernelLengthscale, rawRows(raw))
	if err != nil {
		return nil, err
	}
	cats := gp.CategoricalInputs(k)
	for _, x := range rows {
		if x == nil {
			continue
		}
		if err := gp.CheckCategorical("kernel "+expr.String(), rawRows(x), dim, cats); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
		}
	}
	for _, cat := range cats {
		std.XMean[cat.Column], std.XStd[cat.Column] = 0, 1
	}
	return cats, nil
}

// snapInducing rounds the categorical columns (cats) of the inducing inputs among ps (Params named as
// inducingSuffixes, of shape [M, dim]) to the nearest category index: a k-means centre of rows from several tasks
// averages their indices, which a coregion kernel refuses. The kernel's gradient there is zero, so they stay
// indices while the other columns train.
func snapInducing(ps []*graph.Param, cats []gp.CategoricalInput, dim int) error {
	for _, p := range ps {
		if s := p.Shape(); len(cats) == 0 || len(s) != 2 || s[1] != dim || !slices.ContainsFunc(inducingSuffixes, func(x string) bool { return strings.HasSuffix(p.Name(), x) }) {
			continue
		}
		v := p.Value()
		for i := 0; i < len(v); i += dim {
			for _, c := range cats {
				v[i+c.Column] = math.Min(math.Max(math.Round(v[i+c.Column]), 0), float64(c.Levels-1))
			}
		}
		if err := p.Set(v); err != nil {
			return err
		}
	}
	return nil
}

// ignoresInputs reports whether k's covariances do not depend on the inputs' values (white, constant, sums and
// products of them): the inducing inputs of a model with such a kernel do not affect its loss, and are fixed.
func ignoresInputs(k gp.Kernel) bool {
	d := k.InputDim()
	x1, x2 := make([]float64, 3*d), make([]float64, 2*d)
	for i := range x1 {
		x1[i] = 0.37*float64(i) - 0.5
	}
	for i := range x2 {
		x2[i] = 0.5 - 0.29*float64(i)
	}
	p1, err1 := graph.NewParam("zoo.x1", x1, nil, 3, d)
	p2, err2 := graph.NewParam("zoo.x2", x2, nil, 2, d)
	if err1 != nil || err2 != nil {
		return false
	}
	g := graph.New(graph.Options{})
	a, b := g.Param(p1), g.Param(p2)
	loss := g.Add(g.Add(g.Sum(k.K(a, b)), g.Sum(k.K(a, a))), g.Sum(k.KDiag(a)))
	prog, err := g.Compile(loss, nil)
	if err != nil {
		return errors.Is(err, graph.ErrNotInLoss)
	}
	prog.Close()
	return false
}

// inducingSuffixes end the names of the inducing-input Params of every layer family and SGPR.
var inducingSuffixes = []string{".Z", ".Zalpha", ".Zbeta", ".Zgamma"}

// fixInducing freezes the inducing inputs among ps and reports whether there were any.
func fixInducing(ps []*graph.Param) bool {
	fixed := false
	for _, p := range ps {
		for _, s := range inducingSuffixes {
			if strings.HasSuffix(p.Name(), s) {
				p.SetTrainable(false)
				fixed = true
			}
		}
	}
	return fixed
}
