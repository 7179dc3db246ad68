package ops

import (
	"fmt"
	"io"
	"math"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Elementwise functions of one operand. Every op here is the one kernel unaryK with a function from the closed
// enum unaryFn and at most one constant p (written into the hash). Each op takes a node of any shape (a scalar
// too) and returns a node of the same shape; the gradient is g ⊙ f′(x), with f′ evaluated by plain Go below.

// SqrtGradClamp is the smallest argument at which Sqrt's derivative 1/(2√x) is evaluated: the backward pass uses
// 1/(2√max(x, SqrtGradClamp)), so at x = 0 (e.g. the distance of a point to itself) the gradient is the finite
// 5e17 instead of +Inf, and a zero upstream gradient stays zero instead of becoming NaN (0·Inf). It changes
// gradients only for x < 1e−36, i.e. √x < 1e−18. The forward value is the exact √x (NaN for x < 0).
const SqrtGradClamp = 1e-36

type unaryFn int

const (
	fnExp unaryFn = iota
	fnLog
	fnSquare
	fnSqrt
	fnNeg
	fnSoftplus
	fnSigmoid
	fnLog1p
	fnExpm1
	fnLogPhi
	fnPhi
	fnCos
	fnSin
	fnRecip
	fnPow      // p = exponent
	fnInvSqrt  // x^(−1/2)
	fnScale    // p = factor
	fnAddConst // p = constant
	fnPositive // p = floor
	fnClampMin // p = lower bound
)

var unaryNames = [...]string{
	fnExp: "Exp", fnLog: "Log", fnSquare: "Square", fnSqrt: "Sqrt", fnNeg: "Neg", fnSoftplus: "Softplus",
	fnSigmoid: "Sigmoid", fnLog1p: "Log1p", fnExpm1: "Expm1", fnLogPhi: "LogPhi", fnPhi: "Phi", fnCos: "Cos",
	fnSin: "Sin", fnRecip: "Recip", fnPow: "Pow", fnInvSqrt: "InvSqrt", fnScale: "Scale", fnAddConst: "AddConst",
	fnPositive: "Positive", fnClampMin: "ClampMin",
}

// unaryK applies fn elementwise; p is fn's constant (0 and not hashed for functions without one).
type unaryK struct {
	fn unaryFn
	p  float64
}

func (k unaryK) name() string { return unaryNames[k.fn] }
func (k unaryK) params(w io.Writer) {
	switch k.fn {
	case fnPow:
		fmt.Fprintf(w, "p=%s", fmtFloat(k.p))
	case fnScale, fnAddConst:
		fmt.Fprintf(w, "c=%s", fmtFloat(k.p))
	case fnPositive:
		fmt.Fprintf(w, "floor=%s", fmtFloat(k.p))
	case fnClampMin:
		fmt.Fprintf(w, "min=%s", fmtFloat(k.p))
	case fnSqrt:
		fmt.Fprintf(w, "gradClamp=%s", fmtFloat(SqrtGradClamp))
	}
}
func (unaryK) arity() int   { return 1 }
func (unaryK) diff() []bool { return []bool{true} }
func (unaryK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	return in[0].Clone(), nil
}

// fmtFloat formats f exactly (shortest round-trip form), so distinct constants hash differently.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// f returns fn(x).
func (k unaryK) f(x float64) float64 {
	switch k.fn {
	case fnExp:
		return math.Exp(x)
	case fnLog:
		return math.Log(x)
	case fnSquare:
		return x * x
	case fnSqrt:
		return math.Sqrt(x)
	case fnNeg:
		return -x
	case fnSoftplus:
		return SoftplusFloat(x)
	case fnSigmoid:
		return stableSigmoid(x)
	case fnLog1p:
		return math.Log1p(x)
	case fnExpm1:
		return math.Expm1(x)
	case fnLogPhi:
		return LogPhiFloat(x)
	case fnPhi:
		return phiCDF(x)
	case fnCos:
		return math.Cos(x)
	case fnSin:
		return math.Sin(x)
	case fnRecip:
		return 1 / x
	case fnPow:
		return math.Pow(x, k.p)
	case fnInvSqrt:
		return 1 / math.Sqrt(x)
	case fnScale:
		return k.p * x
	case fnAddConst:
		return x + k.p
	case fnPositive:
		return SoftplusFloat(x) + k.p
	case fnClampMin:
		return math.Max(x, k.p)
	}
	panic("ops: unknown unary function") // unreachable: the enum is closed
}

// df returns fn′(x), given y = fn(x).
func (k unaryK) df(x, y float64) float64 {
	switch k.fn {
	case fnExp:
		return y
	case fnLog:
		return 1 / x
	case fnSquare:
		return 2 * x
	case fnSqrt:
		return 0.5 / math.Sqrt(math.Max(x, SqrtGradClamp))
	case fnNeg:
		return -1
	case fnClampMin:
		if x > k.p {
			return 1
		}
		return 0
	case fnSoftplus, fnPositive:
		return stableSigmoid(x)
	case fnSigmoid:
		return y * stableSigmoid(-x) // σ(x)(1 − σ(x)) without cancellation in 1 − σ(x)
	case fnLog1p:
		return 1 / (1 + x)
	case fnExpm1:
		return math.Exp(x)
	case fnLogPhi:
		return logPhiDeriv(x)
	case fnPhi:
		return phiPDF(x)
	case fnCos:
		return -math.Sin(x)
	case fnSin:
		return math.Cos(x)
	case fnRecip:
		return -y * y
	case fnPow:
		if k.p == 0 {
			return 0
		}
		return k.p * math.Pow(x, k.p-1)
	case fnInvSqrt:
		return -0.5 * y / x // −½ x^(−3/2)
	case fnScale:
		return k.p
	case fnAddConst:
		return 1
	}
	panic("ops: unknown unary function") // unreachable: the enum is closed
}

func (k unaryK) forward(in []arg, out []float64) error {
	if k.fn == fnSquare { // the hot one (sums of squares over [M,N] matrices), without the per-entry switch
		for i, x := range in[0].data {
			out[i] = x * x
		}
		return nil
	}
	for i, x := range in[0].data {
		out[i] = k.f(x)
	}
	return nil
}

func (k unaryK) backward(_ int, in []arg, out arg, g arg, dst []float64) error {
	if k.fn == fnSquare { // g·df, df = 2x: the same operations as the general loop
		for i, x := range in[0].data {
			dst[i] = g.data[i] * (2 * x)
		}
		return nil
	}
	for i, x := range in[0].data {
		dst[i] = g.data[i] * k.df(x, out.data[i])
	}
	return nil
}

func unary(fn unaryFn, p float64, x *G.Node) (*G.Node, error) {
	if p-p != 0 {
		return nil, fmt.Errorf("ops: %s: constant %v: %w", unaryNames[fn], p, ErrNonFinite)
	}
	return apply(unaryK{fn: fn, p: p}, x)
}

// Exp returns eˣ elementwise. Shape: any → same.
func Exp(x *G.Node) (*G.Node, error) { return unary(fnExp, 0, x) }

// Log returns the natural logarithm elementwise (NaN for x < 0, −Inf at 0). Shape: any → same.
func Log(x *G.Node) (*G.Node, error) { return unary(fnLog, 0, x) }

// Square returns x² elementwise. Shape: any → same.
func Square(x *G.Node) (*G.Node, error) { return unary(fnSquare, 0, x) }

// Sqrt returns √x elementwise; its gradient is evaluated at max(x, SqrtGradClamp) so it is finite at 0.
// Shape: any → same.
func Sqrt(x *G.Node) (*G.Node, error) { return unary(fnSqrt, 0, x) }

// Neg returns −x elementwise. Shape: any → same.
func Neg(x *G.Node) (*G.Node, error) { return unary(fnNeg, 0, x) }

// Softplus returns log(1 + eˣ) elementwise, computed stably as max(x, 0) + log1p(e^−|x|) (see SoftplusFloat);
// its derivative is the sigmoid. Shape: any → same.
func Softplus(x *G.Node) (*G.Node, error) { return unary(fnSoftplus, 0, x) }

// Sigmoid returns 1/(1 + e^−x) elementwise, without overflow for either sign. Shape: any → same.
func Sigmoid(x *G.Node) (*G.Node, error) { return unary(fnSigmoid, 0, x) }

// Log1p returns log(1 + x) elementwise, accurate for small x. Shape: any → same.
func Log1p(x *G.Node) (*G.Node, error) { return unary(fnLog1p, 0, x) }

// Expm1 returns eˣ − 1 elementwise, accurate for small x. Shape: any → same.
func Expm1(x *G.Node) (*G.Node, error) { return unary(fnExpm1, 0, x) }

// LogPhi returns log Φ(x), the log of the standard normal CDF, elementwise: finite for very negative x (see
// LogPhiFloat); the derivative φ(x)/Φ(x) is computed without dividing underflowed quantities. Shape: any → same.
func LogPhi(x *G.Node) (*G.Node, error) { return unary(fnLogPhi, 0, x) }

// Phi returns Φ(x) = erfc(−x/√2)/2, the standard normal CDF, elementwise. Shape: any → same.
func Phi(x *G.Node) (*G.Node, error) { return unary(fnPhi, 0, x) }

// Cos returns cos x elementwise. Shape: any → same.
func Cos(x *G.Node) (*G.Node, error) { return unary(fnCos, 0, x) }

// Sin returns sin x elementwise. Shape: any → same.
func Sin(x *G.Node) (*G.Node, error) { return unary(fnSin, 0, x) }

// Recip returns 1/x elementwise. Shape: any → same.
func Recip(x *G.Node) (*G.Node, error) { return unary(fnRecip, 0, x) }

// Pow returns x^p elementwise for a constant finite exponent p (use x > 0 unless p is an integer); the derivative
// is p·x^(p−1) (0 for p = 0). Shape: any → same.
func Pow(x *G.Node, p float64) (*G.Node, error) { return unary(fnPow, p, x) }

// InvSqrt returns x^(−1/2) elementwise with the derivative −½·x^(−3/2). (gorgonia's built-in InverseSqrt has a
// wrong gradient in v0.9.18; do not use it.) Shape: any → same.
func InvSqrt(x *G.Node) (*G.Node, error) { return unary(fnInvSqrt, 0, x) }

// Scale returns c·x elementwise for a finite constant c. Shape: any → same.
func Scale(x *G.Node, c float64) (*G.Node, error) { return unary(fnScale, c, x) }

// AddConst returns x + c elementwise for a finite constant c. Shape: any → same.
func AddConst(x *G.Node, c float64) (*G.Node, error) { return unary(fnAddConst, c, x) }

// Positive returns softplus(x) + floor elementwise, the transform of an unconstrained parameter to (floor, ∞);
// floor must be finite and ≥ 0. SoftplusInverse inverts it on plain floats. Shape: any → same.
func Positive(x *G.Node, floor float64) (*G.Node, error) {
	if !(floor >= 0) || math.IsInf(floor, 1) {
		return nil, fmt.Errorf("ops: Positive: floor %v must be finite and ≥ 0", floor)
	}
	return unary(fnPositive, floor, x)
}

// ClampMin returns max(x, c) elementwise for a finite constant c; the derivative is 1 where x > c and 0 elsewhere.
// Deep GPs use it to keep √σ² defined where round-off leaves a marginal variance just below zero.
// Shape: any → same.
func ClampMin(x *G.Node, c float64) (*G.Node, error) {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("ops: ClampMin: bound %v must be finite", c)
	}
	return unary(fnClampMin, c, x)
}
