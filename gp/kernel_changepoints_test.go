package gp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// changePointsCase returns SE(ℓ = 0.5·ard) → SE(ℓ = 2·ard) at D = d, switching on column col at c = 0.3, s = 2.5,
// with Params prefixed name.
func changePointsCase(name string, d, col int) (*gp.ChangePoints, error) {
	ls := func(f float64) []float64 {
		l := make([]float64, d)
		for i := range l {
			l[i] = f * (0.7 + 0.3*float64(i))
		}
		return l
	}
	k1, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".k1", InputDim: d, Variance: 0.8, Lengthscales: ls(0.5)})
	if err != nil {
		return nil, err
	}
	k2, err := gp.NewSquaredExp(gp.KernelConfig{Name: name + ".k2", InputDim: d, Variance: 1.9, Lengthscales: ls(2)})
	if err != nil {
		return nil, err
	}
	return gp.NewChangePoints(k1, k2, gp.ChangePointsConfig{Name: name, Column: col, Location: 0.3, Steepness: 2.5})
}

func init() {
	addKernelTest(kernelTest{
		family: "changepoints",
		conform: func(d int, _ []float64) []namedKernel {
			cs := []namedKernel{{"ChangePoints", func() (gp.Kernel, error) { return changePointsCase("cp", d, d-1) }}}
			if d > 1 { // the switch on column 0 alone (Active), over an SE of all columns
				cs = append(cs, namedKernel{"ChangePoints[0]", func() (gp.Kernel, error) {
					k, err := changePointsCase("cp1", 1, 0)
					if err != nil {
						return nil, err
					}
					return gp.NewActive(k, d, []int{0})
				}})
			}
			return cs
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return changePointsCase("cp", 2, 2) },
			func() (gp.Kernel, error) { return changePointsCase("cp", 2, -1) },
			func() (gp.Kernel, error) {
				k1, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
				k2, _ := gp.NewSquaredExp(gp.KernelConfig{Name: "b", InputDim: 3})
				return gp.NewChangePoints(k1, k2, gp.ChangePointsConfig{})
			},
			func() (gp.Kernel, error) {
				k1, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
				return gp.NewChangePoints(k1, nil, gp.ChangePointsConfig{})
			},
			func() (gp.Kernel, error) {
				k1, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
				k2, _ := gp.NewSquaredExp(gp.KernelConfig{Name: "b", InputDim: 1})
				return gp.NewChangePoints(k1, k2, gp.ChangePointsConfig{Location: math.NaN()})
			},
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"ChangePoints", gp.KindChangePoints, func() (any, error) { return changePointsCase("cp", 3, 1) }},
				{"Active(ChangePoints)", gp.KindActive, func() (any, error) {
					k, err := changePointsCase("cp", 1, 0)
					if err != nil {
						return nil, err
					}
					return gp.NewActive(k, 3, []int{2})
				}},
			}
		},
		part: func(_ kernelConfigFunc, name string) (gp.Kernel, error) {
			if name == "" {
				name = "changepoints"
			}
			return changePointsCase(name, 3, 0)
		},
	})
}

