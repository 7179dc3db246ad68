package graph

import (
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
)

// This file maps package ops onto Graph methods. Each method documents the shapes; semantics and gradients are
// those of the ops function of the same name.

func (g *Graph) un(op string, f func(*G.Node) (*G.Node, error), x *Node) *Node {
	return g.apply(op, func(xs ...*G.Node) (*G.Node, error) { return f(xs[0]) }, x)
}

func (g *Graph) bin(op string, f func(a, b *G.Node) (*G.Node, error), a, b *Node) *Node {
	return g.apply(op, func(xs ...*G.Node) (*G.Node, error) { return f(xs[0], xs[1]) }, a, b)
}

// MatMul returns op(a)·op(b) where op transposes when the flag is set: [n,k]·[k,m] -> [n,m].
func (g *Graph) MatMul(a, b *Node, transA, transB bool) *Node {
	return g.bin("MatMul", func(x, y *G.Node) (*G.Node, error) { return ops.MatMul(x, y, transA, transB) }, a, b)
}

// Dot returns the scalar Σ aᵢbᵢ of two operands of the same shape.
func (g *Graph) Dot(a, b *Node) *Node { return g.bin("Dot", ops.Dot, a, b) }

// Add returns a + b (equal shapes, or either a scalar). An operand made by Zeros, of the other's shape, is
// skipped: the other operand is returned.
func (g *Graph) Add(a, b *Node) *Node {
	switch {
	case g.err != nil:
	case g.zeroOperand(b, a):
		return a
	case g.zeroOperand(a, b):
		return b
	}
	return g.bin("Add", ops.Add, a, b)
}

// Sub returns a − b (equal shapes, or either a scalar); a − Zeros of a's shape is a itself.
func (g *Graph) Sub(a, b *Node) *Node {
	if g.err == nil && g.zeroOperand(b, a) {
		return a
	}
	return g.bin("Sub", ops.Sub, a, b)
}

// Mul returns a ⊙ b elementwise (equal shapes, or either a scalar).
func (g *Graph) Mul(a, b *Node) *Node { return g.bin("Mul", ops.Mul, a, b) }

// Div returns a ⊘ b elementwise (equal shapes, or either a scalar).
func (g *Graph) Div(a, b *Node) *Node { return g.bin("Div", ops.Div, a, b) }

// Scale returns c·x.
func (g *Graph) Scale(x *Node, c float64) *Node {
	return g.un("Scale", func(n *G.Node) (*G.Node, error) { return ops.Scale(n, c) }, x)
}

// AddConst returns x + c.
func (g *Graph) AddConst(x *Node, c float64) *Node {
	return g.un("AddConst", func(n *G.Node) (*G.Node, error) { return ops.AddConst(n, c) }, x)
}

// ClampMin returns max(x, c) elementwise (gradient 1 where x > c, else 0).
func (g *Graph) ClampMin(x *Node, c float64) *Node {
	return g.un("ClampMin", func(n *G.Node) (*G.Node, error) { return ops.ClampMin(n, c) }, x)
}

// Exp returns eˣ elementwise.
func (g *Graph) Exp(x *Node) *Node { return g.un("Exp", ops.Exp, x) }

// Log returns log x elementwise.
func (g *Graph) Log(x *Node) *Node { return g.un("Log", ops.Log, x) }

// Square returns x² elementwise.
func (g *Graph) Square(x *Node) *Node { return g.un("Square", ops.Square, x) }

// Sqrt returns √x elementwise.
func (g *Graph) Sqrt(x *Node) *Node { return g.un("Sqrt", ops.Sqrt, x) }

// Neg returns −x.
func (g *Graph) Neg(x *Node) *Node { return g.un("Neg", ops.Neg, x) }

// Recip returns 1/x elementwise.
func (g *Graph) Recip(x *Node) *Node { return g.un("Recip", ops.Recip, x) }

// Softplus returns log(1+eˣ) elementwise, computed stably.
func (g *Graph) Softplus(x *Node) *Node { return g.un("Softplus", ops.Softplus, x) }

// Positive returns softplus(x) + floor elementwise.
func (g *Graph) Positive(x *Node, floor float64) *Node {
	return g.un("Positive", func(n *G.Node) (*G.Node, error) { return ops.Positive(n, floor) }, x)
}

