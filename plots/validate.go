package plots

import (
	"math"
	"sort"

	"gonum.org/v1/plot/plotter"
)

// checkLen returns a *ShapeError unless got == want.
func checkLen(fn, name string, got, want int) error {
	if got != want {
		return &ShapeError{Func: fn, Name: name, Want: want, Got: got}
	}
	return nil
}

// checkAtLeast returns a *ShapeError when got < min.
func checkAtLeast(fn, name string, got, min int) error {
	if got < min {
		return &ShapeError{Func: fn, Name: name, Want: min, Got: got, Min: true}
	}
	return nil
}

// checkFinite returns a *NonFiniteError for the first NaN or ±Inf in v, reported as row i of name (column -1).
func checkFinite(fn, name string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &NonFiniteError{Func: fn, Name: name, Row: i, Col: -1, Value: x}
		}
	}
	return nil
}

// order returns the permutation that sorts xs ascending; ties keep their input order.
func order(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	return idx
}

// xysOrdered pairs xs[idx[k]] with ys[idx[k]] for k = 0, 1, ….
func xysOrdered(xs, ys []float64, idx []int) plotter.XYs {
	pts := make(plotter.XYs, len(idx))
	for k, i := range idx {
		pts[k].X, pts[k].Y = xs[i], ys[i]
	}
	return pts
}

// xysOf pairs xs[i] with ys[i] in input order.
func xysOf(xs, ys []float64) plotter.XYs {
	pts := make(plotter.XYs, len(xs))
	for i := range xs {
		pts[i].X, pts[i].Y = xs[i], ys[i]
	}
	return pts
}
