package ops_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gseRef is Cheng & Boots (2017) App. C eq. 19 written out literally on explicit length-scales:
// ψ_aᵀψ_b = Π_d (2 la_d lb_d/(la_d² + lb_d²))^{1/2} exp(−(a_d − b_d)²/(la_d² + lb_d²)).
func gseRef(a, la, b, lb []float64) float64 {
	k := 1.0
	for d := range a {
		den := la[d]*la[d] + lb[d]*lb[d]
		k *= math.Sqrt(2*la[d]*lb[d]/den) * math.Exp(-(a[d]-b[d])*(a[d]-b[d])/den)
	}
	return k
}

// gseBasisLS returns l_{m,d} = s_d·c_{m,d} (the paper's l_{x,d} = s_d·c_{x,d}) for basis m.
func gseBasisLS(c, s []float64, m int) []float64 {
	d := len(s)
	l := make([]float64, d)
	for e := range l {
		l[e] = s[e] * c[m*d+e]
	}
	return l
}

// gseRefCross is σ·ψ_{z_m}ᵀφ_{x_n} for data rows (c = 1, so l = s) against basis rows.
func gseRefCross(x, z, c, s []float64, n, m int, v float64) []float64 {
	d := len(s)
	k := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			k[i*m+j] = v * gseRef(x[i*d:i*d+d], s, z[j*d:j*d+d], gseBasisLS(c, s, j))
		}
	}
	return k
}

func gseRefBasis(z, c, s []float64, m int, v float64) []float64 {
	d := len(s)
	k := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			k[i*m+j] = v * gseRef(z[i*d:i*d+d], gseBasisLS(c, s, i), z[j*d:j*d+d], gseBasisLS(c, s, j))
		}
	}
	return k
}

// gseInputs returns bases z [m,d], factors c [m,d] in [0.4, 2.5), prior length-scales s [d] and a variance.
func gseInputs(rng *rand.Rand, m, d int, vecVar bool) (z, c, s, v gradcheck.Input) {
	z = gradcheck.Random("z", rng, -1.5, 1.5, m, d)
	c = gradcheck.Random("zls", rng, 0.4, 2.5, m, d)
	s = gradcheck.Random("ls", rng, 0.6, 1.6, d)
	if vecVar {
		v = gradcheck.Random("variance", rng, 0.5, 1.5, 1)
	} else {
		v = gradcheck.Random("variance", rng, 0.5, 1.5)
	}
	return
}

func TestGSECrossGrad(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		for _, vecVar := range []bool{false, true} {
			t.Run(fmt.Sprintf("D=%d/vecVar=%v", d, vecVar), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(71, uint64(d)))
				x := gradcheck.Random("x", rng, -1.5, 1.5, 5, d)
				z, c, s, v := gseInputs(rng, 4, d, vecVar)
				copy(z.Value[d:2*d], x.Value[2*d:3*d]) // a coincident data/basis pair
				gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
					return ops.GSECross(n[0], n[1], n[2], n[3], n[4])
				}, []gradcheck.Input{x, z, c, s, v})
			})
		}
	}
	// x and z the same node: the two gradients add up.
	t.Run("shared x=z", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(72, 3))
		z, c, s, v := gseInputs(rng, 4, 2, false)
		gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
			return ops.GSECross(n[0], n[0], n[1], n[2], n[3])
		}, []gradcheck.Input{z, c, s, v})
	})
}

func TestGSEBasisGrad(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		for _, vecVar := range []bool{false, true} {
			t.Run(fmt.Sprintf("D=%d/vecVar=%v", d, vecVar), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(73, uint64(d)))
				z, c, s, v := gseInputs(rng, 5, d, vecVar)
				copy(z.Value[3*d:4*d], z.Value[0:d]) // two bases at the same location (different c)
				gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
					return ops.GSEBasis(n[0], n[1], n[2], n[3])
				}, []gradcheck.Input{z, c, s, v})
			})
		}
	}
}