// LowerTriPositive returns the lower-triangular [n,n] matrix with the strictly lower part of x and diagonal
// softplus(x_ii) + floor.
func (g *Graph) LowerTriPositive(x *Node, floor float64) *Node {
	return g.un("LowerTriPositive", func(n *G.Node) (*G.Node, error) { return ops.LowerTriPositive(n, floor) }, x)
}

// LogPhi returns log Φ(x) elementwise (standard normal CDF), stable for negative x.
func (g *Graph) LogPhi(x *Node) *Node { return g.un("LogPhi", ops.LogPhi, x) }

// Sum returns the scalar sum of all entries.
func (g *Graph) Sum(x *Node) *Node { return g.un("Sum", ops.Sum, x) }

// SumRows returns the column sums [m] of x [n,m].
func (g *Graph) SumRows(x *Node) *Node { return g.un("SumRows", ops.SumRows, x) }

// SumRowsSq returns the column sums of squares Σᵢ x_ij² [m] of x [n,m]: SumRows(Square(x)) in one op.
func (g *Graph) SumRowsSq(x *Node) *Node { return g.un("SumRowsSq", ops.SumRowsSq, x) }

// SumCols returns the row sums [n] of x [n,m].
func (g *Graph) SumCols(x *Node) *Node { return g.un("SumCols", ops.SumCols, x) }

// AddRow returns x [n,m] with r [m] added to every row.
func (g *Graph) AddRow(x, r *Node) *Node { return g.bin("AddRow", ops.AddRow, x, r) }

// MulRow returns x [n,m] with column j scaled by r_j, r [m].
func (g *Graph) MulRow(x, r *Node) *Node { return g.bin("MulRow", ops.MulRow, x, r) }

// Transpose returns xᵀ as a new [m,n] matrix.
func (g *Graph) Transpose(x *Node) *Node { return g.un("Transpose", ops.Transpose, x) }

// Cholesky returns the lower factor L of a (symmetrised), retrying with jitter per the Graph's policy.
func (g *Graph) Cholesky(a *Node) *Node {
	return g.un("Cholesky", func(n *G.Node) (*G.Node, error) { return ops.Cholesky(n, g.jitter) }, a)
}

// TriSolve returns X with op(T)·X = B, T triangular [n,n] (upper or lower), B [n,m] or [n].
func (g *Graph) TriSolve(t, b *Node, upper, trans bool) *Node {
	return g.bin("TriSolve", func(x, y *G.Node) (*G.Node, error) { return ops.TriSolve(x, y, upper, trans) }, t, b)
}

// CholSolve returns (L·Lᵀ)⁻¹·B for a lower factor L [n,n] and B [n,m] or [n].
func (g *Graph) CholSolve(l, b *Node) *Node { return g.bin("CholSolve", ops.CholSolve, l, b) }

// LogDetChol returns log|L·Lᵀ| = 2Σ log L_ii for a lower factor L.
func (g *Graph) LogDetChol(l *Node) *Node { return g.un("LogDetChol", ops.LogDetChol, l) }

// AddDiag returns a + diag(d), d a scalar (same on every diagonal entry) or a vector [n].
func (g *Graph) AddDiag(a, d *Node) *Node { return g.bin("AddDiag", ops.AddDiag, a, d) }

// DiagPart returns the diagonal [n] of a [n,n].
func (g *Graph) DiagPart(a *Node) *Node { return g.un("DiagPart", ops.DiagPart, a) }

// CovMatrix returns the covariance matrix [N,M] of the covariance function f between x1 [N,D] and x2 [M,D], with
// its constrained hyperparameters in the order of f.Hypers().
func (g *Graph) CovMatrix(f ops.CovFunc, x1, x2 *Node, hyper ...*Node) *Node {
	return g.apply("CovMatrix("+f.Name()+")", func(xs ...*G.Node) (*G.Node, error) {
		return ops.CovMatrix(f, xs[0], xs[1], xs[2:]...)
	}, append([]*Node{x1, x2}, hyper...)...)
}

