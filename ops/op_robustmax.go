package ops

import (
	"errors"
	"fmt"
	"io"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Robust-max multiclass likelihood (Hernández-Lobato, Hernández-Lobato & Dupont 2011; MATH.md §4).
//
// p(y=k | f) = 1−ε if k = argmax f, else ε/(K−1). Under q(f) = Π_j N(μ_j, v_j),
//
//	E_q[log p(y|f)] = P·log(1−ε) + (1−P)·log(ε/(K−1)),
//	P = P(argmax f = y) = ∫ N(u; μ_y, v_y) Π_{j≠y} Φ((u − μ_j)/√v_j) du
//	  ≈ Σ_i (w_i/√π) Π_{j≠y} Φ((u_i − μ_j)/√v_j),  u_i = μ_y + √(2v_y)·x_i,
//
// with Gauss–Hermite nodes x_i and weights w_i for the weight e^{−x²}. The product is evaluated as
// exp(Σ_{j≠y} log Φ(z_ij)), so many small factors (large K, a label far below the others) do not underflow one by
// one, and the gradient is that of the quadrature sum itself (differentiated under the sum), so it agrees with
// finite differences of the forward value to rounding.

// ErrLabel reports a class label that is not an integer in 0..K−1.
var ErrLabel = errors.New("ops: class label out of range")

// RobustMaxVarFloor is the smallest latent variance the robust-max op uses: v is replaced by
// max(v, RobustMaxVarFloor) (and the gradient with respect to a clamped v is 0). A variance from a layer can
// round to 0 or slightly below at an inducing input; √v and 1/√v need a positive value.
const RobustMaxVarFloor = 1e-12

// maxRobustMaxPoints bounds the number of quadrature points (gonum computes nodes for any n; beyond a few
// hundred the weights of the outer nodes underflow and nothing is gained).
const maxRobustMaxPoints = 1000

// robustMaxRule returns the cached Gauss–Hermite rule of gausshermite.go: nodes x and weights w/√π (Σ w = 1).
// points has been validated by checkRobustMaxConsts.
func robustMaxRule(points int) (x, w []float64, err error) {
	r, err := gaussHermiteRule(points)
	if err != nil {
		return nil, nil, err
	}
	return r.x, r.w, nil
}

func checkRobustMaxConsts(name string, eps float64, points int) error {
	if !(eps > 0 && eps < 1) {
		return fmt.Errorf("ops: %s: epsilon %v must lie in (0, 1)", name, eps)
	}
	if points < 1 || points > maxRobustMaxPoints {
		return fmt.Errorf("ops: %s: %d quadrature points, want 1..%d", name, points, maxRobustMaxPoints)
	}
	return nil
}

// label returns the class index stored in y (a float64 holding an integer), or an ErrLabel error.
func label(op string, row int, y float64, k int) (int, error) {
	if !(y >= 0 && y < float64(k)) || y != math.Trunc(y) {
		return 0, fmt.Errorf("%w: %s: row %d: label %v is not an integer in 0..%d", ErrLabel, op, row, y, k-1)
	}
	return int(y), nil
}

// robustMaxRow returns the quadrature value of P(argmax f = y) for one row with means mu and variances v
// (clamped at RobustMaxVarFloor) on the rule (x, w). When dmu and dv are non-nil it also writes ∂P/∂μ and ∂P/∂v
// into them (len K each, overwritten).
//
// With z_ij = (u_i − μ_j)/√v_j, T_i = w_i·Π_{j≠y} Φ(z_ij) and r_ij = φ(z_ij)/Φ(z_ij):
//
//	∂P/∂μ_j = −Σ_i T_i r_ij/√v_j,            ∂P/∂v_j = −Σ_i T_i r_ij z_ij/(2v_j)       (j ≠ y)
//	∂P/∂μ_y = Σ_i T_i Σ_{j≠y} r_ij/√v_j,     ∂P/∂v_y = Σ_i T_i Σ_{j≠y} r_ij/√v_j · x_i/√(2v_y)
//
// (u_i depends on μ_y with slope 1 and on v_y with slope x_i/√(2v_y)).
// expUnderflow is the log below which math.Exp returns 0.
const expUnderflow = -746

func robustMaxRow(mu, v []float64, y int, x, w []float64, dmu, dv []float64) float64 {
	k := len(mu)
	grad := dmu != nil
	if grad {
		clear(dmu)
		clear(dv)
	}
	vy := math.Max(v[y], RobustMaxVarFloor)
	sy := math.Sqrt(2 * vy)
	p := 0.0
	for i, xi := range x {
		u := mu[y] + sy*xi
		l := 0.0
		for j := 0; j < k; j++ {
			if j == y {
				continue
			}
			l += LogPhiFloat((u - mu[j]) / math.Sqrt(math.Max(v[j], RobustMaxVarFloor)))
			if l < expUnderflow { // e^l is 0 in float64: the node contributes nothing
				break
			}
		}
		t := w[i] * math.Exp(l)
		p += t
		if !grad || t == 0 {
			continue
		}
		s := 0.0
		for j := 0; j < k; j++ {
			if j == y {
				continue
			}
			vj := math.Max(v[j], RobustMaxVarFloor)
			sj := math.Sqrt(vj)
			z := (u - mu[j]) / sj
			a := t * logPhiDeriv(z) / sj
			dmu[j] -= a
			if v[j] >= RobustMaxVarFloor {
				dv[j] -= a * z / (2 * sj)
			}
			s += a
		}
		dmu[y] += s
		if v[y] >= RobustMaxVarFloor {
			dv[y] += s * xi / sy
		}
	}
	return p
}

// robustMaxK is the kernel of RobustMaxVE: inputs mu [N,K], v [N,K], y [N,1] (or [N]); output [N].
type robustMaxK struct {
	eps    float64
	points int
}

func (k robustMaxK) name() string { return "RobustMaxVE" }
func (k robustMaxK) params(w io.Writer) {
	fmt.Fprintf(w, "eps=%s,points=%d", fmtFloat(k.eps), k.points)
}
func (robustMaxK) arity() int   { return 3 }
func (robustMaxK) diff() []bool { return []bool{true, true, false} }

func (k robustMaxK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return classifyShape(k.name(), in[0], in[1], in[2])
}

// classifyShape checks mu, v [N,K] (K ≥ 2) and y [N,1] or [N], and returns the output shape [N].
func classifyShape(op string, mu, v, y tensor.Shape) (tensor.Shape, error) {
	if len(mu) != 2 || mu[1] < 2 {
		return nil, &ShapeError{Op: op, Want: "means [N,K] with K ≥ 2", Got: fmt.Sprint(mu)}
	}
	if !mu.Eq(v) {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("variances of the means' shape %v", mu), Got: fmt.Sprint(v)}
	}
	n := mu[0]
	if !(len(y) == 2 && y[0] == n && y[1] == 1) && !(len(y) == 1 && y[0] == n) {
		return nil, &ShapeError{Op: op, Want: fmt.Sprintf("labels [%d,1]", n), Got: fmt.Sprint(y)}
	}
	return tensor.Shape{n}, nil
}

