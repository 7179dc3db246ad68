package layers_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

func TestHybridConformance(t *testing.T) {
	t.Parallel()
	for _, c := range ogConformanceCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, 14))
			sc, zg := ogConformanceConfig(t, rng, c.unwhitened, c.dout)
			l, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: sc, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			if l.NumGamma() != 3 || l.Beta.NumInducing() != 4 {
				t.Fatalf("Mγ = %d, Mβ = %d, want 3 and 4", l.NumGamma(), l.Beta.NumInducing())
			}
			if err := l.Beta.Q.Mu.Set(gptest.RandomMatrix(rng, 4, c.dout, -1, 1)); err != nil {
				t.Fatal(err)
			}
			if err := l.Agamma.Set(gptest.RandomMatrix(rng, 3, c.dout, -1, 1)); err != nil {
				t.Fatal(err)
			}
			var prior func() error
			if !c.unwhitened {
				prior = ogPriorQ(l.Beta.Q, l.Agamma)
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

// HYBRID with |γ| = 0, and with a_γ = 0 and Mγ > 0, is exactly the coupled SVGP.
func TestHybridReducesToSVGP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unwhitened bool
		gamma      bool
	}{{"no-gamma", false, false}, {"zero-agamma", false, true}, {"zero-agamma-unwhitened", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, 42))
			x, y := ogToy(rng, 30, 2, 2)
			z, _ := ogToy(rng, 6, 2, 1)
			zg, _ := ogToy(rng, 4, 2, 1)
			xs, _ := ogToy(rng, 7, 2, 1)
			k := ogKernel(t, 2)
			sc := layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: c.unwhitened}
			ref, err := layers.NewSVGP(sc)
			if err != nil {
				t.Fatal(err)
			}
			hc := layers.HybridConfig{SVGPConfig: sc}
			if c.gamma {
				hc.Zgamma = zg
			}
			l, err := layers.NewHybrid(hc)
			if err != nil {
				t.Fatal(err)
			}
			ogRandomQ(t, ref.Q, 7)
			ogRandomQ(t, l.Beta.Q, 7)
			ogSameModel(t, l, ref, x, y, xs, 1e-10)
			if a, b := ogKL(t, l), ogKL(t, ref); !ogClose(a, b, 1e-10) {
				t.Errorf("KL %.15g, coupled SVGP %.15g", a, b)
			}
		})
	}
}

// HYBRID's KL minus the SVGP's is Σ_p [m_βpᵀK_β⁻¹K_βγ a_p + ½ a_pᵀK_γ a_p] (K_β with the SVGP's jitter; whitened,
// m_β = L_β v), checked against a direct gonum computation.
func TestHybridKLCrossTerm(t *testing.T) {
	t.Parallel()
	for _, unwhitened := range []bool{false, true} {
		name := map[bool]string{false: "whitened", true: "unwhitened"}[unwhitened]
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(51, 52))
			z, _ := ogToy(rng, 5, 2, 1)
			zg, _ := ogToy(rng, 4, 2, 1)
			k := ogKernel(t, 2)
			l, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: unwhitened}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			av := gptest.RandomMatrix(rng, 4, 2, -2, 2)
			if err := l.Agamma.Set(av); err != nil {
				t.Fatal(err)
			}
			ogRandomQ(t, l.Beta.Q, 3)
			ch := ogChol(t, k, z, l.Beta.Jitter())
			mb := mat.NewDense(5, 2, l.Beta.Q.MeanValue())
			if !unwhitened {
				var lu mat.TriDense
				ch.LTo(&lu)
				mb.Mul(&lu, mat.DenseCopyOf(mb))
			}
			a := mat.NewDense(4, 2, av)
			var kga, sol, kgg mat.Dense
			kga.Mul(ogKmat(t, k, z, zg), a) // K_βγ a [5,2]
			if err := ch.SolveTo(&sol, &kga); err != nil {
				t.Fatal(err)
			}
			kgg.Mul(ogKmat(t, k, zg, zg), a)
			want := 0.0
			for p := 0; p < 2; p++ {
				want += mat.Dot(mb.ColView(p), sol.ColView(p)) + 0.5*mat.Dot(a.ColView(p), kgg.ColView(p))
			}
			if got := ogKL(t, l) - ogKL(t, l.Beta); !ogClose(got, want, 1e-8) {
				t.Errorf("KL_hybrid − KL_SVGP = %.12g, direct m_βᵀK_β⁻¹K_βγa_γ + ½a_γᵀK_γa_γ = %.12g", got, want)
			}
			if kl := ogKL(t, l); !(kl > 0) {
				t.Errorf("KL = %v, want > 0", kl)
			}
		})
	}
}

