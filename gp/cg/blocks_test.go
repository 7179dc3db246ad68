package cg_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// kernelExprs are the kernels the block tests run: registered families, white noise (on the diagonal only), sums,
// products, kernels on chosen columns and a task column.
var kernelExprs = []string{"se", "matern12", "rq", "per", "lin", "white", "se+white", "se*per", "se[0]*matern52[1]", "arccos1", "constant+matern32", "se[0,1]*coregion[2]"}

// testInputs returns n rows of 3 columns, the last an integer task index in {0, 1, 2}.
func testInputs(n int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, 3, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, 2*rng.Float64()-1)
		x.Set(i, 2, float64(i%3))
	}
	return x
}

// buildKernel returns the kernel of expression expr on inputs x, its hyperparameters moved off their initial
// values (so that every gradient is exercised).
func buildKernel(t *testing.T, expr string, x *mat.Dense) gp.Kernel {
	t.Helper()
	e, err := grammar.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	_, d := x.Dims()
	k, err := e.Kernel(grammar.BuildConfig{InputDim: d, Inputs: x.RawMatrix().Data, Lengthscales: []float64{0.9}})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(expr)), 7))
	for _, p := range k.Params() {
		raw := append([]float64(nil), p.Raw()...)
		for i := range raw {
			raw[i] += 0.2 * (rng.Float64() - 0.5)
		}
		if err := p.SetRaw(raw); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func raws(ps []*graph.Param) [][]float64 {
	out := make([][]float64, len(ps))
	for i, p := range ps {
		out[i] = append([]float64(nil), p.Raw()...)
	}
	return out
}

func randBlock(n, c int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	v := make([]float64, n*c)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func maxRel(a, b []float64) float64 {
	scale, diff := 0.0, 0.0
	for i := range a {
		scale = math.Max(scale, math.Max(math.Abs(a[i]), math.Abs(b[i])))
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// Products, diagonals, rows and cross-covariances of the blocks equal those of K formed densely (gp.KernelMatrix),
// for every kernel expression, over edge shapes (one row, a block's rows ± 1, rows not a multiple of the block), K
// kept whole or recomputed.
func TestBlocksMatchDenseKernel(t *testing.T) {
	const block = 7
	for _, expr := range kernelExprs {
		for _, n := range []int{1, 6, 7, 8, 23} {
			x := testInputs(n, uint64(n))
			k := buildKernel(t, expr, x)
			kd, err := gp.KernelMatrix(k, x, x)
			if err != nil {
				t.Fatal(err)
			}
			for _, mem := range []int64{-1, 0, 1} { // recomputed, kept, strips
				b, err := cg.NewBlocks(k, cg.BlocksOptions{Block: block, Memory: mem, Strips: mem == 1})
				if err != nil {
					t.Fatalf("%s: %v", expr, err)
				}
				if err := b.Bind(x.RawMatrix().Data, n, 3, raws(k.Params())); err != nil {
					t.Fatal(err)
				}
				if b.Kept() != (mem == 0) {
					t.Errorf("%s n=%d memory %d: kept %v", expr, n, mem, b.Kept())
				}
				const c = 3
				v := randBlock(n, c, 1)
				got := make([]float64, n*c)
				if err := b.Mul(v, c, got); err != nil {
					t.Fatal(err)
				}
				var want mat.Dense
				want.Mul(kd, mat.NewDense(n, c, v))
				if e := maxRel(got, want.RawMatrix().Data); e > 1e-12 {
					t.Errorf("%s n=%d memory %d: K·V differs from the dense product by %.3g", expr, n, mem, e)
				}
				diag := make([]float64, n)
				if err := b.Diag(diag); err != nil {
					t.Fatal(err)
				}
				row := make([]float64, n)
				for i := 0; i < n; i++ {
					if math.Abs(diag[i]-kd.At(i, i)) > 1e-12*math.Max(1, math.Abs(kd.At(i, i))) {
						t.Errorf("%s n=%d: diag[%d] = %v, want %v", expr, n, i, diag[i], kd.At(i, i))
					}
				}
				for _, i := range []int{0, n / 2, n - 1} {
					if err := b.Row(i, row); err != nil {
						t.Fatal(err)
					}
					if e := maxRel(row, mat.Row(nil, i, kd)); e > 1e-12 {
						t.Errorf("%s n=%d: row %d differs by %.3g", expr, n, i, e)
					}
				}
				// Row blocks: the strips of [0, 7) and [7, n) add up to the product.
				if n > block {
					strips := make([]float64, n*c)
					if err := b.MulRows(0, block, v, c, strips[:block*c]); err != nil {
						t.Fatal(err)
					}
					if err := b.MulRows(block, n, v, c, strips[block*c:]); err != nil {
						t.Fatal(err)
					}
					if e := maxRel(strips, want.RawMatrix().Data); e > 1e-12 {
						t.Errorf("%s n=%d: row strips differ by %.3g", expr, n, e)
					}
					if err := b.MulRows(1, block, v, c, strips[:(block-1)*c]); err == nil {
						t.Errorf("%s: MulRows took rows off the block boundaries", expr)
					}
				}
				// Test rows: K(xs, X)·v, K(X, xs) and diag K(xs, xs).
				xs := testInputs(9, 77)
				for i := 0; i < 9; i++ {
					xs.Set(i, 2, float64(i%min(3, n))) // the tasks the kernel was built for
				}
				ks, err := gp.KernelMatrix(k, xs, x)
				if err != nil {
					t.Fatal(err)
				}
				cm, sq := make([]float64, 9*c), make([]float64, 9)
				if err := b.CrossMul(xs.RawMatrix().Data, 9, v, c, cm, sq); err != nil {
					t.Fatal(err)
				}
				for i := range sq {
					want := 0.0
					for j := 0; j < n; j++ {
						want += ks.At(i, j) * ks.At(i, j)
					}
					if math.Abs(sq[i]-want) > 1e-12*math.Max(1, want) {
						t.Errorf("%s n=%d: ‖K(X,x*)‖² of test row %d = %v, want %v", expr, n, i, sq[i], want)
					}
				}
				var wantC mat.Dense
				wantC.Mul(ks, mat.NewDense(n, c, v))
				if e := maxRel(cm, wantC.RawMatrix().Data); e > 1e-12 {
					t.Errorf("%s n=%d: K(xs,X)·V differs by %.3g", expr, n, e)
				}
				cr := make([]float64, n*5)
				if err := b.Cross(xs.RawMatrix().Data[:5*3], 5, cr); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					for j := 0; j < 5; j++ {
						if math.Abs(cr[i*5+j]-ks.At(j, i)) > 1e-12*math.Max(1, math.Abs(ks.At(j, i))) {
							t.Fatalf("%s n=%d: K(X,xs)[%d,%d] = %v, want %v", expr, n, i, j, cr[i*5+j], ks.At(j, i))
						}
					}
				}
				td := make([]float64, 9)
				if err := b.TestDiag(xs.RawMatrix().Data, 9, td); err != nil {
					t.Fatal(err)
				}
				kss, _ := gp.KernelMatrix(k, xs, xs)
				for i := range td {
					if math.Abs(td[i]-kss.At(i, i)) > 1e-12*math.Max(1, math.Abs(kss.At(i, i))) {
						t.Errorf("%s: test diag[%d] = %v, want %v", expr, i, td[i], kss.At(i, i))
					}
				}
			}
		}
	}
}

// bilinear returns Σ_ab (A·Bᵀ)_ab K_ab for K formed densely at the kernel's current hyperparameters.
func bilinear(t *testing.T, k gp.Kernel, x *mat.Dense, a, b []float64, c int) float64 {
	kd, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	s := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			u := 0.0
			for m := 0; m < c; m++ {
				u += a[i*c+m] * b[j*c+m]
			}
			s += u * kd.At(i, j)
		}
	}
	return s
}

// fdGrad returns the central finite-difference gradient of f in every raw hyperparameter of k.
func fdGrad(t *testing.T, k gp.Kernel, f func() float64) [][]float64 {
	out := make([][]float64, len(k.Params()))
	for j, p := range k.Params() {
		raw := p.Raw()
		out[j] = make([]float64, len(raw))
		for e := range raw {
			x0 := raw[e]
			h := 1e-5 * math.Max(1, math.Abs(x0))
			raw[e] = x0 + h
			fp := f()
			raw[e] = x0 - h
			fm := f()
			raw[e] = x0
			out[j][e] = (fp - fm) / (2 * h)
		}
	}
	return out
}

func checkGrad(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	for j := range want {
		for e := range want[j] {
			a, fd := got[j][e], want[j][e]
			diff := math.Abs(a - fd)
			if diff > 1e-8 && diff > 1e-6*math.Max(math.Abs(a), math.Abs(fd)) {
				t.Errorf("%s: ∂/∂θ[%d][%d] = %.10g, finite differences %.10g", what, j, e, a, fd)
			}
		}
	}
}

// The gradients of Σ (A·Bᵀ) ⊙ K (BilinearGrad, and its row strips) and of a function of the pivot columns
// (PivotGrad) in every raw hyperparameter agree with central finite differences of K formed densely, for every
// kernel expression.
func TestBlocksGradientsFiniteDifferences(t *testing.T) {
	const n, c, block = 17, 2, 6
	x := testInputs(n, 5)
	for _, expr := range kernelExprs {
		k := buildKernel(t, expr, x)
		b, err := cg.NewBlocks(k, cg.BlocksOptions{Block: block})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Bind(x.RawMatrix().Data, n, 3, raws(k.Params())); err != nil {
			t.Fatal(err)
		}
		am, bm := randBlock(n, c, 11), randBlock(n, c, 12)
		got := make([][]float64, len(k.Params()))
		for j, p := range k.Params() {
			got[j] = make([]float64, p.Size())
		}
		if err := b.BilinearGrad(am, bm, c, got); err != nil {
			t.Fatal(err)
		}
		want := fdGrad(t, k, func() float64 { return bilinear(t, k, x, am, bm, c) })
		checkGrad(t, expr+" BilinearGrad", got, want)
		// Strips [0, 6), [6, 12), [12, 17) add up to the same gradient.
		strips := make([][]float64, len(got))
		for j := range strips {
			strips[j] = make([]float64, len(got[j]))
		}
		for lo := 0; lo < n; lo += block {
			if err := b.BilinearGradRows(lo, min(n, lo+block), am, bm, c, strips); err != nil {
				t.Fatal(err)
			}
		}
		checkGrad(t, expr+" BilinearGradRows", strips, want)

		piv := []int{4, 0, 13}
		u, w := randBlock(n, 3, 13), randBlock(3, 3, 14)
		for j := range got {
			clear(got[j])
		}
		if err := b.PivotGrad(piv, u, w, got); err != nil {
			t.Fatal(err)
		}
		want = fdGrad(t, k, func() float64 {
			kd, err := gp.KernelMatrix(k, x, x)
			if err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for i := 0; i < n; i++ {
				for p, j := range piv {
					s += u[i*3+p] * kd.At(i, j)
				}
			}
			for q, i := range piv {
				for p, j := range piv {
					s += w[q*3+p] * kd.At(i, j)
				}
			}
			return s
		})
		checkGrad(t, expr+" PivotGrad", got, want)
	}
}

// The products and gradients have the same bits for every GOMAXPROCS.
func TestBlocksDeterministic(t *testing.T) {
	const n, c = 70, 4
	x := testInputs(n, 8)
	k := buildKernel(t, "se+white", x)
	run := func(procs int) ([]float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		b, err := cg.NewBlocks(k, cg.BlocksOptions{Block: 9, Memory: -1})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Bind(x.RawMatrix().Data, n, 3, raws(k.Params())); err != nil {
			t.Fatal(err)
		}
		out := make([]float64, n*c)
		if err := b.Mul(randBlock(n, c, 2), c, out); err != nil {
			t.Fatal(err)
		}
		g := [][]float64{make([]float64, 1), make([]float64, 3), make([]float64, 1)}
		if err := b.BilinearGrad(randBlock(n, c, 3), randBlock(n, c, 4), c, g); err != nil {
			t.Fatal(err)
		}
		return out, append(append(g[0], g[1]...), g[2]...)
	}
	p1, g1 := run(1)
	for _, procs := range []int{2, 4} {
		p, g := run(procs)
		for i := range p1 {
			if p[i] != p1[i] {
				t.Fatalf("GOMAXPROCS %d: product entry %d %v, with 1: %v", procs, i, p[i], p1[i])
			}
		}
		for i := range g1 {
			if g[i] != g1[i] {
				t.Fatalf("GOMAXPROCS %d: gradient entry %d %v, with 1: %v", procs, i, g[i], g1[i])
			}
		}
	}
}
