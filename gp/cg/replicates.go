package cg

import (
	"fmt"

	"github.com/gpzoo/gpzoo/ops"
)

// scaled is the kernel operator SKS of a base operator K and S = diag(s): the kernel of collapsed replicates
// (gp.Replicates, s_j = √n_j), whose system SKS + σ²I the solver then sees as a homoscedastic one. Products,
// diagonal, rows and the gradients' contractions pass through the base, their vectors scaled.
type scaled struct {
	base ops.KernelOperator
	s    []float64
}

var _ ops.KernelOperator = (*scaled)(nil)

func (o *scaled) Bind(x []float64, n, d int, hyper [][]float64) error {
	if n != len(o.s) {
		return fmt.Errorf("%w: gp/cg: %d training rows for %d replicate counts", ops.ErrShape, n, len(o.s))
	}
	return o.base.Bind(x, n, d, hyper)
}

func (o *scaled) HyperSizes() []int { return o.base.HyperSizes() }

// rows returns a copy of v [n,c] with row i multiplied by s_i.
func (o *scaled) rows(v []float64, c int) []float64 {
	out := append([]float64(nil), v...)
	scaleRows(out, c, o.s)
	return out
}

func (o *scaled) Mul(v []float64, c int, out []float64) error {
	if err := o.base.Mul(o.rows(v, c), c, out); err != nil {
		return err
	}
	scaleRows(out, c, o.s)
	return nil
}

func (o *scaled) Diag(out []float64) error {
	if err := o.base.Diag(out); err != nil {
		return err
	}
	for i, si := range o.s {
		out[i] *= si * si
	}
	return nil
}

func (o *scaled) Row(i int, out []float64) error {
	if err := o.base.Row(i, out); err != nil {
		return err
	}
	for j, sj := range o.s {
		out[j] *= o.s[i] * sj
	}
	return nil
}

func (o *scaled) BilinearGrad(a, b []float64, c int, dst [][]float64) error {
	return o.base.BilinearGrad(o.rows(a, c), o.rows(b, c), c, dst)
}

func (o *scaled) PivotGrad(piv []int, u, w []float64, dst [][]float64) error {
	k := len(piv)
	us, ws := make([]float64, len(u)), make([]float64, len(w))
	for i, si := range o.s {
		for p, j := range piv {
			us[i*k+p] = u[i*k+p] * si * o.s[j]
		}
	}
	for q, i := range piv {
		for p, j := range piv {
			ws[q*k+p] = w[q*k+p] * o.s[i] * o.s[j]
		}
	}
	return o.base.PivotGrad(piv, us, ws, dst)
}

// String is the base's description, when it has one.
func (o *scaled) String() string {
	if s, ok := o.base.(fmt.Stringer); ok {
		return s.String()
	}
	return "kernel products"
}

// scaleRows multiplies row i of v [len(s),c] by s_i in place (nothing when s is nil).
func scaleRows(v []float64, c int, s []float64) {
	for i, si := range s {
		for j := i * c; j < (i+1)*c; j++ {
			v[j] *= si
		}
	}
}