// logs returns log(1−ε) and log(ε/(K−1)).
func (k robustMaxK) logs(classes int) (hit, miss float64) {
	return math.Log1p(-k.eps), math.Log(k.eps / float64(classes-1))
}

func (k robustMaxK) forward(in []arg, out []float64) error {
	mu, v, y := in[0], in[1], in[2]
	n, c := mu.rows(), mu.cols()
	x, w, err := robustMaxRule(k.points)
	if err != nil {
		return err
	}
	hit, miss := k.logs(c)
	return ForRows(n, robustMaxMinRows, func(lo, hi int) error {
		for r := lo; r < hi; r++ {
			lab, err := label(k.name(), r, y.data[r], c)
			if err != nil {
				return err
			}
			row := mu.data[r*c : (r+1)*c]
			vrow := v.data[r*c : (r+1)*c]
			if err := checkRowFinite(k.name(), r, row, vrow); err != nil {
				return err
			}
			p := robustMaxRow(row, vrow, lab, x, w, nil, nil)
			out[r] = miss + p*(hit-miss)
		}
		return nil
	})
}

// checkRowFinite returns a NonFiniteError for the first NaN or ±Inf among a row's means and variances.
func checkRowFinite(op string, r int, mu, v []float64) error {
	for j := range mu {
		if mu[j]-mu[j] != 0 {
			return &NonFiniteError{Where: op + " means", Row: r, Col: j, Value: mu[j]}
		}
		if v[j]-v[j] != 0 {
			return &NonFiniteError{Where: op + " variances", Row: r, Col: j, Value: v[j]}
		}
	}
	return nil
}

func (k robustMaxK) backward(wrt int, in []arg, out arg, g arg, dst []float64) error {
	if wrt > 1 {
		return fmt.Errorf("ops: %s: labels are not differentiable", k.name())
	}
	both := [][]float64{make([]float64, len(in[0].data)), make([]float64, len(in[1].data))}
	if err := k.backwardAll(in, out, g, both); err != nil {
		return err
	}
	copy(dst, both[wrt])
	return nil
}

