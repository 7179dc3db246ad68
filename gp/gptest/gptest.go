// Package gptest provides conformance checks for gpzoo's building blocks, in the style of net/http/httptest:
// CheckKernel and CheckMean run the properties every implementation must have (shapes, symmetry, positive
// semi-definiteness, diag consistency, finite-difference gradients for every parameter and for the inputs),
// CheckLayer those of a variational layer and CheckLikelihood those of a likelihood (finite-difference
// gradients of the variational expectations, consistency of the predictive functions with them, errors, the
// Spec round trip). A component defined outside gpzoo runs the same suite from its tests.
package gptest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"gonum.org/v1/gonum/mat"
)

// RandomMatrix returns an r×c row-major slice with entries uniform in [lo, hi).
func RandomMatrix(rng *rand.Rand, r, c int, lo, hi float64) []float64 {
	v := make([]float64, r*c)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// evalKernel returns K(X1,X2), K(X1,X1) and KDiag(X1) for data x1 [n,d], x2 [m,d].
func evalKernel(t testing.TB, k gp.Kernel, x1, x2 []float64, n, m, d int) (k12, k11, kd []float64) {
	t.Helper()
	g := graph.New(graph.Options{})
	a, b := g.Input("x1", n, d), g.Input("x2", m, d)
	prog, err := g.CompileForward(map[string]*graph.Node{"k12": k.K(a, b), "k11": k.K(a, a), "kd": k.KDiag(a)})
	if err != nil {
		t.Fatalf("gptest: %v: %v", k, err)
	}
	defer prog.Close()
	if err := prog.Set("x1", x1); err != nil {
		t.Fatal(err)
	}
	if err := prog.Set("x2", x2); err != nil {
		t.Fatal(err)
	}
	if err := prog.Run(); err != nil {
		t.Fatalf("gptest: %v: run: %v", k, err)
	}
	return append([]float64(nil), prog.Output("k12")...), append([]float64(nil), prog.Output("k11")...), append([]float64(nil), prog.Output("kd")...)
}

// CheckKernel runs the kernel conformance suite on k with random inputs from rng:
// shapes; K(X,X) symmetric and positive semi-definite (a Cholesky of K + 1e-8·I succeeds); KDiag equal to the
// diagonal of K(X,X); K(X1,X2) equal to the transpose of K(X2,X1); and central finite-difference checks of the
// gradient with respect to every hyperparameter and to both inputs (X1 and X2 are made Params for that). The
// kernel's categorical columns (gp.CategoricalInputs: a coregion kernel's task column) get random category indices
// and stay fixed: the inputs' gradient is checked in the continuous columns.
func CheckKernel(t *testing.T, k gp.Kernel, rng *rand.Rand) {
	t.Helper()
	const n, m = 6, 4
	d := k.InputDim()
	cats := gp.CategoricalInputs(k)
	x1 := kernelInputs(rng, n, d, cats)
	x2 := kernelInputs(rng, m, d, cats)
	k12, k11, kd := evalKernel(t, k, x1, x2, n, m, d)
	if len(k12) != n*m || len(k11) != n*n || len(kd) != n {
		t.Fatalf("%v: output sizes %d, %d, %d; want %d, %d, %d", k, len(k12), len(k11), len(kd), n*m, n*n, n)
	}
	k21, _, _ := evalKernel(t, k, x2, x1, m, n, d)
	for i := 0; i < n; i++ {
		if diff := math.Abs(kd[i] - k11[i*n+i]); diff > 1e-12*math.Max(1, math.Abs(kd[i])) {
			t.Errorf("%v: KDiag[%d] = %v, K(X,X)[%d,%d] = %v", k, i, kd[i], i, i, k11[i*n+i])
		}
		for j := 0; j < n; j++ {
			if math.Abs(k11[i*n+j]-k11[j*n+i]) > 1e-12 {
				t.Errorf("%v: K(X,X) not symmetric at (%d,%d)", k, i, j)
			}
		}
		for j := 0; j < m; j++ {
			if math.Abs(k12[i*m+j]-k21[j*n+i]) > 1e-12 {
				t.Errorf("%v: K(X1,X2)[%d,%d] = %v but K(X2,X1)[%d,%d] = %v", k, i, j, k12[i*m+j], j, i, k21[j*n+i])
			}
		}
	}
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := k11[i*n+j]
			if i == j {
				v += 1e-8 // PSD, possibly singular (Linear, Constant): a tiny ridge must make it PD
			}
			sym.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		t.Errorf("%v: K(X,X) + 1e-8 I is not positive definite", k)
	}
	checkKernelGrads(t, k, x1, x2, n, m, d, rng, cats)
}

// kernelInputs returns r random inputs [r,d] uniform in [−1.5, 1.5), with category indices drawn uniformly in the
// kernel's categorical columns (gp.CategoricalInputs: a coregion kernel's task column).
func kernelInputs(rng *rand.Rand, r, d int, cats []gp.CategoricalInput) []float64 {
	x := RandomMatrix(rng, r, d, -1.5, 1.5)
	for _, c := range cats {
		for i := 0; i < r && c.Column < d && c.Levels > 0; i++ {
			x[i*d+c.Column] = float64(rng.IntN(c.Levels))
		}
	}
	return x
}

