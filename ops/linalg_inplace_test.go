package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
)

// spdMatrix returns a random symmetric n×n matrix B·Bᵀ + shift·I (rank ≤ r before the shift).
func spdMatrix(rng *rand.Rand, n, r int, shift float64) []float64 {
	b := make([]float64, n*r)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := 0; k < r; k++ {
				s += b[i*r+k] * b[j*r+k]
			}
			a[i*n+j], a[j*n+i] = s, s
		}
		a[i*n+i] += shift
	}
	return a
}

// CholeskyLowerInPlace gives CholeskyLower's factor, bit for bit, over edge shapes (n = 0, 1, below, at and
// above the blocked factorisation's block size), its jitter retries on a singular matrix (the same jitter), and its
// errors; its strict upper triangle keeps the matrix.
func TestCholeskyLowerInPlaceMatchesCholeskyLower(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		n, r  int
		shift float64
	}{{0, 1, 1}, {1, 1, 0.5}, {2, 3, 0.1}, {7, 7, 1e-3}, {47, 50, 1e-2}, {48, 60, 1e-2}, {49, 60, 1e-2}, {130, 140, 1e-3}, {300, 5, 0}}
	for _, c := range cases {
		a := spdMatrix(rng, c.n, c.r, c.shift)
		var ws, gs ops.CholeskyStats
		want := make([]float64, len(a))
		wi, werr := ops.CholeskyLower(want, a, c.n, ops.JitterPolicy{Stats: &ws})
		got := append([]float64(nil), a...)
		gi, gerr := ops.CholeskyLowerInPlace(got, c.n, ops.JitterPolicy{Stats: &gs})
		if (werr == nil) != (gerr == nil) || wi != gi || ws.Snapshot() != gs.Snapshot() {
			t.Fatalf("n=%d rank %d: CholeskyLower %+v, %v; in place %+v, %v", c.n, c.r, wi, werr, gi, gerr)
		}
		if c.shift == 0 && gi.Retries == 0 {
			t.Errorf("n=%d of rank %d factorised without jitter", c.n, c.r)
		}
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.n; j++ {
				g := got[i*c.n+j]
				switch {
				case j <= i && g != want[i*c.n+j]:
					t.Fatalf("n=%d: L[%d,%d] = %v in place, %v by CholeskyLower", c.n, i, j, g, want[i*c.n+j])
				case j > i && g != a[i*c.n+j]:
					t.Fatalf("n=%d: the upper triangle changed at [%d,%d]: %v, was %v", c.n, i, j, g, a[i*c.n+j])
				}
			}
		}
	}
	// Errors: a non-finite entry named where it is; no PD matrix within the retries; a bad length.
	a := spdMatrix(rng, 5, 5, 1)
	a[1*5+3] = math.NaN()
	var nf *ops.NonFiniteError
	if _, err := ops.CholeskyLowerInPlace(a, 5, ops.JitterPolicy{}); !errors.As(err, &nf) || nf.Row != 1 || nf.Col != 3 {
		t.Errorf("NaN at [1,3]: %v", err)
	}
	neg := spdMatrix(rng, 4, 4, 0)
	for i := range neg {
		neg[i] = -neg[i]
	}
	if _, err := ops.CholeskyLowerInPlace(neg, 4, ops.JitterPolicy{}); !errors.Is(err, ops.ErrNotPD) {
		t.Errorf("a negative definite matrix: %v", err)
	}
	if _, err := ops.CholeskyLowerInPlace(make([]float64, 5), 2, ops.JitterPolicy{}); !errors.Is(err, ops.ErrShape) {
		t.Errorf("a bad length: %v", err)
	}
}
