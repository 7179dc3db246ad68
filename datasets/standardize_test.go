package datasets

import (
	"errors"
	"math"
	"strings"
	"testing"
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
