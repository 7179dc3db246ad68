package ops_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The covariance functions under test: those of the registered kernel families (package gp, one file each),
// so that a kernel added or removed there is checked here without naming it.
var covFamilies = registeredCovs()

// covSE is the default kernel's function (the generic shape checks and the GSE tests use it).
var covSE ops.CovFunc = gp.SquaredExpCov

// registeredCovs returns the covariance functions behind gp.KernelFamilies() (the kernels that expose one with
// Cov(); White and Constant do not use the fused op), each once, in registry order.
func registeredCovs() []ops.CovFunc {
	var out []ops.CovFunc
	seen := map[string]bool{}
	for _, fam := range gp.KernelFamilies() {
		k, err := fam.New(gp.KernelOptions{InputDim: 2, ARD: true})
		if err != nil {
			panic(fmt.Sprintf("kernel %s: %v", fam.Name, err))
		}
		c, ok := k.(interface{ Cov() ops.CovFunc })
		if !ok || seen[c.Cov().Name()] {
			continue
		}
		seen[c.Cov().Name()] = true
		out = append(out, c.Cov())
	}
	return out
}

// covIndex returns a seed for f's random numbers that depends on its name only (not on which other kernels are
// registered).
func covIndex(f ops.CovFunc) int {
	h := fnv.New32a()
	h.Write([]byte(f.Name()))
	return int(h.Sum32() % 1000)
}

// covHyperRange is the range of the random (constrained) values of a hyperparameter.
func covHyperRange(name string) (lo, hi float64) {
	switch name {
	case "alpha":
		return 0.5, 2
	case "period":
		return 1, 2
	}
	return 0.5, 1.5
}

// covScalarOK reports whether f has a vector hyperparameter that may be given as a scalar.
func covScalarOK(f ops.CovFunc) bool {
	for _, h := range f.Hypers() {
		if h.Vec && h.ScalarOK {
			return true
		}
	}
	return false
}

// covHyperInputs returns random (already constrained) hyperparameters of f for d input columns, shaped as
// f.Hypers() says. scalarVar gives the vector hyperparameters that accept it as scalars.
func covHyperInputs(f ops.CovFunc, d int, rng *rand.Rand, scalarVar bool) []gradcheck.Input {
	var h []gradcheck.Input
	for _, hp := range f.Hypers() {
		lo, hi := covHyperRange(hp.Name)
		if hp.Vec && !(scalarVar && hp.ScalarOK) {
			h = append(h, gradcheck.Random(hp.Name, rng, lo, hi, d))
		} else {
			h = append(h, gradcheck.Random(hp.Name, rng, lo, hi))
		}
	}
	return h
}

// TestCovFamilyNames checks that every registered covariance function has a unique non-empty name and named
// hyperparameters (each kernel's own name is checked in gp/kernel_X_test.go).
func TestCovFamilyNames(t *testing.T) {
	t.Parallel()
	if len(covFamilies) == 0 {
		t.Fatal("no covariance functions registered")
	}
	seen := map[string]bool{}
	for _, f := range covFamilies {
		if f.Name() == "" || seen[f.Name()] {
			t.Errorf("empty or duplicate name %q", f.Name())
		}
		seen[f.Name()] = true
		for _, n := range ops.CovHyperNames(f) {
			if n == "" {
				t.Errorf("%s: unnamed hyperparameter", f.Name())
			}
		}
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
				if scalarVar && !covScalarOK(f) {
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

// ----- graph helpers (gradcheck.Leaves and gradcheck.Eval build and run the graphs) -----

func covClose(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

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
				ns := gradcheck.Leaves(g, append([]gradcheck.Input{x}, h...))
				kn, err := ops.CovMatrix(f, ns[0], ns[0], ns[1:]...)
				if err != nil {
					t.Fatal(err)
				}
				k := gradcheck.Eval(t, g, kn)[0]
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
		// Shared operands (so that only the family tells two functions apart): the variance v, the lengthscales
		// ell, a third scalar; a vector that may be a scalar is given v.
		var hyper []*G.Node
		for i, hp := range f.Hypers() {
			switch {
			case hp.Vec && hp.ScalarOK, !hp.Vec && i == 0:
				hyper = append(hyper, v)
			case hp.Vec:
				hyper = append(hyper, ell)
			default:
				hyper = append(hyper, third)
			}
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
		{"variance a vector", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, x33, v2, ell3) }},
		{"nil x2", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, nil, v, ell3) }},
		{"float32 x2", func() (*G.Node, error) { return ops.CovMatrix(covSE, x43, f32, v, ell3) }},
		{"diag: x a vector", func() (*G.Node, error) { return ops.CovDiag(covSE, vec4, v, ell3) }},
		{"diag: lengthscales [2] for D=3", func() (*G.Node, error) { return ops.CovDiag(covSE, x43, v, ell2) }},
	}
	// Every registered function: wrong counts, and each hyperparameter in a wrong shape.
	for _, f := range covFamilies {
		good := func(d int) []*G.Node { // valid operands for D = 3 (d: the vector length)
			var h []*G.Node
			for _, hp := range f.Hypers() {
				if hp.Vec {
					h = append(h, mx(fmt.Sprint("vec", d), d))
				} else {
					h = append(h, v)
				}
			}
			return h
		}
		hs := f.Hypers()
		add := func(name string, fn func() (*G.Node, error)) {
			cases = append(cases, struct {
				name string
				fn   func() (*G.Node, error)
			}{f.Name() + "/" + name, fn})
		}
		add("too many hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, append(good(3), a)...) })
		add("no hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33) })
		if len(hs) > 0 {
			add("too few hyperparameters", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, good(3)[:len(hs)-1]...) })
			add("diag: wrong count", func() (*G.Node, error) { return ops.CovDiag(f, x43, good(3)[:len(hs)-1]...) })
		}
		for i, hp := range hs {
			bad := func(b *G.Node) []*G.Node { h := good(3); h[i] = b; return h }
			if hp.Vec {
				add(hp.Name+" [2] for D=3", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, bad(ell2)...) })
				add("diag: "+hp.Name+" [2] for D=3", func() (*G.Node, error) { return ops.CovDiag(f, x43, bad(ell2)...) })
				add(hp.Name+" a matrix", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, bad(x33)...) })
				if !hp.ScalarOK {
					add(hp.Name+" scalar", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, bad(a)...) })
				}
			} else {
				add(hp.Name+" a vector", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, bad(ell3)...) })
				add(hp.Name+" a matrix", func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, bad(x33)...) })
			}
		}
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
	// Accepted variants: a scalar for a vector that may be one, [1]-shaped scalars.
	one := mx("one", 1)
	var accepted []func() (*G.Node, error)
	for _, f := range covFamilies {
		for _, scalar := range []*G.Node{v, one} {
			var h []*G.Node
			for _, hp := range f.Hypers() {
				if hp.Vec && !hp.ScalarOK {
					h = append(h, ell3)
				} else {
					h = append(h, scalar)
				}
			}
			accepted = append(accepted, func() (*G.Node, error) { return ops.CovMatrix(f, x43, x33, h...) })
		}
	}
	for _, fn := range accepted {
		if _, err := fn(); err != nil {
			t.Errorf("unexpected error %v", err)
		}
	}
}
