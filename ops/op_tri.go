package ops

import (
	"fmt"
	"io"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Triangular parts of matrices: one kernel triK for Tril (a mask) and LowerTriPositive (mask plus a positive
// transform of the diagonal).

// triK keeps the entries x_ij with j − i ≤ k and zeroes the others. With positive set (square input, k = −1 for
// the off-diagonal part) the diagonal is softplus(x_ii) + floor.
type triK struct {
	k        int
	positive bool
	floor    float64
}

func (t triK) name() string {
	if t.positive {
		return "LowerTriPositive"
	}
	return "Tril"
}
func (t triK) params(w io.Writer) {
	if t.positive {
		fmt.Fprintf(w, "floor=%s", fmtFloat(t.floor))
		return
	}
	fmt.Fprintf(w, "k=%d", t.k)
}
func (triK) arity() int   { return 1 }
func (triK) diff() []bool { return []bool{true} }
func (t triK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s := in[0]
	if len(s) != 2 {
		return nil, &ShapeError{Op: t.name(), Want: "a matrix", Got: fmt.Sprint(s)}
	}
	if t.positive && s[0] != s[1] {
		return nil, &ShapeError{Op: t.name(), Want: "a square matrix", Got: fmt.Sprint(s)}
	}
	return s.Clone(), nil
}

// keep returns the columns [0, hi) of row r that are kept (c − r ≤ k), hi within [0, m].
func (t triK) keep(r, m int) int { return min(m, max(0, r+t.k+1)) }

// forward copies the kept part of each row and zeroes the rest, row by row (no index arithmetic per entry).
func (t triK) forward(in []arg, out []float64) error {
	x := in[0]
	m := x.cols()
	for r := 0; m > 0 && r*m < len(out); r++ {
		src, dst := x.data[r*m:r*m+m], out[r*m:r*m+m]
		hi := t.keep(r, m)
		copy(dst[:hi], src[:hi])
		clear(dst[hi:])
		if t.positive {
			dst[r] = SoftplusFloat(src[r]) + t.floor
		}
	}
	return nil
}

func (t triK) backward(_ int, in []arg, _ arg, g arg, dst []float64) error {
	x := in[0]
	m := x.cols()
	for r := 0; m > 0 && r*m < len(dst); r++ {
		src, d := g.data[r*m:r*m+m], dst[r*m:r*m+m]
		hi := t.keep(r, m)
		copy(d[:hi], src[:hi])
		clear(d[hi:])
		if t.positive {
			d[r] = src[r] * stableSigmoid(x.data[r*m+r])
		}
	}
	return nil
}

// Tril returns the lower triangle of x: entries x_ij with j − i ≤ k are kept, the others zeroed. k = 0 keeps the
// diagonal, k = −1 gives the strictly lower part, k = 1 adds the first superdiagonal. Shapes: [n,m] → [n,m].
func Tril(x *G.Node, k int) (*G.Node, error) { return apply(triK{k: k}, x) }

// LowerTriPositive returns the lower-triangular matrix L with L_ij = u_ij below the diagonal, L_ii =
// softplus(u_ii) + floor, and zeros above: the transform of an unconstrained parameter u to a Cholesky factor
// with diagonal > floor. floor must be finite and ≥ 0. LowerTriPositiveInverse inverts it. Shapes: [n,n] → [n,n].
func LowerTriPositive(u *G.Node, floor float64) (*G.Node, error) {
	if !(floor >= 0) || math.IsInf(floor, 1) {
		return nil, fmt.Errorf("ops: LowerTriPositive: floor %v must be finite and ≥ 0", floor)
	}
	return apply(triK{k: -1, positive: true, floor: floor}, u)
}

// LowerTriPositiveInverse returns the unconstrained u (row-major n×n, strictly upper part zero) with
// LowerTriPositive(u, floor) = l, for a row-major n×n lower-triangular l. It returns a *ShapeError if
// len(l) ≠ n·n, a *NonFiniteError for a NaN or ±Inf entry, and an error if the strictly upper part of l is not
// zero or a diagonal entry does not exceed floor.
func LowerTriPositiveInverse(l []float64, n int, floor float64) ([]float64, error) {
	if n <= 0 || len(l) != n*n {
		return nil, &ShapeError{Op: "LowerTriPositiveInverse", Want: fmt.Sprintf("%d×%d = %d entries", n, n, n*n), Got: fmt.Sprintf("%d", len(l))}
	}
	if err := CheckFinite("LowerTriPositiveInverse", l, n); err != nil {
		return nil, err
	}
	u := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := l[i*n+j]
			switch {
			case j < i:
				u[i*n+j] = v
			case j > i:
				if v != 0 {
					return nil, fmt.Errorf("ops: LowerTriPositiveInverse: entry (%d,%d) = %v above the diagonal is not zero", i, j, v)
				}
			default:
				d, err := SoftplusInverse(v, floor)
				if err != nil {
					return nil, fmt.Errorf("ops: LowerTriPositiveInverse: diagonal entry %d: %w", i, err)
				}
				u[i*n+i] = d
			}
		}
	}
	return u, nil
}
