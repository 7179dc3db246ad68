package gp_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

func TestPeriodicCov(t *testing.T) {
	t.Parallel()
	if gp.PeriodicCov.Name() != "Periodic" {
		t.Errorf("Name() = %q", gp.PeriodicCov.Name())
	}
	checkCov(t, gp.PeriodicCov, func(a, b []float64, h [][]float64) float64 {
		sigma2, ell, p := h[0][0], h[1], h[2][0]
		s := 0.0
		for q := range a {
			sn := math.Sin(math.Pi*math.Abs(a[q]-b[q])/p) / ell[q]
			s += sn * sn
		}
		return sigma2 * math.Exp(-2*s)
	})
}

func init() {
	per := func(kc kernelConfigFunc, name string) (gp.Kernel, error) {
		return gp.NewPeriodic(kc(name, 3, func(c *gp.KernelConfig) { c.Period = 2.9 }))
	}
	addKernelTest(kernelTest{
		family: "periodic",
		conform: func(d int, ard []float64) []namedKernel {
			return []namedKernel{{"Periodic", func() (gp.Kernel, error) {
				return gp.NewPeriodic(gp.KernelConfig{InputDim: d, Variance: 0.8, Lengthscales: ard, Period: 1.7})
			}}}
		},
		bad: []func() (gp.Kernel, error){
			func() (gp.Kernel, error) { return gp.NewPeriodic(gp.KernelConfig{InputDim: 1, Period: -2}) },
		},
		spec: func(kc kernelConfigFunc) []specBuild {
			return []specBuild{
				{"Periodic", gp.KindPeriodic, func() (any, error) { return per(kc, "per") }},
				{"Periodic-iso", gp.KindPeriodic, func() (any, error) {
					return gp.NewPeriodic(kc("", 3, func(c *gp.KernelConfig) { isoLengthscale(c); c.Period = 0.7 }))
				}},
			}
		},
		part: per,
	})
}

// periodicData returns n unevenly spaced inputs over [0, 10) in column col of d columns (the others noise) and
// targets with a linear rise, a cycle of the given period and noise (Mauna Loa's shape).
func periodicData(rng *rand.Rand, n, d, col int, period float64) (*mat.Dense, *mat.Dense) {
	x, y := mat.NewDense(n, d, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x.Set(i, k, 10*rng.Float64())
		}
		t := x.At(i, col)
		y.Set(i, 0, 5+0.8*t+1.5*math.Sin(2*math.Pi*t/period)+0.2*rng.NormFloat64())
	}
	return x, y
}

// The periodic kernel starts from the period of the targets' strongest cycle (after their linear trend), found on
// the input column that carries it; in a sum, InitKernelFromData sets that period and leaves the SE term and the
// periodic kernel's variance and length-scale as they were.
func TestPeriodFromData(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d, col int
		period float64
	}{{1, 0, 0.37}, {1, 0, 1.3}, {3, 2, 0.8}} {
		x, y := periodicData(rand.New(rand.NewPCG(4, uint64(c.col))), 300, c.d, c.col, c.period)
		p, ok, err := gp.PeriodFromData(x, y, nil)
		if err != nil || !ok || math.Abs(p-c.period) > 0.03*c.period {
			t.Errorf("D %d, cycle on column %d with period %v: got %v (ok %v, %v)", c.d, c.col, c.period, p, ok, err)
		}
	}
	x, y := periodicData(rand.New(rand.NewPCG(5, 0)), 300, 1, 0, 0.37)
	per, err := gp.NewPeriodic(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gp.NewSum(se, per)
	if err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(se.Params()[0].Value(), se.Params()[1].Value(), per.Variance.Value(), per.Lengthscales.Value())
	if err := gp.InitKernelFromData(sum, x, y, nil); err != nil {
		t.Fatal(err)
	}
	want, _, _ := gp.PeriodFromData(x, y, nil)
	if got := per.Extra.Value()[0]; math.Abs(got-want) > 1e-12*want { // through the positive transform's raw value
		t.Errorf("period after InitKernelFromData %v, want %v", got, want)
	}
	if after := fmt.Sprint(se.Params()[0].Value(), se.Params()[1].Value(), per.Variance.Value(), per.Lengthscales.Value()); after != before {
		t.Errorf("other hyperparameters moved: %s, were %s", after, before)
	}
	// Constant targets have no cycle: the period stays; bad data are typed errors.
	flat, err := gp.NewPeriodic(gp.KernelConfig{InputDim: 1, Period: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	if err := gp.InitKernelFromData(flat, x, mat.NewDense(300, 1, nil), nil); err != nil || math.Abs(flat.Extra.Value()[0]-2.5) > 1e-12 {
		t.Errorf("constant targets: period %v, error %v; want 2.5 kept", flat.Extra.Value()[0], err)
	}
	var shapeErr *ops.ShapeError
	if _, _, err := gp.PeriodFromData(x, mat.NewDense(299, 1, nil), nil); !errors.As(err, &shapeErr) {
		t.Errorf("299 targets for 300 rows: %v, want a *ops.ShapeError", err)
	}
	if err := gp.InitKernelFromData(flat, mat.NewDense(300, 2, nil), y, nil); !errors.As(err, &shapeErr) {
		t.Errorf("2 input columns for a 1-D kernel: %v, want a *ops.ShapeError", err)
	}
	bad := mat.DenseCopyOf(y)
	bad.Set(7, 0, math.NaN())
	var nf *ops.NonFiniteError
	if _, _, err := gp.PeriodFromData(x, bad, nil); !errors.As(err, &nf) {
		t.Errorf("a NaN target: %v, want a *ops.NonFiniteError", err)
	}
}
