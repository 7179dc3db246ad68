package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
)

// arcCosRef is Cho & Saul's (2009) eqs. 1–4 for one pair with GPflow's weighted inner products, the angle between
// the augmented vectors u = (√w a, √b)/‖·‖ and v (likewise for b) taken as 2·atan2(‖u − v‖, ‖u + v‖).
func arcCosRef(order int) covRef {
	return func(a, b []float64, h [][]float64) float64 {
		s2, w, bias := h[0][0], h[1], h[2][0]
		wd := func(k int) float64 { return w[k%len(w)] }
		na, nb := bias, bias
		for k := range a {
			na += wd(k) * a[k] * a[k]
			nb += wd(k) * b[k] * b[k]
		}
		na, nb = math.Sqrt(na), math.Sqrt(nb)
		dm, dp := bias*math.Pow(1/na-1/nb, 2), bias*math.Pow(1/na+1/nb, 2)
		for k := range a {
			dm += wd(k) * math.Pow(a[k]/na-b[k]/nb, 2)
			dp += wd(k) * math.Pow(a[k]/na+b[k]/nb, 2)
		}
		th := 2 * math.Atan2(math.Sqrt(dm), math.Sqrt(dp))
		var j float64
		switch order {
		case 0:
			j = math.Pi - th
		case 1:
			j = math.Sin(th) + (math.Pi-th)*math.Cos(th)
		default:
			j = 3*math.Sin(th)*math.Cos(th) + (math.Pi-th)*(1+2*math.Cos(th)*math.Cos(th))
		}
		return s2 / math.Pi * j * math.Pow(na*nb, float64(order))
	}
}

func TestArcCosineCov(t *testing.T) {
	t.Parallel()
	for order, f := range gp.ArcCosineCovs {
		if want := fmt.Sprintf("ArcCosine%d", order); f.Name() != want {
			t.Errorf("Name() = %q, want %q", f.Name(), want)
		}
		checkCov(t, f, arcCosRef(order))
	}
}

// TestArcCosineCovGrad checks ∂K/∂x1, ∂K/∂x2 and ∂K/∂θ (σ², w, b) against central differences for the three
// orders away from θ = 0 (distinct random rows, one of them x = 0), D = 1 and 3, ARD and shared weight
// variances, and K(X, X) (x1 and x2 the same node: the diagonal pairs sit at θ = 0 along every perturbation).
func TestArcCosineCovGrad(t *testing.T) {
	t.Parallel()
	for order, f := range gp.ArcCosineCovs {
		for _, d := range []int{1, 3} {
			for _, scalarW := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/D=%d/sharedW=%v", f.Name(), d, scalarW), func(t *testing.T) {
					t.Parallel()
					rng := rand.New(rand.NewPCG(uint64(order), uint64(d)))
					w := gradcheck.Random("weight_variances", rng, 0.5, 1.5, d)
					if scalarW {
						w = gradcheck.Random("weight_variances", rng, 0.5, 1.5)
					}
					h := []gradcheck.Input{gradcheck.Random("variance", rng, 0.5, 1.5), w, gradcheck.Random("bias_variance", rng, 0.2, 1.5)}
					x1 := gradcheck.Random("x1", rng, -1, 1, 5, d)
					x2 := gradcheck.Random("x2", rng, -1, 1, 4, d)
					clear(x1.Value[3*d : 4*d]) // x = 0
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(f, n[0], n[1], n[2:]...)
					}, append([]gradcheck.Input{x1, x2}, h...))
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(f, n[0], n[0], n[1:]...)
					}, append([]gradcheck.Input{x1}, h...))
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovDiag(f, n[0], n[1:]...)
					}, append([]gradcheck.Input{x1}, h...))
				})
			}
		}
	}
}

// At coincident rows of two distinct inputs θ = 0: K = σ² κ_n ‖x‖²ⁿ exactly as the diagonal, every gradient is
// finite; orders 1 and 2 are smooth there and match central differences, order 0 (a kink) has the subgradient 0
// for the coincident pair.
func TestArcCosineCoincident(t *testing.T) {
	t.Parallel()
	for order, f := range gp.ArcCosineCovs {
		t.Run(f.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(order)))
			const d = 2
			x1 := gradcheck.Random("x1", rng, -1, 1, 3, d)
			x2 := gradcheck.Random("x2", rng, -1, 1, 2, d)
			copy(x2.Value[:d], x1.Value[d:2*d]) // x2[0] = x1[1]
			h := []gradcheck.Input{gradcheck.Random("variance", rng, 0.5, 1.5), gradcheck.Random("weight_variances", rng, 0.5, 1.5, d), gradcheck.Random("bias_variance", rng, 0.5, 1.5)}
			in := append([]gradcheck.Input{x1, x2}, h...)
			// K and the gradients of K[1,0] alone.
			wsel := make([]float64, 3*2)
			wsel[1*2+0] = 1
			k, grads := covGrads(t, f, in, wsel)
			diag := arcCosRef(order)(x1.Value[d:2*d], x1.Value[d:2*d], covHyperValues(h))
			if math.Abs(k[2]-diag) > 1e-13*diag {
				t.Errorf("K at coincident rows %.17g, diagonal %.17g", k[2], diag)
			}
			for i, gr := range grads {
				for j, v := range gr {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("gradient %d[%d] = %v", i, j, v)
					}
				}
			}
			if order == 0 {
				for _, v := range append(grads[0], grads[1]...) {
					if v != 0 {
						t.Errorf("order 0 input gradient at θ = 0: %v, want the subgradient 0", grads[:2])
						break
					}
				}
				return
			}
			gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
				return ops.CovMatrix(f, n[0], n[1], n[2:]...)
			}, in)
		})
	}
}