// Whitened and unwhitened decoupled layers give the same ELBO and KL at corresponding parameters
// (m_u = L_β m_v, L_S,u = L_β L_S,v, the same a_γ).
func TestOrthHybridWhitenedUnwhitenedAgree(t *testing.T) {
	t.Parallel()
	type pair struct {
		w, u   gp.Layer
		wq, uq *gp.GaussianQ
		wa, ua *graph.Param
	}
	build := map[string]func(t *testing.T, k gp.Kernel, z, zg *mat.Dense) pair{
		"orth": func(t *testing.T, k gp.Kernel, z, zg *mat.Dense) pair {
			w, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			u, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: true}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			return pair{w, u, w.BetaQ(), u.BetaQ(), w.Agamma, u.Agamma}
		},
		"hybrid": func(t *testing.T, k gp.Kernel, z, zg *mat.Dense) pair {
			w, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			u, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: k, Z: z, OutputDim: 2, Unwhitened: true}, Zgamma: zg})
			if err != nil {
				t.Fatal(err)
			}
			return pair{w, u, w.Beta.Q, u.Beta.Q, w.Agamma, u.Agamma}
		},
	}
	for name, b := range build {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(61, 62))
			x, y := ogToy(rng, 30, 2, 2)
			z, _ := ogToy(rng, 6, 2, 1)
			zg, _ := ogToy(rng, 4, 2, 1)
			k := ogKernel(t, 2)
			p := b(t, k, z, zg)
			av := gptest.RandomMatrix(rng, 4, 2, -1, 1)
			if err := p.wa.Set(av); err != nil {
				t.Fatal(err)
			}
			if err := p.ua.Set(av); err != nil {
				t.Fatal(err)
			}
			ogRandomQ(t, p.wq, 9)
			ch := ogChol(t, k, z, 0) // the layers' default: no fixed jitter (gp.JitterOnFailure), and this Kuu factorises
			var lu mat.TriDense
			ch.LTo(&lu)
			var mu mat.Dense
			mu.Mul(&lu, mat.NewDense(6, 2, p.wq.MeanValue()))
			if err := p.uq.Mu.Set(mu.RawMatrix().Data); err != nil {
				t.Fatal(err)
			}
			for o := 0; o < 2; o++ {
				var ls mat.Dense
				ls.Mul(&lu, mat.NewDense(6, 6, p.wq.SqrtValue(o)))
				if err := p.uq.SetSqrt(o, ls.RawMatrix().Data); err != nil {
					t.Fatal(err)
				}
			}
			lik := ogGaussian(t, 0.2)
			wm, _ := models.NewSVGP(models.SVGPConfig{Layer: p.w, Likelihood: lik, NumData: 30})
			um, _ := models.NewSVGP(models.SVGPConfig{Layer: p.u, Likelihood: lik, NumData: 30})
			if ew, eu := ogValue(t, wm.ELBO, x, y), ogValue(t, um.ELBO, x, y); !ogClose(eu, ew, 1e-9) {
				t.Errorf("whitened ELBO %.12g, unwhitened %.12g", ew, eu)
			}
			if kw, ku := ogKL(t, p.w), ogKL(t, p.u); !ogClose(ku, kw, 1e-9) || !(kw > 0) {
				t.Errorf("KL whitened %v, unwhitened %v (must agree and be positive)", kw, ku)
			}
		})
	}
}
