package datasets

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSyntheticRoundTrip: the generator is seeded (same data for the same seed, other data for another), its
// target depends on the inputs well beyond the noise, and WriteTable's CSV reads back bit for bit.
func TestSyntheticRoundTrip(t *testing.T) {
	t.Parallel()
	a, err := Synthetic(SynthConfig{Rows: 300, Inputs: 5, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthetic(SynthConfig{Rows: 300, Inputs: 5, Seed: 7})
	c, _ := Synthetic(SynthConfig{Rows: 300, Inputs: 5, Seed: 8})
	var wa, wb, wc bytes.Buffer
	for _, p := range []struct {
		d *Dataset
		w *bytes.Buffer
	}{{a, &wa}, {b, &wb}, {c, &wc}} {
		if err := WriteTable(p.w, p.d, "y"); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(wa.Bytes(), wb.Bytes()) || bytes.Equal(wa.Bytes(), wc.Bytes()) {
		t.Error("same seed: different bytes, or another seed: the same bytes")
	}
	if !strings.HasPrefix(wa.String(), "x0,x1,x2,x3,x4,y\n") {
		t.Errorf("header: %q", strings.SplitN(wa.String(), "\n", 2)[0])
	}
	tb, err := ReadTable(bytes.NewReader(wa.Bytes()), TableOptions{Target: "y"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < a.N(); i++ {
		for j := 0; j < a.D(); j++ {
			if math.Float64bits(tb.Data.X.At(i, j)) != math.Float64bits(a.X.At(i, j)) {
				t.Fatalf("x[%d,%d]: read %v, wrote %v", i, j, tb.Data.X.At(i, j), a.X.At(i, j))
			}
		}
		if math.Float64bits(tb.Data.Y.At(i, 0)) != math.Float64bits(a.Y.At(i, 0)) {
			t.Fatalf("y[%d]: read %v, wrote %v", i, tb.Data.Y.At(i, 0), a.Y.At(i, 0))
		}
	}
	// The signal dominates the default noise (sd 0.1): the target's variance is well above 0.01.
	mean, sq := 0.0, 0.0
	for i := 0; i < a.N(); i++ {
		mean += a.Y.At(i, 0)
	}
	mean /= float64(a.N())
	for i := 0; i < a.N(); i++ {
		sq += (a.Y.At(i, 0) - mean) * (a.Y.At(i, 0) - mean)
	}
	if v := sq / float64(a.N()); v < 0.25 {
		t.Errorf("target variance %.3f: the signal hardly exceeds the noise", v)
	}
	for _, bad := range []SynthConfig{{Rows: 0, Inputs: 2}, {Rows: 3, Inputs: 0}, {Rows: 3, Inputs: 2, Noise: math.NaN()}} {
		if _, err := Synthetic(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err %v, want ErrInvalid", bad, err)
		}
	}
}