func TestGSEGolden(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 4} {
		t.Run(fmt.Sprintf("D=%d", d), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(74, uint64(d)))
			n, m := 7, 6
			x := gradcheck.Random("x", rng, -2, 2, n, d)
			z, c, s, v := gseInputs(rng, m, d, false)
			copy(z.Value[0:d], x.Value[d:2*d])
			g := G.NewGraph()
			ns := gradcheck.Leaves(g, []gradcheck.Input{x, z, c, s, v})
			kc, err := ops.GSECross(ns[0], ns[1], ns[2], ns[3], ns[4])
			if err != nil {
				t.Fatal(err)
			}
			kb, err := ops.GSEBasis(ns[1], ns[2], ns[3], ns[4])
			if err != nil {
				t.Fatal(err)
			}
			got := gradcheck.Eval(t, g, kc, kb)
			for name, p := range map[string]struct {
				got, want []float64
				cols      int
			}{
				"GSECross": {got[0], gseRefCross(x.Value, z.Value, c.Value, s.Value, n, m, v.Value[0]), m},
				"GSEBasis": {got[1], gseRefBasis(z.Value, c.Value, s.Value, m, v.Value[0]), m},
			} {
				for i := range p.want {
					if !covClose(p.got[i], p.want[i], 1e-13) {
						t.Errorf("%s[%d,%d] = %.17g, reference %.17g", name, i/p.cols, i%p.cols, p.got[i], p.want[i])
					}
				}
			}
		})
	}
}

// TestGSEReducesToSE: with every basis factor c = 1 (l = s, "ψ_x = φ_x when c_{x,d} = 1", App. C) both ops equal
// the SE-ARD CovMatrix with the same variance and length-scales.
func TestGSEReducesToSE(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(75, 1))
	n, m, d := 6, 5, 3
	x := gradcheck.Random("x", rng, -2, 2, n, d)
	z, c, s, v := gseInputs(rng, m, d, false)
	for i := range c.Value {
		c.Value[i] = 1
	}
	g := G.NewGraph()
	ns := gradcheck.Leaves(g, []gradcheck.Input{x, z, c, s, v})
	kc, err := ops.GSECross(ns[0], ns[1], ns[2], ns[3], ns[4])
	if err != nil {
		t.Fatal(err)
	}
	kb, err := ops.GSEBasis(ns[1], ns[2], ns[3], ns[4])
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ops.CovMatrix(covSE, ns[0], ns[1], ns[4], ns[3])
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ops.CovMatrix(covSE, ns[1], ns[1], ns[4], ns[3])
	if err != nil {
		t.Fatal(err)
	}
	r := gradcheck.Eval(t, g, kc, kb, sc, sb)
	for i := range r[0] {
		if !covClose(r[0][i], r[2][i], 1e-13) {
			t.Errorf("GSECross[%d] = %.17g, SquaredExp %.17g", i, r[0][i], r[2][i])
		}
	}
	for i := range r[1] {
		if !covClose(r[1][i], r[3][i], 1e-13) {
			t.Errorf("GSEBasis[%d] = %.17g, SquaredExp %.17g", i, r[1][i], r[3][i])
		}
	}
}

// TestGSECrossIsBasisWithUnitFactor: a basis with c = 1 is a data point, so GSEBasis row i equals GSECross of z_i.
func TestGSECrossIsBasisWithUnitFactor(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(76, 1))
	m, d := 6, 2
	z, c, s, v := gseInputs(rng, m, d, false)
	c.Value[2*d], c.Value[2*d+1] = 1, 1
	x := gradcheck.Input{Name: "x", Shape: []int{1, d}, Value: append([]float64(nil), z.Value[2*d:3*d]...)}
	g := G.NewGraph()
	ns := gradcheck.Leaves(g, []gradcheck.Input{x, z, c, s, v})
	kc, err := ops.GSECross(ns[0], ns[1], ns[2], ns[3], ns[4])
	if err != nil {
		t.Fatal(err)
	}
	kb, err := ops.GSEBasis(ns[1], ns[2], ns[3], ns[4])
	if err != nil {
		t.Fatal(err)
	}
	r := gradcheck.Eval(t, g, kc, kb)
	for j := 0; j < m; j++ {
		if !covClose(r[0][j], r[1][2*m+j], 1e-14) {
			t.Errorf("GSECross[0,%d] = %.17g, GSEBasis[2,%d] = %.17g", j, r[0][j], j, r[1][2*m+j])
		}
	}
}