// inputNode returns the input x [r,d] as a node whose continuous columns are the Param p ([r, dc], nil when every
// column is categorical) and whose categorical columns are constants: p·E + C with E the [dc,d] 0/1 embedding
// of the continuous columns and C the categorical values (exact: each entry is one product by 1 plus zeros), so
// that the finite differences never move a category index.
func inputNode(t *testing.T, g *graph.Graph, name string, x []float64, r, d int, cats []gp.CategoricalInput) (*graph.Node, *graph.Param) {
	t.Helper()
	isCat := make([]bool, d)
	for _, c := range cats {
		if c.Column >= 0 && c.Column < d {
			isCat[c.Column] = true
		}
	}
	var cont []int
	base := make([]float64, r*d)
	for j := 0; j < d; j++ {
		if !isCat[j] {
			cont = append(cont, j)
			continue
		}
		for i := 0; i < r; i++ {
			base[i*d+j] = x[i*d+j]
		}
	}
	if len(cats) == 0 {
		p, err := graph.NewParam(name, x, nil, r, d)
		if err != nil {
			t.Fatal(err)
		}
		return g.Param(p), p
	}
	c := g.Const(name+".categorical", base, r, d)
	if len(cont) == 0 {
		return c, nil
	}
	xc, emb := make([]float64, r*len(cont)), make([]float64, len(cont)*d)
	for q, j := range cont {
		emb[q*d+j] = 1
		for i := 0; i < r; i++ {
			xc[i*len(cont)+q] = x[i*d+j]
		}
	}
	p, err := graph.NewParam(name, xc, nil, r, len(cont))
	if err != nil {
		t.Fatal(err)
	}
	return g.Add(g.MatMul(g.Param(p), g.Const(name+".embed", emb, len(cont), d), false, false), c), p
}

func checkKernelGrads(t *testing.T, k gp.Kernel, x1, x2 []float64, n, m, d int, rng *rand.Rand, cats []gp.CategoricalInput) {
	t.Helper()
	g := graph.New(graph.Options{})
	a, p1 := inputNode(t, g, "X1", x1, n, d, cats)
	b, p2 := inputNode(t, g, "X2", x2, m, d, cats)
	w12 := g.Const("w12", RandomMatrix(rng, n, m, -1, 1), n, m)
	w11 := g.Const("w11", RandomMatrix(rng, n, n, -1, 1), n, n)
	wd := g.Const("wd", RandomMatrix(rng, n, 1, -1, 1), n)
	loss := g.Add(g.Add(g.Dot(w12, k.K(a, b)), g.Dot(w11, k.K(a, a))), g.Dot(wd, k.KDiag(a)))
	prog, err := g.Compile(loss, nil)
	want := len(k.Params()) + 2
	if p1 == nil { // every column categorical: no input to differentiate
		want -= 2
	}
	if errors.Is(err, graph.ErrNotInLoss) && p1 != nil {
		// A kernel that ignores its inputs' values (White, Constant): check the hyperparameters only.
		p1.SetTrainable(false)
		p2.SetTrainable(false)
		want -= 2
		prog, err = g.Compile(loss, nil)
	}
	if err != nil {
		t.Fatalf("gptest: %v: %v", k, err)
	}
	defer prog.Close()
	if got := len(prog.Params()); got != want {
		t.Errorf("%v: the loss reads %d trainable params, want %d (kernel's Params() incomplete?)", k, got, want)
	}
	gradcheck.CheckProgram(t, prog)
}

// CheckMean checks a mean function's output shape [N,Q] and the finite-difference gradients with respect to its
// parameters and its input.
func CheckMean(t *testing.T, mf gp.MeanFunction, d int, rng *rand.Rand) {
	t.Helper()
	const n = 5
	px, err := graph.NewParam("X", RandomMatrix(rng, n, d, -1, 1), nil, n, d)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	out := mf.Mean(g.Param(px))
	if s := out.Shape(); len(s) != 2 || s[0] != n || s[1] != mf.OutputDim() {
		t.Fatalf("mean output shape %v, want [%d %d]", s, n, mf.OutputDim())
	}
	w := g.Const("w", RandomMatrix(rng, n, mf.OutputDim(), -1, 1), n, mf.OutputDim())
	// The square keeps the loss non-linear so a wrong gradient of a linear map cannot hide.
	loss := g.Add(g.Dot(w, out), g.Scale(g.Dot(out, out), 0.5))
	prog, err := g.Compile(loss, nil)
	if errors.Is(err, graph.ErrNotInLoss) { // a mean that ignores its input's values (constant)
		px.SetTrainable(false)
		prog, err = g.Compile(loss, nil)
	}
	if err != nil {
		t.Fatal(fmt.Errorf("gptest: mean: %w", err))
	}
	defer prog.Close()
	gradcheck.CheckProgram(t, prog)
}
