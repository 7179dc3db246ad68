package datasets

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestStandardizerRoundTrip(t *testing.T) {
	d, err := ParseEvans(strings.NewReader("1,5,10\n2,5,20\n3,5,60\n6,5,30\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := FitStandardizer(d, true)
	if err != nil {
		t.Fatal(err)
	}
	if s.XStd[1] != 1 || s.XMean[1] != 5 {
		t.Fatalf("constant column: mean %v std %v", s.XMean[1], s.XStd[1])
	}
	z, err := s.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	if z.X == d.X || d.X.At(0, 0) != 1 {
		t.Fatal("Apply modified or aliased its input")
	}
	for j := 0; j < 2; j++ {
		mean, sq := 0.0, 0.0
		for i := 0; i < z.N(); i++ {
			mean += z.X.At(i, j)
			sq += z.X.At(i, j) * z.X.At(i, j)
		}
		mean /= 4
		if math.Abs(mean) > 1e-12 {
			t.Fatalf("column %d mean %v", j, mean)
		}
		if want := map[int]float64{0: 1, 1: 0}[j]; math.Abs(sq/4-want) > 1e-12 {
			t.Fatalf("column %d variance %v", j, sq/4)
		}
	}
	for i := 0; i < d.N(); i++ {
		if got := s.InverseMean(0, z.Y.At(i, 0)); math.Abs(got-d.Y.At(i, 0)) > 1e-12 {
			t.Fatalf("row %d: InverseMean %v, want %v", i, got, d.Y.At(i, 0))
		}
	}
	sd := s.YStd[0]
	if got := s.InverseVar(0, 0.25); math.Abs(got-0.25*sd*sd) > 1e-12 {
		t.Fatalf("InverseVar %v", got)
	}
	// Gaussian log density in standardised units + offset = original units.
	y, mu, v := 42.0, 30.0, 16.0
	logN := func(y, mu, v float64) float64 { return -0.5*math.Log(2*math.Pi*v) - 0.5*(y-mu)*(y-mu)/v }
	zs := logN((y-s.YMean[0])/sd, (mu-s.YMean[0])/sd, v/(sd*sd)) + s.LogDensityOffset(0)
	if math.Abs(zs-logN(y, mu, v)) > 1e-12 {
		t.Fatalf("log density %v, want %v", zs, logN(y, mu, v))
	}
	if !math.IsNaN(s.InverseMean(3, 1)) || !math.IsNaN(s.LogDensityOffset(-1)) || !math.IsNaN(s.InverseVar(1, 1)) {
		t.Fatal("out-of-range column should give NaN")
	}
	// Without Y standardisation the target is untouched.
	s2, _ := FitStandardizer(d, false)
	z2, _ := s2.Apply(d)
	if z2.Y.At(2, 0) != 60 || s2.LogDensityOffset(0) != 0 {
		t.Fatal("identity Y transform changed Y")
	}
	// ApplyX matches Apply on X.
	x, err := s.ApplyX(d.X)
	if err != nil || x.At(3, 0) != z.X.At(3, 0) {
		t.Fatalf("ApplyX: %v", err)
	}
	// Shape mismatch and class labels.
	other, _ := ParseEvans(strings.NewReader("1,2\n3,4\n"))
	if _, err := s.Apply(other); !errors.Is(err, ErrShape) {
		t.Fatalf("shape: %v", err)
	}
	cls, _ := ParseRaetsch(strings.NewReader("1,1\n2,-1\n"))
	if _, err := FitStandardizer(cls, true); !errors.Is(err, ErrInvalid) {
		t.Fatalf("labels: %v", err)
	}
}

// Any finite data standardise to finite values: a target of magnitude 1e158 (whose squares overflow), values
// near ±MaxFloat64 (whose sums and differences overflow) and tiny ones (whose squares underflow) all come out
// with mean 0 and variance 1, and the statistics of ordinary data are bit for bit the plain two-pass ones.
func TestStandardizerExtremeMagnitudes(t *testing.T) {
	for _, c := range []struct {
		name  string
		col   []float64
		rough bool // subnormal statistics are not representable: only finiteness is required
	}{
		{"1e158", []float64{1e158, 3e158, -2e158, 5e157}, false},
		{"near MaxFloat64", []float64{math.MaxFloat64, -math.MaxFloat64, 0.5 * math.MaxFloat64, math.MaxFloat64}, false},
		{"1e-170", []float64{1e-170, 3e-170, -2e-170, 5e-171}, false},
		{"subnormal", []float64{5e-324, 1e-323, 0, 2e-323}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.col)
			d := &Dataset{X: mat.NewDense(n, 1, slices.Clone(c.col)), Y: mat.NewDense(n, 1, slices.Clone(c.col))}
			s, err := FitStandardizer(d, true)
			if err != nil {
				t.Fatal(err)
			}
			z, err := s.Apply(d)
			if err != nil {
				t.Fatal(err)
			}
			mean, sq := 0.0, 0.0
			for _, v := range z.Y.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("standardised value %v (mean %v, std %v)", v, s.YMean[0], s.YStd[0])
				}
				mean += v / float64(n)
				sq += v * v / float64(n)
			}
			if !c.rough && (math.Abs(mean) > 1e-12 || math.Abs(sq-1) > 1e-12) {
				t.Errorf("standardised mean %v, variance %v (std %v)", mean, sq, s.YStd[0])
			}
			if sd := s.InverseStd(0, 1); math.IsInf(sd, 0) || math.Abs(sd/s.YStd[0]-1) > 1e-15 {
				t.Errorf("InverseStd(1) = %v, YStd %v", sd, s.YStd[0])
			}
		})
	}
	// Ordinary data: the same bits as the unscaled two-pass formulas.
	col := []float64{0.3, -1.7, 2.9, 11.5, 4.25, -0.125}
	d := &Dataset{X: mat.NewDense(len(col), 1, col), Y: mat.NewDense(len(col), 1, col)}
	s, err := FitStandardizer(d, true)
	if err != nil {
		t.Fatal(err)
	}
	mean, ss := 0.0, 0.0
	for _, v := range col {
		mean += v
	}
	mean /= float64(len(col))
	for _, v := range col {
		ss += (v - mean) * (v - mean)
	}
	if sd := math.Sqrt(ss / float64(len(col))); s.XMean[0] != mean || s.XStd[0] != sd {
		t.Errorf("mean %v std %v, want exactly %v %v", s.XMean[0], s.XStd[0], mean, sd)
	}
}
