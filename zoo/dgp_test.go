package zoo_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
	"github.com/gpzoo/gpzoo/zoo"
)

// Every deep-GP entry the issues name is registered, documented and cites its source, and the Havasi entries
// run the paper's budget on its 80/20 splits: 5000 epochs of min(N, 10000) rows.
func TestDGPRegistry(t *testing.T) {
	t.Parallel()
	names := []string{"kin8nm-bb/dsdgp-2", "kin8nm-bb/dsdgp-3", "mnist/dgp2-robustmax"}
	for _, d := range []string{"boston", "power", "protein", "yacht", "naval"} {
		names = append(names, d+"-bb/dgp2")
	}
	for _, d := range []string{"kin8nm", "protein"} {
		for l := 0; l <= 4; l++ {
			names = append(names, fmt.Sprintf("%s-havasi/dgp-coupled-%d", d, l), fmt.Sprintf("%s-havasi/dgp-decoupled-%d", d, l))
		}
	}
	for _, n := range names {
		e, err := zoo.Lookup(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if e.Reference == "" || e.Published == "" || e.Summary == "" {
			t.Errorf("%s: missing reference, published numbers or summary", n)
		}
		if strings.Contains(e.Dataset, "-havasi") {
			iters := zoo.HavasiKin8nmIters
			if strings.HasPrefix(n, "protein") {
				iters = zoo.HavasiProteinIters
			}
			if c := e.Config; c.Iters != iters || c.BatchSize != zoo.HavasiBatch || c.LR != 0.01 || !strings.Contains(e.Summary, fmt.Sprint(iters)) {
				t.Errorf("%s: %d steps of %d rows, lr %g (summary %q); want the paper's %d steps of %d", n, c.Iters, c.BatchSize, c.LR,
					e.Summary, iters, zoo.HavasiBatch)
			}
		}
	}
	// 5000 epochs: kin8nm's 6553 training rows are one batch; protein's 36584 make 18292 batches of 10000.
	if zoo.HavasiKin8nmIters != 5000 || zoo.HavasiProteinIters != 18292 || zoo.HavasiProteinIters*zoo.HavasiBatch != zoo.HavasiEpochs*36584 {
		t.Errorf("Havasi budgets %d and %d steps", zoo.HavasiKin8nmIters, zoo.HavasiProteinIters)
	}
}

// Short end-to-end runs of coupled and decoupled deep GPs (tiny inducing sets), with natural gradients on the
// last layer, and a robust-max DGP on MNIST: finite metrics, the mixture LL labelled, the moment-matched LL
// beside it, every stable JSON key.
func TestDGPEntriesShort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry    string
		o        zoo.Options
		classify bool
		opt      string
	}{
		{"kin8nm-havasi/dgp-coupled-1", zoo.Options{Iters: 3, Inducing: 8, BatchSize: 64}, false, "2 layers (M=8)"},
		{"kin8nm-havasi/dgp-decoupled-2", zoo.Options{Iters: 3, Inducing: 6, BatchSize: 64}, false, "3 layers (Ma=30, Mb=6)"},
		{"kin8nm-bb/dsdgp-2", zoo.Options{Iters: 3, Inducing: 8, BatchSize: 64, NatGrad: true}, false, "natgrad on the last layer"},
		{"kin8nm-havasi/dgp-decoupled-0", zoo.Options{Iters: 3, Inducing: 6, BatchSize: 64}, false, "1 layers"},
		{"mnist/dgp2-robustmax", zoo.Options{Iters: 2, Inducing: 5, BatchSize: 32, TestSamples: 2}, true, "S=1"},
	} {
		t.Run(strings.ReplaceAll(c.entry, "/", "_"), func(t *testing.T) {
			needWhite(t, c.entry)
			e, err := zoo.Lookup(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			c.o.DataDir, c.o.Seed = datatest.Fake(t, zoo.DataSetOf(e.Dataset)), 4
			r, err := e.Run(c.o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Iters != c.o.Iters || !finite(r.TestLL) || !finite(r.ELBOPerPoint) || !strings.Contains(r.Optimizer, c.opt) {
				t.Errorf("unexpected result %+v", r)
			}
			if r.TestLLMomentMatched == nil || !finite(*r.TestLLMomentMatched) || !strings.HasPrefix(r.TestLLKind, "mixture of") || r.TestSamples < 1 {
				t.Errorf("deep-GP test LL labels: kind %q, samples %d, moment-matched %v", r.TestLLKind, r.TestSamples, r.TestLLMomentMatched)
			}
			if c.classify != (r.TestAccuracy != nil) || c.classify == (r.TestRMSE != nil) {
				t.Errorf("metrics %+v", r)
			}
			var buf bytes.Buffer
			if err := r.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range append(stableKeys, "test_ll_kind", "test_ll_moment_matched", "test_samples") {
				if _, ok := m[k]; !ok {
					t.Errorf("JSON lacks key %q", k)
				}
			}
		})
	}
}

func TestDGPOptionsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry string
		o     zoo.Options
	}{
		{"kin8nm-havasi/dgp-decoupled-1", zoo.Options{Iters: 1, Inducing: 4, NatGrad: true}},
		{"kin8nm-havasi/dgp-coupled-1", zoo.Options{Iters: 1, Inducing: 4, Optimizer: "lbfgs"}},
	} {
		e, err := zoo.Lookup(c.entry)
		if err != nil {
			t.Fatal(err)
		}
		c.o.DataDir = datatest.Fake(t, zoo.DataSetOf(e.Dataset)) // the data is there: the refusal is the options'
		if _, err := e.Run(c.o); err == nil {
			t.Errorf("%s with %+v: no error", c.entry, c.o)
		}
	}
}