func TestGSEBasisSymmetricPSD(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		t.Run(fmt.Sprintf("D=%d", d), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(77, uint64(d)))
			m := 20
			z, c, s, v := gseInputs(rng, m, d, false)
			for i := range c.Value { // factors over two orders of magnitude
				c.Value[i] = math.Exp(rng.Float64()*4.6 - 2.3)
			}
			g := G.NewGraph()
			ns := gradcheck.Leaves(g, []gradcheck.Input{z, c, s, v})
			kb, err := ops.GSEBasis(ns[0], ns[1], ns[2], ns[3])
			if err != nil {
				t.Fatal(err)
			}
			k := gradcheck.Eval(t, g, kb)[0]
			sym := mat.NewSymDense(m, nil)
			for i := 0; i < m; i++ {
				if k[i*m+i] != v.Value[0] {
					t.Errorf("K[%d,%d] = %.17g, want the variance %.17g", i, i, k[i*m+i], v.Value[0])
				}
				for j := i; j < m; j++ {
					if k[i*m+j] != k[j*m+i] {
						t.Errorf("K[%d,%d] = %.17g ≠ K[%d,%d] = %.17g", i, j, k[i*m+j], j, i, k[j*m+i])
					}
					w := k[i*m+j]
					if i == j {
						w += 1e-8
					}
					sym.SetSym(i, j, w)
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(sym) {
				t.Error("GSEBasis + 1e-8·I is not positive definite")
			}
			var eig mat.EigenSym
			if !eig.Factorize(sym, false) {
				t.Fatal("eigendecomposition failed")
			}
			if lo := eig.Values(nil)[0]; lo < 1e-8-1e-12 {
				t.Errorf("smallest eigenvalue %g of K + 1e-8·I", lo)
			}
		})
	}
}

func TestGSEHash(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("x"))
	x3 := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x3"))
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("z"))
	c := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("c"))
	s := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("s"))
	v := G.NewScalar(g, tensor.Float64, G.WithName("v"))
	v1 := G.NewVector(g, tensor.Float64, G.WithShape(1), G.WithName("v1"))
	builds := map[string]func() (*G.Node, error){
		"cross(x)":      func() (*G.Node, error) { return ops.GSECross(x, z, c, s, v) },
		"cross(x3)":     func() (*G.Node, error) { return ops.GSECross(x3, z, c, s, v) },
		"cross(z)":      func() (*G.Node, error) { return ops.GSECross(z, z, c, s, v) },
		"cross(x3,v1)":  func() (*G.Node, error) { return ops.GSECross(x3, z, c, s, v1) },
		"cross(x3,c,z)": func() (*G.Node, error) { return ops.GSECross(x3, c, z, s, v) },
		"basis":         func() (*G.Node, error) { return ops.GSEBasis(z, c, s, v) },
		"basis(v1)":     func() (*G.Node, error) { return ops.GSEBasis(z, c, s, v1) },
		"basis(c,z)":    func() (*G.Node, error) { return ops.GSEBasis(c, z, s, v) },
		"SE(z,z)":       func() (*G.Node, error) { return ops.CovMatrix(covSE, z, z, v, s) },
	}
	nodes := map[string]*G.Node{}
	for name, b := range builds {
		n, err := b()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := b()
		if err != nil {
			t.Fatalf("%s again: %v", name, err)
		}
		if again != n || again.Hashcode() != n.Hashcode() {
			t.Errorf("%s built twice: distinct nodes", name)
		}
		nodes[name] = n
	}
	for a, na := range nodes {
		for b, nb := range nodes {
			if a >= b {
				continue
			}
			if na == nb || na.Hashcode() == nb.Hashcode() {
				t.Errorf("%s and %s: same node or node hash", a, b)
			}
		}
	}
	if nodes["cross(x)"].Op().Hashcode() == nodes["cross(x3)"].Op().Hashcode() {
		t.Error("GSECross over [4,2] and [3,2] data: same op hash")
	}
	if nodes["cross(z)"].Op().Hashcode() == nodes["basis"].Op().Hashcode() {
		t.Error("GSECross and GSEBasis with the same [3,3] output: same op hash")
	}
}

func TestGSEShapeErrors(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	mk := func(name string, shape ...int) *G.Node {
		if len(shape) == 0 {
			return G.NewScalar(g, tensor.Float64, G.WithName(name))
		}
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name))
	}
	x, z, c, s, v := mk("x", 4, 2), mk("z", 3, 2), mk("c", 3, 2), mk("s", 2), mk("v")
	bad := map[string]func() (*G.Node, error){
		"x cols":    func() (*G.Node, error) { return ops.GSECross(mk("x3", 4, 3), z, c, s, v) },
		"c rows":    func() (*G.Node, error) { return ops.GSECross(x, z, mk("c4", 4, 2), s, v) },
		"c vector":  func() (*G.Node, error) { return ops.GSEBasis(z, mk("cv", 2), s, v) },
		"s len":     func() (*G.Node, error) { return ops.GSEBasis(z, c, mk("s3", 3), v) },
		"s scalar":  func() (*G.Node, error) { return ops.GSEBasis(z, c, mk("ss"), v) },
		"v vector":  func() (*G.Node, error) { return ops.GSEBasis(z, c, s, mk("v2", 2)) },
		"z vector":  func() (*G.Node, error) { return ops.GSEBasis(mk("zv", 3), c, s, v) },
		"x vector":  func() (*G.Node, error) { return ops.GSECross(mk("xv", 2), z, c, s, v) },
		"cross nil": func() (*G.Node, error) { return ops.GSECross(nil, z, c, s, v) },
	}
	for name, b := range bad {
		if _, err := b(); !errors.Is(err, ops.ErrShape) {
			t.Errorf("%s: err = %v, want ErrShape", name, err)
		}
	}
}

