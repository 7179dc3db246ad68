package ops_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
)

// TestGaussHermiteRule checks the rules against the moments of the weight e^{−x²}: ∫ e^{−x²} x^{2k} dx =
// Γ(k + ½) (odd moments vanish), exact for 2k ≤ 2n − 1. Tolerance 1e-12 relative: the tabulated rules are
// accurate to a few ulps and the sums have ≤ 200 terms.
func TestGaussHermiteRule(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 5, 10, ops.DefaultQuadPoints, 50} {
		x, w, err := ops.GaussHermite(n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(x) != n || len(w) != n {
			t.Fatalf("n=%d: got %d nodes, %d weights", n, len(x), len(w))
		}
		for k := 0; 2*k+1 <= 2*n-1 && k <= 8; k++ {
			even, odd := 0.0, 0.0
			for i := range x {
				even += w[i] * math.Pow(x[i], float64(2*k))
				odd += w[i] * math.Pow(x[i], float64(2*k+1))
			}
			want := math.Gamma(float64(k) + 0.5)
			if math.Abs(even-want) > 1e-12*want {
				t.Errorf("n=%d: moment %d = %.17g, want %.17g", n, 2*k, even, want)
			}
			if 2*k+1 <= 2*n-1 && math.Abs(odd) > 1e-12*math.Max(1, want) {
				t.Errorf("n=%d: odd moment %d = %g, want 0", n, 2*k+1, odd)
			}
		}
	}
}

func TestGaussHermiteErrorsAndCopies(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -3} {
		if _, _, err := ops.GaussHermite(n); err == nil {
			t.Errorf("GaussHermite(%d): no error", n)
		}
	}
	x, w, _ := ops.GaussHermite(7)
	x0, w0 := x[0], w[0]
	x[0], w[0] = 99, 99 // the cache must not be writable through the returned slices
	x2, w2, _ := ops.GaussHermite(7)
	if x2[0] != x0 || w2[0] != w0 {
		t.Errorf("GaussHermite returned the cached slices: after a write got %v, %v", x2[0], w2[0])
	}
}

// TestGaussHermiteExpect compares with closed-form normal expectations: E[f²] = μ² + v (exact for any n ≥ 2),
// E[e^f] = e^{μ+v/2} (20 points: the truncation term ~ (2v)^{20}/(2^{20}·40!) is far below 1e-13), and the
// log-space version with log f = −1000 + f, whose exp underflows: log E = −1000 + μ + v/2.
func TestGaussHermiteExpect(t *testing.T) {
	t.Parallel()
	x, w, _ := ops.GaussHermite(ops.DefaultQuadPoints)
	for _, c := range []struct{ mu, v float64 }{{0, 1}, {0.3, 0.5}, {-2, 0.01}, {1.5, 2}, {0.7, 0}} {
		sq := ops.GaussHermiteExpect(func(f float64) float64 { return f * f }, c.mu, c.v, x, w)
		if want := c.mu*c.mu + c.v; math.Abs(sq-want) > 1e-13*math.Max(1, want) {
			t.Errorf("E[f²] at %+v = %.17g, want %.17g", c, sq, want)
		}
		ex := ops.GaussHermiteExpect(math.Exp, c.mu, c.v, x, w)
		if want := math.Exp(c.mu + c.v/2); math.Abs(ex-want) > 1e-12*want {
			t.Errorf("E[e^f] at %+v = %.17g, want %.17g", c, ex, want)
		}
		lg := ops.GaussHermiteLogExpect(func(f float64) float64 { return -1000 + f }, c.mu, c.v, x, w)
		if want := -1000 + c.mu + c.v/2; math.Abs(lg-want) > 1e-12*math.Abs(want) {
			t.Errorf("log E[e^{−1000+f}] at %+v = %.17g, want %.17g", c, lg, want)
		}
	}
}
