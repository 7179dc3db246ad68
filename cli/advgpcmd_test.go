package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/datatest"
)

func TestADVGPCommandErrors(t *testing.T) {
	data := datatest.Fake(t, "kin40k") // the data is there: each refusal is the arguments'
	var out, errb bytes.Buffer
	if err := Main([]string{"advgp", "help"}, &out, &errb); err != nil || !strings.Contains(out.String(), "gpzoo advgp work") {
		t.Fatalf("advgp help: %v\n%s", err, out.String())
	}
	for _, args := range [][]string{
		{"advgp", "frobnicate"},
		{"advgp", "serve", "kin40k/advgp", "--data", data},                         // no --run
		{"advgp", "work", "--shard", "4/4"},                                        // shard out of range
		{"advgp", "work", "--shard", "x"},                                          // not i/k
		{"run", "boston-bb/sgpr", "--workers", "2", "--iters", "1"},                // not a sum over rows
		{"advgp", "local", "kin40k/advgp", "--data", data, "--tau", "-1"},          // negative τ
		{"advgp", "serve", "kin40k/advgp", "--data", data, "--run", "r", "--port"}, // --port without a value
	} {
		out.Reset()
		errb.Reset()
		if err := Main(args, &out, &errb); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
