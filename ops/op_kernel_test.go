package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/internal/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The covariance functions under test: the built-ins (their maths live in package gp, one file each).
var (
	covSE  ops.CovFunc = gp.SquaredExpCov
	covM12 ops.CovFunc = gp.Matern12Cov
	covM32 ops.CovFunc = gp.Matern32Cov
	covM52 ops.CovFunc = gp.Matern52Cov
	covRQ  ops.CovFunc = gp.RationalQuadraticCov
	covPer ops.CovFunc = gp.PeriodicCov
	covLin ops.CovFunc = gp.LinearCov
)

// covIndex returns f's position in covFamilies (seeds the per-family random numbers as the enum value did).
func covIndex(f ops.CovFunc) int {
	for i, g := range covFamilies {
		if g == f {
			return i
		}
	}
	return -1
}

var covFamilies = []ops.CovFunc{covSE, covM12, covM32, covM52, covRQ,
	covPer, covLin}

// covHyperInputs returns random (already constrained) hyperparameters of family f for d input columns.
// scalarVar selects a scalar variance for Linear (otherwise ARD [d]).
func covHyperInputs(f ops.CovFunc, d int, rng *rand.Rand, scalarVar bool) []gradcheck.Input {
	if f == covLin {
		if scalarVar {
			return []gradcheck.Input{gradcheck.Random("variance", rng, 0.5, 1.5)}
		}
		return []gradcheck.Input{gradcheck.Random("variance", rng, 0.5, 1.5, d)}
	}
	h := []gradcheck.Input{gradcheck.Random("variance", rng, 0.5, 1.5), gradcheck.Random("lengthscales", rng, 0.5, 1.5, d)}
	switch f {
	case covRQ:
		h = append(h, gradcheck.Random("alpha", rng, 0.5, 2))
	case covPer:
		h = append(h, gradcheck.Random("period", rng, 1, 2))
	}
	return h
}

func TestCovFamilyNames(t *testing.T) {
	t.Parallel()
	want := map[ops.CovFunc]string{covSE: "SquaredExp", covM12: "Matern12", covM32: "Matern32",
		covM52: "Matern52", covRQ: "RationalQuadratic", covPer: "Periodic", covLin: "Linear"}
	for f, s := range want {
		if f.Name() != s {
			t.Errorf("Name() = %q, want %q", f.Name(), s)
		}
	}
	if got := fmt.Sprint(ops.CovHyperNames(covRQ)); got != "[variance lengthscales alpha]" {
		t.Errorf("RationalQuadratic hyperparameter names = %s", got)
	}
}

// TestCovMatrixGrad checks ∂/∂x1, ∂/∂x2 and ∂/∂θ of CovMatrix against central differences for every family,
// D = 1 and 3, N ≠ M, and the shared-node case K(X, X) (x1 and x2 the same node: the gradients add up, and the
// diagonal pairs sit at r = 0).
func TestCovMatrixGrad(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		for _, d := range []int{1, 3} {
			for _, scalarVar := range []bool{false, true} {
				if scalarVar && f != covLin {
					continue
				}
				name := fmt.Sprintf("%v/D=%d", f, d)
				if scalarVar {
					name += "/scalarVariance"
				}
				t.Run(name+"/N=4,M=3", func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(covIndex(f))+1, uint64(d)))
					in := append([]gradcheck.Input{gradcheck.Random("x1", rng, -1, 1, 4, d), gradcheck.Random("x2", rng, -1, 1, 3, d)},
						covHyperInputs(f, d, rng, scalarVar)...)
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(f, n[0], n[1], n[2:]...)
					}, in)
				})
				t.Run(name+"/shared=K(X,X)", func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(covIndex(f))+11, uint64(d)))
					in := append([]gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 5, d)}, covHyperInputs(f, d, rng, scalarVar)...)
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(f, n[0], n[0], n[1:]...)
					}, in)
				})
			}
		}
	}
}

// TestCovMatrixGradCoincident puts rows of x2 exactly on rows of x1 (two distinct nodes): at r = 0 every
// stationary kernel's input gradient is the (sub)gradient 0, which is what a central difference sees (the kink of
// Matern12 is symmetric), and all gradients are finite.
func TestCovMatrixGradCoincident(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(5, uint64(covIndex(f))))
			x1 := gradcheck.Random("x1", rng, -1, 1, 4, 2)
			x2 := gradcheck.Random("x2", rng, -1, 1, 3, 2)
			copy(x2.Value[0:2], x1.Value[2:4]) // x2[0] = x1[1]
			copy(x2.Value[4:6], x1.Value[6:8]) // x2[2] = x1[3]
			in := append([]gradcheck.Input{x1, x2}, covHyperInputs(f, 2, rng, false)...)
			gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
				return ops.CovMatrix(f, n[0], n[1], n[2:]...)
			}, in)
		})
	}
}