// TestGSEDoDiffMatchesSymDiff runs both ops through the LispMachine (DoDiff: the per-input backward) and the
// TapeMachine (SymDiff: the joint backward) and requires the same gradients for every operand.
func TestGSEDoDiffMatchesSymDiff(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(78, 1))
	x := gradcheck.Random("x", rng, -1, 1, 4, 2)
	z, c, s, v := gseInputs(rng, 3, 2, false)
	w1 := gradcheck.Random("w1", rng, -1, 1, 4, 3)
	w2 := gradcheck.Random("w2", rng, -1, 1, 3, 3)
	build := func() (*G.ExprGraph, []*G.Node) {
		g := G.NewGraph()
		ns := gradcheck.Leaves(g, []gradcheck.Input{x, z, c, s, v, w1, w2})
		must := func(n *G.Node, err error) *G.Node {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		kc := must(ops.GSECross(ns[0], ns[1], ns[2], ns[3], ns[4]))
		kb := must(ops.GSEBasis(ns[1], ns[2], ns[3], ns[4]))
		loss := must(ops.Add(must(ops.Dot(ns[5], kc)), must(ops.Dot(ns[6], kb))))
		return g, append([]*G.Node{loss}, ns[:5]...)
	}
	g1, n1 := build()
	if _, err := G.Grad(n1[0], n1[1:]...); err != nil {
		t.Fatal(err)
	}
	tm := G.NewTapeMachine(g1)
	defer tm.Close()
	if err := tm.RunAll(); err != nil {
		t.Fatal(err)
	}
	g2, n2 := build()
	lm := G.NewLispMachine(g2)
	defer lm.Close()
	if err := lm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(n1); i++ {
		a, err := n1[i].Grad()
		if err != nil {
			t.Fatal(err)
		}
		b, err := n2[i].Grad()
		if err != nil {
			t.Fatal(err)
		}
		av, bv := gseFlat(a), gseFlat(b)
		for j := range av {
			if !covClose(bv[j], av[j], 1e-12) {
				t.Errorf("operand %d entry %d: DoDiff %.17g, SymDiff %.17g", i-1, j, bv[j], av[j])
			}
		}
	}
}

func gseFlat(v G.Value) []float64 {
	switch t := v.(type) {
	case *G.F64:
		return []float64{float64(*t)}
	case *tensor.Dense:
		return t.Float64s()
	}
	return nil
}

func gseRefPair(z1, c1, z2, c2, s []float64, m1, m2 int, v float64) []float64 {
	d := len(s)
	k := make([]float64, m1*m2)
	for i := 0; i < m1; i++ {
		for j := 0; j < m2; j++ {
			k[i*m2+j] = v * gseRef(z1[i*d:i*d+d], gseBasisLS(c1, s, i), z2[j*d:j*d+d], gseBasisLS(c2, s, j))
		}
	}
	return k
}

func TestGSEPairGrad(t *testing.T) {
	t.Parallel()
	for _, d := range []int{1, 3} {
		t.Run(fmt.Sprintf("D=%d", d), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(79, uint64(d)))
			z1 := gradcheck.Random("z1", rng, -1.5, 1.5, 3, d)
			c1 := gradcheck.Random("zls1", rng, 0.4, 2.5, 3, d)
			z2, c2, s, v := gseInputs(rng, 4, d, false)
			copy(z2.Value[0:d], z1.Value[d:2*d]) // a coincident pair
			gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
				return ops.GSEPair(n[0], n[1], n[2], n[3], n[4], n[5])
			}, []gradcheck.Input{z1, c1, z2, c2, s, v})
		})
	}
	t.Run("shared z,c", func(t *testing.T) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(80, 1))
		z, c, s, v := gseInputs(rng, 4, 2, true)
		gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
			return ops.GSEPair(n[0], n[1], n[0], n[1], n[2], n[3])
		}, []gradcheck.Input{z, c, s, v})
	})
}