// backwardAll computes the gradients with respect to mu and v in one quadrature pass per row.
func (k robustMaxK) backwardAll(in []arg, _ arg, g arg, dst [][]float64) error {
	mu, v, y := in[0], in[1], in[2]
	n, c := mu.rows(), mu.cols()
	x, w, err := robustMaxRule(k.points)
	if err != nil {
		return err
	}
	hit, miss := k.logs(c)
	return ForRows(n, robustMaxMinRows, func(lo, hi int) error {
		dmu, dv := make([]float64, c), make([]float64, c)
		for r := lo; r < hi; r++ {
			lab, err := label(k.name(), r, y.data[r], c)
			if err != nil {
				return err
			}
			robustMaxRow(mu.data[r*c:(r+1)*c], v.data[r*c:(r+1)*c], lab, x, w, dmu, dv)
			s := g.data[r] * (hit - miss)
			for j := range dmu {
				dst[0][r*c+j] = s * dmu[j]
				dst[1][r*c+j] = s * dv[j]
			}
		}
		return nil
	})
}

// robustMaxMinRows is the least number of rows worth a goroutine of their own (each row costs K·points log Φ).
const robustMaxMinRows = 64

// RobustMaxVE returns the robust-max variational expectations E_q[log p(y_n | f_n)] [N] for latent means mu
// [N,K], variances v [N,K] (K ≥ 2 classes) and labels y [N,1] (integers 0..K−1 stored as float64), by
// Gauss–Hermite quadrature with points nodes over the label's latent (see the file comment and MATH.md §4).
// eps ∈ (0, 1) is the robust-max ε. Gradients flow to mu and v, not to y. Variances are clamped at
// RobustMaxVarFloor. At run time a label outside 0..K−1 (or not an integer) is an ErrLabel error and a non-finite
// mean or variance a NonFiniteError. eps and points are part of the op's hash.
func RobustMaxVE(mu, v, y *G.Node, eps float64, points int) (*G.Node, error) {
	if err := checkRobustMaxConsts("RobustMaxVE", eps, points); err != nil {
		return nil, err
	}
	return apply(robustMaxK{eps: eps, points: points}, mu, v, y)
}

// RobustMaxArgmaxProb returns P(argmax f = k) for f ~ Π_j N(mu_j, v_j) (one row of K ≥ 2 classes) by
// Gauss–Hermite quadrature with points nodes, as RobustMaxVE computes it. Over k these sum to 1 up to the
// quadrature error.
func RobustMaxArgmaxProb(mu, v []float64, k, points int) (float64, error) {
	if err := checkRobustMaxRow("RobustMaxArgmaxProb", mu, v, 0.5, points); err != nil {
		return 0, err
	}
	if k < 0 || k >= len(mu) {
		return 0, fmt.Errorf("%w: RobustMaxArgmaxProb: class %d of %d", ErrLabel, k, len(mu))
	}
	x, w, err := robustMaxRule(points)
	if err != nil {
		return 0, err
	}
	return robustMaxRow(mu, v, k, x, w, nil, nil), nil
}

func checkRobustMaxRow(op string, mu, v []float64, eps float64, points int) error {
	if err := checkRobustMaxConsts(op, eps, points); err != nil {
		return err
	}
	if len(mu) < 2 || len(v) != len(mu) {
		return &ShapeError{Op: op, Want: "K ≥ 2 means and as many variances", Got: fmt.Sprintf("%d and %d", len(mu), len(v))}
	}
	return checkRowFinite(op, 0, mu, v)
}

// RobustMaxProbs writes into dst [k] the robust-max predictive class probabilities of one row,
// p(y=c) = (1−ε)·P_c + (ε/(k−1))·(1 − P_c), where P_c = P(argmax f = c) for f ~ Π_j N(mu_j, v_j), mu and v of
// length k ≥ 2. The P_c come from Gauss–Hermite quadrature with points nodes (RobustMaxArgmaxProb) and are then
// divided by their sum, which is 1 up to the quadrature error, so dst sums to 1 up to rounding. It returns an
// error (and leaves dst unspecified) for bad lengths, ε ∉ (0, 1), bad points or non-finite inputs.
func RobustMaxProbs(mu, v []float64, k int, eps float64, points int, dst []float64) error {
	if err := checkRobustMaxRow("RobustMaxProbs", mu, v, eps, points); err != nil {
		return err
	}
	if len(mu) != k || len(dst) != k {
		return &ShapeError{Op: "RobustMaxProbs", Want: fmt.Sprintf("%d means, variances and outputs", k),
			Got: fmt.Sprintf("%d, %d and %d", len(mu), len(v), len(dst))}
	}
	x, w, err := robustMaxRule(points)
	if err != nil {
		return err
	}
	sum := 0.0
	for c := 0; c < k; c++ {
		dst[c] = robustMaxRow(mu, v, c, x, w, nil, nil)
		sum += dst[c]
	}
	if !(sum > 0) {
		return fmt.Errorf("ops: RobustMaxProbs: the argmax probabilities sum to %v", sum)
	}
	miss := eps / float64(k-1)
	for c := range dst {
		p := dst[c] / sum
		dst[c] = (1-eps)*p + miss*(1-p)
	}
	return nil
}
