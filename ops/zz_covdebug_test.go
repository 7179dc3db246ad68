package ops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
)

func TestZZCovDebug(t *testing.T) {
	f := ops.Matern12
	rng := rand.New(rand.NewPCG(61, uint64(f)))
	n, m, d := 200, 170, 2
	x1 := gradcheck.Random("x1", rng, -1, 1, n, d)
	x2 := gradcheck.Random("x2", rng, -1, 1, m, d)
	for _, r := range []int{0, 60, 110, 169} {
		copy(x2.Value[r*d:(r+1)*d], x1.Value[(r+20)*d:(r+21)*d])
	}
	h := covHyperInputs(f, d, rng, false)
	for _, i := range []int{196} {
		best, bj := 9.0, -1
		for j := 0; j < m; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				z := (x1.Value[i*d+k] - x2.Value[j*d+k]) / h[1].Value[k]
				s += z * z
			}
			if math.Sqrt(s) < best {
				best, bj = math.Sqrt(s), j
			}
		}
		t.Logf("row %d nearest x2 row %d at r=%g", i, bj, best)
	}
}