func TestCovDiagGrad(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		for _, d := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/D=%d", f, d), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(covIndex(f))+21, uint64(d)))
				in := append([]gradcheck.Input{gradcheck.Random("x", rng, -1, 1, 4, d)}, covHyperInputs(f, d, rng, false)...)
				gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
					return ops.CovDiag(f, n[0], n[1:]...)
				}, in)
			})
		}
	}
}

// ----- reference implementations (naive double loops, formulas written out independently) -----

// covReference returns K(x1, x2) [n,m] for family f with hyperparameter values h (in CovFamily's order).
func covReference(f ops.CovFunc, x1, x2 []float64, n, m, d int, h [][]float64) []float64 {
	k := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			a, b := x1[i*d:(i+1)*d], x2[j*d:(j+1)*d]
			var v float64
			switch f {
			case covLin:
				for q := 0; q < d; q++ {
					s2 := h[0][0]
					if len(h[0]) > 1 {
						s2 = h[0][q]
					}
					v += s2 * a[q] * b[q]
				}
			case covPer:
				sigma2, ell, p := h[0][0], h[1], h[2][0]
				s := 0.0
				for q := 0; q < d; q++ {
					sn := math.Sin(math.Pi*math.Abs(a[q]-b[q])/p) / ell[q]
					s += sn * sn
				}
				v = sigma2 * math.Exp(-2*s)
			default:
				sigma2, ell := h[0][0], h[1]
				r2 := 0.0
				for q := 0; q < d; q++ {
					z := (a[q] - b[q]) / ell[q]
					r2 += z * z
				}
				r := math.Sqrt(r2)
				switch f {
				case covSE:
					v = sigma2 * math.Exp(-r2/2)
				case covM12:
					v = sigma2 * math.Exp(-r)
				case covM32:
					v = sigma2 * (1 + math.Sqrt(3)*r) * math.Exp(-math.Sqrt(3)*r)
				case covM52:
					v = sigma2 * (1 + math.Sqrt(5)*r + 5*r2/3) * math.Exp(-math.Sqrt(5)*r)
				case covRQ:
					alpha := h[2][0]
					v = sigma2 * math.Pow(1+r2/(2*alpha), -alpha)
				}
			}
			k[i*m+j] = v
		}
	}
	return k
}

// ----- graph helpers -----

func covLeaf(g *G.ExprGraph, name string, shape []int, v []float64) *G.Node {
	if len(shape) == 0 {
		return G.NewScalar(g, tensor.Float64, G.WithName(name), G.WithValue(v[0]))
	}
	return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...)))))
}

func covLeaves(g *G.ExprGraph, in []gradcheck.Input) []*G.Node {
	ns := make([]*G.Node, len(in))
	for i, x := range in {
		ns[i] = covLeaf(g, fmt.Sprintf("%s%d", x.Name, i), x.Shape, x.Value)
	}
	return ns
}

// covRun evaluates the nodes of g and returns copies of their values.
func covRun(t testing.TB, g *G.ExprGraph, ns ...*G.Node) [][]float64 {
	t.Helper()
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("run: %v", err)
	}
	out := make([][]float64, len(ns))
	for i, n := range ns {
		switch v := n.Value().Data().(type) {
		case float64:
			out[i] = []float64{v}
		case []float64:
			out[i] = append([]float64(nil), v...)
		default:
			t.Fatalf("value of %v is %T", n, v)
		}
	}
	return out
}

func covHyperValues(h []gradcheck.Input) [][]float64 {
	v := make([][]float64, len(h))
	for i, x := range h {
		v[i] = x.Value
	}
	return v
}

func covClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestCovMatrixGolden compares CovMatrix with the naive reference to 1e-12 (relative to max(1, |K|)) on random
// inputs, on K(X, X), on inputs with coincident rows, on inputs far from the origin (where the uncentred
// expansion ‖a‖² + ‖b‖² − 2a·b would lose ~6 digits), and on clustered inputs (pairs 1e-4 apart, far from the
// centroid: the expansion cancels, near pairs must be recomputed directly).
func TestCovMatrixGolden(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		for _, d := range []int{1, 3} {
			for _, tc := range []struct {
				name    string
				offset  float64
				shared  bool
				cluster bool
			}{{"random", 0, false, false}, {"K(X,X)", 0, true, false}, {"offset=1e3", 1e3, false, false},
				{"clustered", 0, false, true}, {"clustered/K(X,X)", 0, true, true}} {
				t.Run(fmt.Sprintf("%v/D=%d/%s", f, d, tc.name), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(covIndex(f))+31, uint64(d)))
					n, m := 7, 5
					x1 := gradcheck.Random("x1", rng, -2, 2, n, d)
					x2 := gradcheck.Random("x2", rng, -2, 2, m, d)
					if tc.cluster { // all rows but one within 1e-4 of (3, 3, 3), far from the common centroid
						for _, x := range [][]float64{x1.Value, x2.Value} {
							for i := range x {
								x[i] = 3 + 1e-4*x[i]
							}
							for i := 0; i < d; i++ {
								x[i] = -3
							}
						}
					}
					copy(x2.Value[d:2*d], x1.Value[3*d:4*d]) // a coincident pair
					for i := range x1.Value {
						x1.Value[i] += tc.offset
					}
					for i := range x2.Value {
						x2.Value[i] += tc.offset
					}
					if tc.shared {
						x2, m = x1, n
					}
					h := covHyperInputs(f, d, rng, false)
					g := G.NewGraph()
					ns := covLeaves(g, append([]gradcheck.Input{x1, x2}, h...))
					b := ns[1]
					if tc.shared {
						b = ns[0]
					}
					k, err := ops.CovMatrix(f, ns[0], b, ns[2:]...)
					if err != nil {
						t.Fatal(err)
					}
					got := covRun(t, g, k)[0]
					want := covReference(f, x1.Value, x2.Value, n, m, d, covHyperValues(h))
					for i := range want {
						if !covClose(got[i], want[i], 1e-12) {
							t.Errorf("K[%d,%d] = %.17g, reference %.17g (diff %.3g)", i/m, i%m, got[i], want[i], got[i]-want[i])
						}
					}
				})
			}
		}
	}
}

// TestCovDiagMatchesMatrix checks CovDiag(X) against diag CovMatrix(X, X) and the reference.
func TestCovDiagMatchesMatrix(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		t.Run(f.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, uint64(covIndex(f))))
			n, d := 9, 3
			x := gradcheck.Random("x", rng, -2, 2, n, d)
			h := covHyperInputs(f, d, rng, false)
			g := G.NewGraph()
			ns := covLeaves(g, append([]gradcheck.Input{x}, h...))
			k, err := ops.CovMatrix(f, ns[0], ns[0], ns[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			dg, err := ops.CovDiag(f, ns[0], ns[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			if !dg.Shape().Eq(tensor.Shape{n}) {
				t.Fatalf("CovDiag shape %v, want [%d]", dg.Shape(), n)
			}
			vs := covRun(t, g, k, dg)
			ref := covReference(f, x.Value, x.Value, n, n, d, covHyperValues(h))
			for i := 0; i < n; i++ {
				if !covClose(vs[1][i], vs[0][i*n+i], 1e-14) || !covClose(vs[1][i], ref[i*n+i], 1e-12) {
					t.Errorf("diag[%d] = %.17g, CovMatrix %.17g, reference %.17g", i, vs[1][i], vs[0][i*n+i], ref[i*n+i])
				}
			}
		})
	}
}

// TestCovSymmetricPSD checks that K(X, X) is symmetric and that K + 1e-8·I has a Cholesky factor.
func TestCovSymmetricPSD(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		for _, d := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/D=%d", f, d), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(51, uint64(covIndex(f))*10+uint64(d)))
				n := 15
				x := gradcheck.Random("x", rng, -2, 2, n, d)
				h := covHyperInputs(f, d, rng, false)
				g := G.NewGraph()
				ns := covLeaves(g, append([]gradcheck.Input{x}, h...))
				kn, err := ops.CovMatrix(f, ns[0], ns[0], ns[1:]...)
				if err != nil {
					t.Fatal(err)
				}
				k := covRun(t, g, kn)[0]
				sym := mat.NewSymDense(n, nil)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						if !covClose(k[i*n+j], k[j*n+i], 1e-14) {
							t.Errorf("K[%d,%d] = %.17g ≠ K[%d,%d] = %.17g", i, j, k[i*n+j], j, i, k[j*n+i])
						}
						if j >= i {
							v := k[i*n+j]
							if i == j {
								v += 1e-8
							}
							sym.SetSym(i, j, v)
						}
					}
				}
				var ch mat.Cholesky
				if !ch.Factorize(sym) {
					t.Errorf("K + 1e-8·I is not positive definite")
				}
			})
		}
	}
}

