package ops

import (
	"errors"
	"fmt"
)

// Sentinel errors of package ops. Typed errors below unwrap to them, so callers can test with errors.Is.
var (
	// ErrShape reports operands whose shapes do not fit the op.
	ErrShape = errors.New("ops: shape mismatch")
	// ErrNotPD reports a matrix that stayed not positive definite after every jitter retry.
	ErrNotPD = errors.New("ops: matrix not positive definite")
	// ErrNonFinite reports a NaN or ±Inf where a finite value is required.
	ErrNonFinite = errors.New("ops: non-finite value")
)

// ShapeError is returned when an op's operands have shapes it cannot take.
type ShapeError struct {
	Op   string // the op that refused the operands
	Want string // what it needs, in words
	Got  string // what it was given
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("ops: %s: shape mismatch: want %s, got %s", e.Op, e.Want, e.Got)
}

// Unwrap returns ErrShape.
func (e *ShapeError) Unwrap() error { return ErrShape }

// NonFiniteError names the first non-finite entry found in a matrix or vector.
// Row and Col are 0-based; for a vector Col is 0.
type NonFiniteError struct {
	Where    string // what was being checked, e.g. "Cholesky input"
	Row, Col int
	Value    float64
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("ops: %s: non-finite value %v at row %d, column %d (0-based)", e.Where, e.Value, e.Row, e.Col)
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// NotPDError reports that a Cholesky factorisation failed even after adding jitter.
type NotPDError struct {
	N         int     // order of the matrix
	MaxJitter float64 // the largest jitter that was added to the diagonal (0 when no retry was allowed)
	Tries     int     // factorisations attempted, the first (unjittered) one included
}

func (e *NotPDError) Error() string {
	return fmt.Sprintf("ops: %d×%d matrix not positive definite after %d tries (largest jitter %g)", e.N, e.N, e.Tries, e.MaxJitter)
}

// Unwrap returns ErrNotPD.
func (e *NotPDError) Unwrap() error { return ErrNotPD }

// firstNonFinite returns the position of the first non-finite entry of the row-major r×c matrix a, or ok=false.
func firstNonFinite(a []float64, c int) (row, col int, v float64, ok bool) {
	for i, x := range a {
		if x-x != 0 { // NaN or ±Inf
			return i / c, i % c, x, true
		}
	}
	return 0, 0, 0, false
}

// CheckFinite returns a *NonFiniteError naming the first NaN or ±Inf of the row-major matrix a with cols columns.
func CheckFinite(where string, a []float64, cols int) error {
	if cols <= 0 {
		cols = 1
	}
	if r, c, v, bad := firstNonFinite(a, cols); bad {
		return &NonFiniteError{Where: where, Row: r, Col: c, Value: v}
	}
	return nil
}

// ErrNotConverged reports an iterative method that stopped at its iteration limit before converging: the sentinel
// of ConvergenceError (Laplace's Newton iterations, EP's sweeps) and NotConvergedError (conjugate gradients).
var ErrNotConverged = errors.New("ops: not converged")

// ConvergenceError reports an iterative approximation of an exact GP's posterior (the Laplace approximation's
// Newton iterations, EP's sweeps) that did not converge: after Iters iterations its change was still Change, above
// the tolerance Tol (or, for Laplace, its line search could not improve the objective).
type ConvergenceError struct {
	Method string  // "Laplace" or "EP"
	Iters  int     // iterations (sweeps) run
	Change float64 // the last convergence measure
	Tol    float64 // the tolerance it had to reach
	Reason string  // what stopped it, in words
}

func (e *ConvergenceError) Error() string {
	return fmt.Sprintf("ops: %s did not converge after %d iterations: change %.3g, tolerance %.3g (%s)", e.Method, e.Iters, e.Change, e.Tol, e.Reason)
}

// Unwrap returns ErrNotConverged.
func (e *ConvergenceError) Unwrap() error { return ErrNotConverged }
