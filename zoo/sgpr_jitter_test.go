package zoo_test

import (
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

// TestSGPREntriesNeedNoJitter: every */sgpr entry runs with SGPR's default jitter policy (gp.JitterOnFailure:
// Kuu factorised as is, jitter only if that fails) and its fit needs none: with the entry's M = 100 k-means
// inducing inputs, a short L-BFGS fit on Boston's embedded rows (boston-bb) or on seeded stand-ins in the other
// entries' formats (datatest.Fake) counts no jittered Cholesky retry (issue 31).
func TestSGPREntriesNeedNoJitter(t *testing.T) {
	t.Parallel()
	n := 0
	for _, e := range zoo.Entries() {
		if e.Model != "sgpr" {
			continue
		}
		n++
		t.Run(strings.ReplaceAll(e.Name, "/", "_"), func(t *testing.T) {
			t.Parallel()
			o := zoo.Options{Iters: 40, Seed: 1}
			if e.Dataset != "boston-bb" {
				o.DataDir = datatest.Fake(t, zoo.DataSetOf(e.Dataset))
			}
			r, err := e.Run(o)
			if err != nil {
				t.Fatal(err)
			}
			if r.CholeskyRetries != 0 || r.Iters < 1 {
				t.Errorf("%s: %d jittered Cholesky retries in %d iterations, want none", e.Name, r.CholeskyRetries, r.Iters)
			}
			t.Logf("%s: %d iterations, ELBO/N %.4f, test LL %.4f, %d jittered retries", e.Name, r.Iters, r.ELBOPerPoint, r.TestLL, r.CholeskyRetries)
		})
	}
	if n < 2 {
		t.Errorf("%d sgpr entries, want the zoo's (kin8nm, boston-bb, ...)", n)
	}
}