// TestCovHash checks that the same inputs under different families give distinct nodes with distinct hashes
// (the family enters the op's hash), and that the same family twice gives the same node.
func TestCovHash(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	x1 := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x1"))
	x2 := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x2"))
	v := G.NewScalar(g, tensor.Float64, G.WithName("v"))
	ell := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("ell"))
	third := G.NewScalar(g, tensor.Float64, G.WithName("third"))
	type built struct {
		name string
		n    *G.Node
	}
	var all []built
	for _, f := range covFamilies {
		hyper := []*G.Node{v, ell}
		switch f {
		case covRQ, covPer: // same operands: only the family tells them apart
			hyper = append(hyper, third)
		case covLin:
			hyper = []*G.Node{v}
		}
		k, err := ops.CovMatrix(f, x1, x2, hyper...)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ops.CovMatrix(f, x1, x2, hyper...)
		if err != nil {
			t.Fatal(err)
		}
		if again != k || again.Hashcode() != k.Hashcode() {
			t.Errorf("%v built twice: distinct nodes", f)
		}
		dg, err := ops.CovDiag(f, x1, hyper...)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, built{"CovMatrix/" + f.Name(), k}, built{"CovDiag/" + f.Name(), dg})
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if a.n == b.n {
				t.Errorf("%s and %s: same node", a.name, b.name)
			}
			if a.n.Hashcode() == b.n.Hashcode() {
				t.Errorf("%s and %s: same node Hashcode", a.name, b.name)
			}
			if a.n.Op().Hashcode() == b.n.Op().Hashcode() {
				t.Errorf("%s and %s: same op Hashcode", a.name, b.name)
			}
		}
	}
}

func TestCovShapeErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	mx := func(name string, s ...int) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(s), G.WithShape(s...), G.WithName(name))
	}
	sc := func(name string) *G.Node { return G.NewScalar(g, tensor.Float64, G.WithName(name)) }
	x43, x33, x32, vec4 := mx("x43", 4, 3), mx("x33", 3, 3), mx("x32", 3, 2), mx("vec4", 4)
	v, a := sc("v"), sc("a")
	ell3, ell2, v2 := mx("ell3", 3), mx("ell2", 2), mx("v2", 2)
	f32 := G.NewMatrix(g, tensor.Float32, G.WithShape(3, 3), G.WithName("f32"))
	cases := []struct {
		name string
		fn   func() (*G.Node, error)
	}{
		{"different D", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, x32, v, ell3) }},
		{"x1 a vector", func() (*G.Node, error) { return ops.CovMatrix(covSE, vec4, x33, v, ell3) }},
		{"too many hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(covM32, x43, x33, v, ell3, a) }},
		{"too few hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(covRQ, x43, x33, v, ell3) }},
		{"no hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(covLin, x43, x33) }},
		{"lengthscales [2] for D=3", func() (*G.Node, error) { return ops.CovMatrix(covM52, x43, x33, v, ell2) }},
		{"lengthscales scalar", func() (*G.Node, error) { return ops.CovMatrix(covM12, x43, x33, v, a) }},
		{"variance a vector", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, x33, v2, ell3) }},
		{"period a vector", func() (*G.Node, error) { return ops.CovMatrix(covPer, x43, x33, v, ell3, ell3) }},
		{"alpha a matrix", func() (*G.Node, error) { return ops.CovMatrix(covRQ, x43, x33, v, ell3, x33) }},
		{"linear variance [2] for D=3", func() (*G.Node, error) { return ops.CovMatrix(covLin, x43, x33, v2) }},
		{"nil x2", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, nil, v, ell3) }},
		{"float32 x2", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, f32, v, ell3) }},
		{"diag: x a vector", func() (*G.Node, error) { return ops.CovDiag(covSE, vec4, v, ell3) }},
		{"diag: lengthscales [2] for D=3", func() (*G.Node, error) { return ops.CovDiag(covSE, x43, v, ell2) }},
		{"diag: wrong count", func() (*G.Node, error) { return ops.CovDiag(covPer, x43, v, ell3) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n *G.Node
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				n, err = tc.fn()
			}()
			var se *ops.ShapeError
			if !errors.As(err, &se) || !errors.Is(err, ops.ErrShape) {
				t.Fatalf("got node %v, error %v (%T); want *ops.ShapeError", n, err, err)
			}
		})
	}
	if _, err := ops.CovMatrix(nil, x43, x33, v, ell3); err == nil {
		t.Error("unknown family: no error")
	}
	// Accepted variants: scalar variance for Linear, [1]-shaped scalars.
	one := mx("one", 1)
	for _, fn := range []func() (*G.Node, error){
		func() (*G.Node, error) { return ops.CovMatrix(covLin, x43, x33, v) },
		func() (*G.Node, error) { return ops.CovMatrix(covLin, x43, x33, ell3) },
		func() (*G.Node, error) { return ops.CovMatrix(covPer, x43, x33, one, ell3, one) },
	} {
		if _, err := fn(); err != nil {
			t.Errorf("unexpected error %v", err)
		}
	}
}