// CovDiag returns diag k(x, x) [N] of the covariance function f for x [N,D].
func (g *Graph) CovDiag(f ops.CovFunc, x *Node, hyper ...*Node) *Node {
	return g.apply("CovDiag("+f.Name()+")", func(xs ...*G.Node) (*G.Node, error) {
		return ops.CovDiag(f, xs[0], xs[1:]...)
	}, append([]*Node{x}, hyper...)...)
}

// StackCols returns the [n,k] matrix whose columns are the k vectors xs [n].
func (g *Graph) StackCols(xs ...*Node) *Node {
	return g.apply("StackCols", func(ns ...*G.Node) (*G.Node, error) { return ops.StackCols(ns...) }, xs...)
}

// TriQuadCols returns the [n,p] matrix out[j,k] = ‖L_kᵀa_j‖² (column sums of squares of L_kᵀA) for a [m,n] with
// columns a_j and p ≥ 1 lower-triangular factors ls[k] [m,m], whose entries above the diagonal are ignored: the
// fused form of StackCols(SumRows(Square(MatMul(L_k, a, true, false)))...), e.g. the q(u) term of a sparse GP's
// marginal variances.
func (g *Graph) TriQuadCols(a *Node, ls ...*Node) *Node {
	return g.apply("TriQuadCols", func(ns ...*G.Node) (*G.Node, error) { return ops.TriQuadCols(ns[0], ns[1:]...) },
		append([]*Node{a}, ls...)...)
}

// WhitenedKL returns Σ_p KL[N(m_p, L_pL_pᵀ) ‖ N(0, I)] of a whitened q(u): m [M,P], one lower factor L_p [M,M]
// per output (ops.WhitenedKL).
func (g *Graph) WhitenedKL(m *Node, ls ...*Node) *Node {
	return g.apply("WhitenedKL", func(ns ...*G.Node) (*G.Node, error) { return ops.WhitenedKL(ns[0], ns[1:]...) },
		append([]*Node{m}, ls...)...)
}

// Col returns column j [n] of x [n,m].
func (g *Graph) Col(x *Node, j int) *Node {
	return g.un("Col", func(n *G.Node) (*G.Node, error) { return ops.Col(n, j) }, x)
}

// SliceRows returns rows [from, to) of x (a matrix or a vector).
func (g *Graph) SliceRows(x *Node, from, to int) *Node {
	return g.un("SliceRows", func(n *G.Node) (*G.Node, error) { return ops.SliceRows(n, from, to) }, x)
}

// Reshape returns a copy of x with a new shape of the same size.
func (g *Graph) Reshape(x *Node, shape ...int) *Node {
	return g.un("Reshape", func(n *G.Node) (*G.Node, error) { return ops.Reshape(n, shape...) }, x)
}

// Sigmoid returns 1/(1+e⁻ˣ) elementwise.
func (g *Graph) Sigmoid(x *Node) *Node { return g.un("Sigmoid", ops.Sigmoid, x) }

// Mean returns the scalar mean of all entries.
func (g *Graph) Mean(x *Node) *Node { return g.un("Mean", ops.Mean, x) }

// AddCol returns x [n,m] with c [n] added to every column.
func (g *Graph) AddCol(x, c *Node) *Node { return g.bin("AddCol", ops.AddCol, x, c) }

// MulCol returns x [n,m] with row i scaled by c_i, c [n].
func (g *Graph) MulCol(x, c *Node) *Node { return g.bin("MulCol", ops.MulCol, x, c) }

// CGLoss returns an exact GP's negative log marginal likelihood estimated by the conjugate-gradient solver s
// (ops.CGLoss): x [N,D] the training inputs, r [N,P] the residual targets, noise σ², step the probes' key (a
// scalar), and raw the kernel's raw hyperparameters (RawParam nodes, in the order of s.K.HyperSizes()).
func (g *Graph) CGLoss(s *ops.CGSolver, x, r, noise, step *Node, raw ...*Node) *Node {
	return g.apply("CGLoss", func(ns ...*G.Node) (*G.Node, error) {
		return ops.CGLoss(s, ns[0], ns[1], ns[2], ns[3], ns[4:]...)
	}, append([]*Node{x, r, noise, step}, raw...)...)
}
