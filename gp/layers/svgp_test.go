package layers_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

func TestSVGPConformance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		unwhitened bool
		diag       bool
		dout       int
	}{{"whitened", false, false, 1}, {"unwhitened", true, false, 2}, {"diag", false, true, 3}, {"unwhitened-diag", true, true, 1}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			k, err := gptest.StationaryKernel(t, "matern52", gp.KernelConfig{InputDim: 2, Lengthscales: []float64{0.9, 1.3}})
			if err != nil {
				t.Fatal(err)
			}
			z := mat.NewDense(4, 2, gptest.RandomMatrix(rng, 4, 2, -1, 1))
			mean, _ := gp.NewConstantMean("c", make([]float64, c.dout))
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, OutputDim: c.dout, Mean: mean, Unwhitened: c.unwhitened, QDiag: c.diag, QSqrtScale: 0.8})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Q.Mu.Set(gptest.RandomMatrix(rng, 4, c.dout, -1, 1)); err != nil {
				t.Fatal(err)
			}
			var prior func() error
			if !c.unwhitened { // whitened prior: m = 0, S = I
				prior = func() error {
					if err := l.Q.Mu.Set(make([]float64, 4*c.dout)); err != nil {
						return err
					}
					eye := make([]float64, 16)
					for i := 0; i < 4; i++ {
						eye[i*4+i] = 1
					}
					for p := 0; p < c.dout; p++ {
						if err := l.Q.SetSqrt(p, eye); err != nil {
							return err
						}
					}
					return nil
				}
			}
			gptest.CheckLayer(t, l, rng, prior)
		})
	}
}

func TestSVGPConfigErrors(t *testing.T) {
	t.Parallel()
	k, _ := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	z := mat.NewDense(3, 2, nil)
	cases := map[string]layers.SVGPConfig{
		"nil kernel":   {Z: z},
		"nil Z":        {Kernel: k},
		"negative out": {Kernel: k, Z: z, OutputDim: -1},
		"jitter":       {Kernel: k, Z: z, Jitter: -1},
	}
	for name, c := range cases {
		if _, err := layers.NewSVGP(c); !errors.Is(err, layers.ErrConfig) {
			t.Errorf("%s: got %v, want ErrConfig", name, err)
		}
	}
	if _, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: mat.NewDense(3, 5, nil)}); !errors.Is(err, ops.ErrShape) {
		t.Errorf("Z with wrong width: %v", err)
	}
	m, _ := gp.NewZeroMean(3)
	if _, err := layers.NewSVGP(layers.SVGPConfig{Kernel: k, Z: z, Mean: m}); err == nil {
		t.Error("mean with 3 outputs on a 1-output layer accepted")
	}
}
