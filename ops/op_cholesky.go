package ops

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Cholesky returns the lower Cholesky factor L of the symmetrised input: L·Lᵀ = (A+Aᵀ)/2 (+ jitter·I), with a zero
// strictly upper triangle, computed by CholeskyLower with the jitter policy p (every evaluation is recorded in
// p.Stats when it is not nil).
//
// Shapes: a [n,n] -> [n,n], n ≥ 1. Errors: *ShapeError at construction for a non-square or non-matrix a; at run
// time *NonFiniteError (NaN/±Inf input) or *NotPDError (not positive definite after every retry), wrapped by the
// VM (see UnwrapVM).
//
// The gradient is the symmetric one of Murray (2016), "Differentiation of the Cholesky decomposition",
// arXiv:1602.07527 (see CholeskyBackward): it is the gradient with respect to every entry of the full input A,
// consistent with the forward's symmetrisation.
//
// The op's hash includes the effective Initial and MaxTries (they change the result) and the identity of p.Stats
// (two nodes recording into different Stats must not be merged by the graph).
func Cholesky(a *G.Node, p JitterPolicy) (*G.Node, error) {
	return apply(cholesky{p: p}, a)
}

type cholesky struct{ p JitterPolicy }

func (k cholesky) name() string { return "Cholesky" }
func (k cholesky) params(w io.Writer) {
	init, retries := k.p.normalized()
	fmt.Fprintf(w, "jitter=%s,retries=%d,stats=%p", strconv.FormatFloat(init, 'g', -1, 64), retries, k.p.Stats)
}
func (k cholesky) arity() int   { return 1 }
func (k cholesky) diff() []bool { return []bool{true} }

func (k cholesky) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if err := squareShape("Cholesky", "a", in[0]); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

// squareShape returns a *ShapeError unless s is [n,n] with n ≥ 1.
func squareShape(op, what string, s tensor.Shape) error {
	if len(s) != 2 || s[0] != s[1] || s[0] < 1 {
		return &ShapeError{Op: op, Want: what + " a square [n,n] matrix (n ≥ 1)", Got: fmt.Sprintf("%v", s)}
	}
	return nil
}

func (k cholesky) forward(in []arg, out []float64) error {
	_, err := CholeskyLower(out, in[0].data, in[0].rows(), k.p)
	return err
}

func (k cholesky) backward(_ int, _ []arg, out arg, g arg, dst []float64) error {
	CholeskyBackward(dst, out.data, g.data, out.rows())
	return nil
}

// UnwrapVM returns the error a gorgonia VM wraps. gorgonia v0.9.18's TapeMachine returns run-time op errors
// inside an unexported vmContextualError struct that has no Unwrap method, so errors.As/errors.Is cannot see the
// op's typed error (*NotPDError, *NonFiniteError, …) through it; UnwrapVM strips every such layer (found through
// its Err() method) so that errors.As(ops.UnwrapVM(err), &target) works. Other errors are returned unchanged.
func UnwrapVM(err error) error {
	for err != nil {
		var ctx interface{ Err() error }
		if !errors.As(err, &ctx) {
			return err
		}
		inner := ctx.Err()
		if inner == nil || inner == err {
			return err
		}
		err = inner
	}
	return err
}