// TestGSEPairConsistency: golden values against the literal eq. 19, GSEPair(z, c, z, c) = GSEBasis(z, c) and
// GSEPair(x, 1, z, c) = GSECross(x, z, c).
func TestGSEPairConsistency(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(81, 1))
	n, m, d := 4, 5, 3
	x := gradcheck.Random("x", rng, -2, 2, n, d)
	ones := gradcheck.Input{Name: "ones", Shape: []int{n, d}, Value: make([]float64, n*d)}
	for i := range ones.Value {
		ones.Value[i] = 1
	}
	z, c, s, v := gseInputs(rng, m, d, false)
	g := G.NewGraph()
	ns := gradcheck.Leaves(g, []gradcheck.Input{x, ones, z, c, s, v})
	must := func(k *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	pxz := must(ops.GSEPair(ns[0], ns[1], ns[2], ns[3], ns[4], ns[5]))
	cross := must(ops.GSECross(ns[0], ns[2], ns[3], ns[4], ns[5]))
	pzz := must(ops.GSEPair(ns[2], ns[3], ns[2], ns[3], ns[4], ns[5]))
	basis := must(ops.GSEBasis(ns[2], ns[3], ns[4], ns[5]))
	r := gradcheck.Eval(t, g, pxz, cross, pzz, basis)
	ref := gseRefPair(x.Value, ones.Value, z.Value, c.Value, s.Value, n, m, v.Value[0])
	for i := range ref {
		if !covClose(r[0][i], ref[i], 1e-13) || !covClose(r[1][i], r[0][i], 1e-14) {
			t.Errorf("[%d]: GSEPair(x,1,z,c) %.17g, GSECross %.17g, reference %.17g", i, r[0][i], r[1][i], ref[i])
		}
	}
	ref = gseRefPair(z.Value, c.Value, z.Value, c.Value, s.Value, m, m, v.Value[0])
	for i := range ref {
		if !covClose(r[2][i], ref[i], 1e-13) || !covClose(r[3][i], r[2][i], 1e-14) {
			t.Errorf("[%d]: GSEPair(z,c,z,c) %.17g, GSEBasis %.17g, reference %.17g", i, r[2][i], r[3][i], ref[i])
		}
	}
}

func TestGSEPairHashAndShapes(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("z"))
	c := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("c"))
	z2 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("z2"))
	c2 := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("c2"))
	s := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("s"))
	v := G.NewScalar(g, tensor.Float64, G.WithName("v"))
	pzz, err := ops.GSEPair(z, c, z, c, s, v)
	if err != nil {
		t.Fatal(err)
	}
	pcz, err := ops.GSEPair(c, z, z, c, s, v)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ops.GSEPair(z2, c2, z, c, s, v)
	if err != nil {
		t.Fatal(err)
	}
	basis, err := ops.GSEBasis(z, c, s, v)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ops.GSEPair(z, c, z, c, s, v)
	if err != nil {
		t.Fatal(err)
	}
	if again != pzz {
		t.Error("GSEPair built twice: distinct nodes")
	}
	// GSEBasis(z, c) is GSEPair(z, c, z, c): the same computation, so the engine may (and does) merge them.
	if basis != pzz {
		t.Error("GSEBasis(z, c) and GSEPair(z, c, z, c): distinct nodes for one computation")
	}
	all := []*G.Node{pzz, pcz, p2}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[i] == all[j] || all[i].Hashcode() == all[j].Hashcode() {
				t.Errorf("nodes %d and %d: same node or hash", i, j)
			}
		}
	}
	if pzz.Op().Hashcode() == p2.Op().Hashcode() {
		t.Error("GSEPair [3,3] and [2,3]: same op hash")
	}
	for name, f := range map[string]func() (*G.Node, error){
		"c1 rows": func() (*G.Node, error) { return ops.GSEPair(z2, c, z, c, s, v) },
		"z1 cols": func() (*G.Node, error) {
			return ops.GSEPair(G.NewMatrix(g, tensor.Float64, G.WithShape(3, 3), G.WithName("z3")), c, z, c, s, v)
		},
		"c2 rows": func() (*G.Node, error) { return ops.GSEPair(z, c, z, c2, s, v) },
	} {
		if _, err := f(); !errors.Is(err, ops.ErrShape) {
			t.Errorf("%s: err = %v, want ErrShape", name, err)
		}
	}
}