// TestChangePointsMatrix: K and KDiag equal (1 − σ(x)) k1(x, x') (1 − σ(x')) + σ(x) k2(x, x') σ(x') computed in
// plain Go (Lloyd et al. 2014, sec. 3), to 1e-13, for switches on column 0 and column 2 of the same inputs in one
// graph (the column is in the switch op's hash: two kernels differing only in it are not merged).
func TestChangePointsMatrix(t *testing.T) {
	t.Parallel()
	const n, m, d = 6, 5, 3
	rng := rand.New(rand.NewPCG(21, 22))
	x1, x2 := gptest.RandomMatrix(rng, n, d, -2, 2), gptest.RandomMatrix(rng, m, d, -2, 2)
	g := graph.New(graph.Options{})
	a, b := g.Const("x1", x1, n, d), g.Const("x2", x2, m, d)
	ks := map[int]*gp.ChangePoints{}
	outs := map[string]*graph.Node{}
	for _, col := range []int{0, 2} {
		k, err := changePointsCase("cp", d, col)
		if err != nil {
			t.Fatal(err)
		}
		ks[col] = k
		name := string(rune('0' + col))
		outs["k"+name], outs["d"+name] = k.K(a, b), k.KDiag(a)
	}
	prog, err := g.CompileForward(outs)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	se := func(v float64, ell, p, q []float64) float64 {
		r2 := 0.0
		for i := range p {
			z := (p[i] - q[i]) / ell[i]
			r2 += z * z
		}
		return v * math.Exp(-r2/2)
	}
	for col, k := range ks {
		k1, k2 := k.Kernels()
		s1, s2 := k1.(*gp.Stationary), k2.(*gp.Stationary)
		c, s := k.Location.Value()[0], k.Steepness.Value()[0]
		ref := func(p, q []float64) float64 {
			sp, sq := 1/(1+math.Exp(-s*(p[col]-c))), 1/(1+math.Exp(-s*(q[col]-c)))
			return (1-sp)*se(s1.Variance.Value()[0], s1.Lengthscales.Value(), p, q)*(1-sq) +
				sp*se(s2.Variance.Value()[0], s2.Lengthscales.Value(), p, q)*sq
		}
		name := string(rune('0' + col))
		for i := range n {
			p := x1[i*d : (i+1)*d]
			for j := range m {
				want := ref(p, x2[j*d:(j+1)*d])
				if got := prog.Output("k" + name)[i*m+j]; math.Abs(got-want) > 1e-13 {
					t.Errorf("column %d: K[%d,%d] = %v, want %v", col, i, j, got, want)
				}
			}
			if got, want := prog.Output("d" + name)[i], ref(p, p); math.Abs(got-want) > 1e-13 {
				t.Errorf("column %d: KDiag[%d] = %v, want %v", col, i, got, want)
			}
		}
	}
}

// TestChangePointsLimits: far before the location the kernel is k1, far after it k2 (to 1e-12), even at extreme
// steepness (the sigmoid does not overflow).
func TestChangePointsLimits(t *testing.T) {
	t.Parallel()
	k, err := changePointsCase("cp", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Steepness.Set([]float64{1e3}); err != nil {
		t.Fatal(err)
	}
	k1, k2 := k.Kernels()
	for _, side := range []struct {
		x    []float64
		want gp.Kernel
	}{{[]float64{-5, -4.5, -3}, k1}, {[]float64{4, 4.2, 6}, k2}} {
		x := mat.NewDense(3, 1, side.x)
		got, err := gp.KernelMatrix(k, x, x)
		if err != nil {
			t.Fatal(err)
		}
		want, err := gp.KernelMatrix(side.want, x, x)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(got, want, 1e-12) || hasNaN(got) {
			t.Errorf("inputs %v: K = %v, want %v", side.x, mat.Formatted(got), mat.Formatted(want))
		}
	}
}

func hasNaN(m *mat.Dense) bool {
	for _, v := range m.RawMatrix().Data {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

// TestChangePointsFamily: the registered family switches between two SE kernels on column 0, with the name
// prefix on every Param, and usable in sums and products.
func TestChangePointsFamily(t *testing.T) {
	t.Parallel()
	f, ok := gp.LookupKernel("changepoints")
	if !ok {
		t.Fatal("changepoints not registered")
	}
	k, err := f.New(gp.KernelOptions{InputDim: 2, ARD: true, Name: "cp"})
	if err != nil {
		t.Fatal(err)
	}
	cp := k.(*gp.ChangePoints)
	if cp.Column() != 0 || len(k.Params()) != 6 {
		t.Errorf("column %d, params %v", cp.Column(), k.Params())
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gp.NewSum(k, se)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := gp.NewProduct(k, se)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []gp.Kernel{sum, prod} {
		gptest.CheckKernel(t, c, rand.New(rand.NewPCG(5, 6)))
	}
}