// At x = 0 the norm is √b: k(0, y) = (σ²/π) J_n(θ) (√b ‖y‖)ⁿ with cos θ = √b/‖y‖; with b = 0 (the covariance
// function called directly) a zero norm gives finite values and gradients: cos θ = 0, so k = σ²/2 for n = 0 and
// 0 for n ≥ 1.
func TestArcCosineAtZero(t *testing.T) {
	t.Parallel()
	y := []float64{0.3, -1.2}
	wv := []float64{0.7, 1.4}
	for order, f := range gp.ArcCosineCovs {
		for _, bias := range []float64{0.8, 0} {
			t.Run(fmt.Sprintf("%s/b=%v", f.Name(), bias), func(t *testing.T) {
				x1 := gradcheck.Input{Name: "x1", Shape: []int{2, 2}, Value: []float64{0, 0, 0.5, 0.1}}
				x2 := gradcheck.Input{Name: "x2", Shape: []int{1, 2}, Value: y}
				h := []gradcheck.Input{{Name: "variance", Value: []float64{1.3}}, {Name: "weight_variances", Shape: []int{2}, Value: wv}, {Name: "bias_variance", Value: []float64{bias}}}
				k, grads := covGrads(t, f, append([]gradcheck.Input{x1, x2}, h...), []float64{1, 1})
				ny := math.Sqrt(wv[0]*y[0]*y[0] + wv[1]*y[1]*y[1] + bias)
				want := 1.3 / 2 * float64(1-min(order, 1)) // b = 0
				if bias > 0 {
					th := math.Acos(math.Sqrt(bias) / ny)
					j := [3]float64{math.Pi - th, math.Sin(th) + (math.Pi-th)*math.Cos(th),
						3*math.Sin(th)*math.Cos(th) + (math.Pi-th)*(1+2*math.Cos(th)*math.Cos(th))}[order]
					want = 1.3 / math.Pi * j * math.Pow(math.Sqrt(bias)*ny, float64(order))
				}
				if math.Abs(k[0]-want) > 1e-13 {
					t.Errorf("k(0, y) = %.17g, want %.17g", k[0], want)
				}
				for i, gr := range grads {
					for j, v := range gr {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Errorf("gradient %d[%d] = %v", i, j, v)
						}
					}
				}
				if bias > 0 { // smooth at x = 0: central differences agree
					gradcheck.Check(t, func(g *G.ExprGraph, n []*G.Node) (*G.Node, error) {
						return ops.CovMatrix(f, n[0], n[1], n[2:]...)
					}, append([]gradcheck.Input{x1, x2}, h...))
				}
			})
		}
	}
	// The kernel (b a positive Param) at x = 0: K(X, X) with a zero row is finite and matches KDiag.
	k, err := gp.NewArcCosine(1, gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(2, 2, []float64{0, 0, 1, 2})
	kxx, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	b := k.BiasVariance.Value()[0]
	if math.Abs(kxx.At(0, 0)-b) > 1e-14 || math.IsNaN(kxx.At(0, 1)) {
		t.Errorf("K(0, 0) = %v, want σ² b = %v; K = %v", kxx.At(0, 0), b, mat.Formatted(kxx))
	}
}

func init() {
	for order := range 3 {
		family := fmt.Sprintf("arccos%d", order)
		name := fmt.Sprintf("ArcCosine%d", order)
		arc := func(_ kernelConfigFunc, pname string) (gp.Kernel, error) {
			return gp.NewArcCosine(order, gp.KernelConfig{Name: pname, InputDim: 3, Variance: 0.8, Variances: []float64{0.3, 0.5, 1.6}})
		}
		addKernelTest(kernelTest{
			family: family,
			conform: func(d int, ard []float64) []namedKernel {
				return []namedKernel{
					{name, func() (gp.Kernel, error) {
						return gp.NewArcCosine(order, gp.KernelConfig{InputDim: d, Variance: 0.7, Variances: ard})
					}},
					{name + "-shared", func() (gp.Kernel, error) {
						return gp.NewArcCosine(order, gp.KernelConfig{InputDim: d, Variance: 1.2})
					}},
				}
			},
			bad: []func() (gp.Kernel, error){
				func() (gp.Kernel, error) { return gp.NewArcCosine(order, gp.KernelConfig{}) },
				func() (gp.Kernel, error) { return gp.NewArcCosine(order+3, gp.KernelConfig{InputDim: 2}) },
				func() (gp.Kernel, error) {
					return gp.NewArcCosine(order, gp.KernelConfig{InputDim: 2, Variances: []float64{1, 2, 3}})
				},
			},
			spec: func(kc kernelConfigFunc) []specBuild {
				return []specBuild{
					{name + "-ARD", gp.KindArcCosine, func() (any, error) { return arc(kc, "ac") }},
					{name + "-shared", gp.KindArcCosine, func() (any, error) {
						return gp.NewArcCosine(order, gp.KernelConfig{InputDim: 3, Variance: 0.4})
					}},
					{name + "-1D", gp.KindArcCosine, func() (any, error) {
						return gp.NewArcCosine(order, gp.KernelConfig{Name: "a1", InputDim: 1, Variance: 0.4})
					}},
				}
			},
			part: arc,
		})
	}
}