// covGrads evaluates K = CovMatrix(f, x1, x2, h...) and the gradients of Σ w⊙K with respect to x1, x2 and h.
func covGrads(t *testing.T, f ops.CovFunc, in []gradcheck.Input, w []float64) (k []float64, grads [][]float64) {
	t.Helper()
	g := G.NewGraph()
	ns := covLeaves(g, in)
	kn, err := ops.CovMatrix(f, ns[0], ns[1], ns[2:]...)
	if err != nil {
		t.Fatal(err)
	}
	wn := covLeaf(g, "w", kn.Shape().Clone(), w)
	loss, err := ops.Dot(wn, kn)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := G.Grad(loss, ns...)
	if err != nil {
		t.Fatal(err)
	}
	vs := covRun(t, g, append(G.Nodes{kn}, gs...)...)
	return vs[0], vs[1:]
}

// TestCovMatrixLarge runs the row-parallel paths (N·M above the parallel threshold, several row blocks, coincident
// pairs in different blocks): K against the reference, and every gradient against the sum of the gradients of
// small problems over blocks of x1 rows (each below the threshold, so computed serially; the serial path is
// checked by finite differences above). The loss Σ W⊙K decomposes over rows of x1, so the sums must agree.
func TestCovMatrixLarge(t *testing.T) {
	t.Parallel()
	for _, f := range covFamilies {
		t.Run(f.Name(), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(61, uint64(covIndex(f))))
			n, m, d, block := 240, 170, 3, 40
			x1 := gradcheck.Random("x1", rng, -1, 1, n, d)
			x2 := gradcheck.Random("x2", rng, -1, 1, m, d)
			for _, r := range []int{0, 60, 110, 169} { // x2[r] = x1[r+20]
				copy(x2.Value[r*d:(r+1)*d], x1.Value[(r+20)*d:(r+21)*d])
			}
			h := covHyperInputs(f, d, rng, false)
			w := gradcheck.Random("w", rng, -1, 1, n, m).Value
			k, grads := covGrads(t, f, append([]gradcheck.Input{x1, x2}, h...), w)
			want := covReference(f, x1.Value, x2.Value, n, m, d, covHyperValues(h))
			for i := range want {
				if !covClose(k[i], want[i], 1e-12) {
					t.Fatalf("K[%d,%d] = %.17g, reference %.17g", i/m, i%m, k[i], want[i])
				}
			}
			sum := make([][]float64, len(grads))
			for i := range grads {
				sum[i] = make([]float64, len(grads[i]))
			}
			for lo := 0; lo < n; lo += block {
				xb := gradcheck.Input{Name: "x1b", Shape: []int{block, d}, Value: x1.Value[lo*d : (lo+block)*d]}
				_, gb := covGrads(t, f, append([]gradcheck.Input{xb, x2}, h...), w[lo*m:(lo+block)*m])
				copy(sum[0][lo*d:], gb[0])
				for i := 1; i < len(gb); i++ {
					for j, v := range gb[i] {
						sum[i][j] += v
					}
				}
			}
			names := []string{"x1", "x2"}
			names = append(names, ops.CovHyperNames(f)...)
			for i := range grads {
				scale := 0.0
				for _, v := range sum[i] {
					scale = math.Max(scale, math.Abs(v))
				}
				for j, v := range grads[i] {
					if math.Abs(v-sum[i][j]) > 1e-12*math.Max(1, scale) {
						t.Errorf("∂/∂%s[%d] = %.17g, blockwise %.17g", names[i], j, v, sum[i][j])
					}
				}
			}
		})
	}
}
