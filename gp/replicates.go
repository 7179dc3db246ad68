package gp

import (
	"encoding/binary"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Replicates describes exact-GP training data whose repeated inputs were collapsed (Collapse): row j of the data
// holds the mean ȳ_j of the Counts[j] targets observed at input x_j. For the Gaussian likelihood this loses
// nothing: the n_j rows of one input are, as a function of f_j,
//
//	∏_k N(y_jk | f_j, σ²) = N(ȳ_j | f_j, σ²/n_j) · (2πσ²)^−(n_j−1)/2 · n_j^−½ · exp(−S_j/(2σ²)),
//
// S_j = Σ_k (y_jk − ȳ_j)², so the posterior and the predictions are those of the rows at their means with noise
// σ²/n_j, and the log marginal likelihood is theirs plus the f-free factors. With S = diag(√n), K + σ²diag(1/n) =
// S⁻¹(SKS + σ²I)S⁻¹, and the n_j^−½ factors cancel log|S⁻²|: the exact GPs compute
//
//	log p(y) = log N(S(ȳ − m) | 0, SKS + σ²I) − (P/2)·Σ_j(n_j − 1)·log(2πσ²) − Σ_p Scatter_p/(2σ²),
//
// a homoscedastic system in the scaled kernel SKS (Rasmussen & Williams 2006, eq. 2.30, per input).
type Replicates struct {
	// Counts are n_j ≥ 1, one per row of the collapsed data (whole numbers).
	Counts []float64 `json:"counts"`
	// Scatter is Σ_j S_jp per output p: the squared deviations of the targets from their input's mean.
	Scatter []float64 `json:"scatter"`
}

// Check returns an error unless r describes n rows of p outputs: n counts, each a whole number ≥ 1, and p finite
// scatters ≥ 0.
func (r *Replicates) Check(op string, n, p int) error {
	if len(r.Counts) != n || len(r.Scatter) != p {
		return configErr("%s: replicates of %d rows and %d outputs for data of %d rows and %d outputs", op, len(r.Counts), len(r.Scatter), n, p)
	}
	for j, c := range r.Counts {
		if !(c >= 1) || math.IsInf(c, 0) || c != math.Trunc(c) {
			return configErr("%s: replicate count %v of row %d is not a whole number ≥ 1", op, c, j)
		}
	}
	for k, s := range r.Scatter {
		if !(s >= 0) || math.IsInf(s, 0) {
			return configErr("%s: replicate scatter %v of output %d is not finite and ≥ 0", op, s, k)
		}
	}
	return nil
}

// Scales returns s_j = √n_j, the diagonal of S.
func (r *Replicates) Scales() []float64 {
	s := make([]float64, len(r.Counts))
	for j, c := range r.Counts {
		s[j] = math.Sqrt(c)
	}
	return s
}

// Observations returns Σ n_j, the rows collapsed (0 for nil Replicates).
func (r *Replicates) Observations() int {
	if r == nil {
		return 0
	}
	return len(r.Counts) + int(r.Extra())
}

// Extra returns the sum of n_j − 1 over the rows: the rows the collapse removed.
func (r *Replicates) Extra() float64 {
	e := 0.0
	for _, c := range r.Counts {
		e += c - 1
	}
	return e
}

// ScatterSum returns Σ_p Scatter_p.
func (r *Replicates) ScatterSum() float64 {
	s := 0.0
	for _, v := range r.Scatter {
		s += v
	}
	return s
}

// Collapsed is training data with its repeated inputs collapsed (Collapse): X holds each distinct input once, in
// the order of its first row, Y the mean of its targets, and Counts and RowScatter (S_jp = Σ_k (y_jkp − ȳ_jp)²,
// [m,P] row-major) what Replicates keeps of the rest. N is the number of rows collapsed.
type Collapsed struct {
	N          int
	X, Y       *mat.Dense
	Counts     []float64
	RowScatter []float64
}

// Collapse groups the rows of x [N,D] and y [N,P] by input (equal bit for bit) and returns the collapsed data
// and whether any input repeats (when none does, c holds copies of x and y with counts 1). The means and
// scatters are computed by Welford's updates, in row order.
func Collapse(x, y *mat.Dense) (c *Collapsed, repeats bool, err error) {
	n, d := x.Dims()
	ny, p := y.Dims()
	if ny != n {
		return nil, false, configErr("Collapse: x has %d rows, y %d", n, ny)
	}
	group := make(map[string]int, n)
	key := make([]byte, 0, 8*d)
	of := make([]int, n)
	var first []int
	for i := range n {
		key = AppendInputKey(key[:0], x.RawRowView(i))
		j, ok := group[string(key)]
		if !ok {
			j = len(first)
			group[string(key)] = j
			first = append(first, i)
		}
		of[i] = j
	}
	m := len(first)
	c = &Collapsed{N: n, X: mat.NewDense(m, d, nil), Y: mat.NewDense(m, p, nil), Counts: make([]float64, m), RowScatter: make([]float64, m*p)}
	for j, i := range first {
		c.X.SetRow(j, x.RawRowView(i))
	}
	ym := c.Y.RawMatrix().Data
	for i := range n {
		j := of[i]
		c.Counts[j]++
		for k := range p {
			v := y.At(i, k)
			delta := v - ym[j*p+k]
			ym[j*p+k] += delta / c.Counts[j]
			c.RowScatter[j*p+k] += delta * (v - ym[j*p+k])
		}
	}
	return c, m < n, nil
}

// AppendInputKey appends to dst the key Collapse groups rows by: the bits of each value of the input row, so
// that two rows have equal keys exactly when they are equal bit for bit (as map keys: string(key)).
func AppendInputKey(dst []byte, row []float64) []byte {
	for _, v := range row {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	return dst
}

// Rows returns the collapsed rows idx of c (in that order) and their Replicates.
func (c *Collapsed) Rows(idx []int) (x, y *mat.Dense, r *Replicates, err error) {
	m, d := c.X.Dims()
	_, p := c.Y.Dims()
	x, y = mat.NewDense(len(idx), d, nil), mat.NewDense(len(idx), p, nil)
	r = &Replicates{Counts: make([]float64, len(idx)), Scatter: make([]float64, p)}
	for k, j := range idx {
		if j < 0 || j >= m {
			return nil, nil, nil, fmt.Errorf("gp: Collapsed.Rows: row %d of %d", j, m)
		}
		x.SetRow(k, c.X.RawRowView(j))
		y.SetRow(k, c.Y.RawRowView(j))
		r.Counts[k] = c.Counts[j]
		for q := range p {
			r.Scatter[q] += c.RowScatter[j*p+q]
		}
	}
	return x, y, r, nil
}

// Replicates returns the Replicates of all of c's rows.
func (c *Collapsed) Replicates() *Replicates {
	_, p := c.Y.Dims()
	r := &Replicates{Counts: append([]float64(nil), c.Counts...), Scatter: make([]float64, p)}
	for k, v := range c.RowScatter {
		r.Scatter[k%p] += v
	}
	return r
}
