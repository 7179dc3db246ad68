package vmath

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envChild marks the test binary run as a subprocess by TestKernelEnv.
const envChild = "GPZOO_VMATH_TEST_CHILD"

// GPZOO_BLAS is honoured at start-up: the test binary, run again with it set, reports the forced kernel (an
// unknown or empty value: the best this CPU runs; the case does not matter). The short mode runs two cases.
func TestKernelEnv(t *testing.T) {
	if os.Getenv(envChild) == "1" {
		fmt.Printf("kernel=%s\n", Kernel())
		return
	}
	cases := map[string]string{"generic": "generic", "bogus": Kernels()[0]}
	if !testing.Short() {
		cases["GENERIC"], cases[""] = "generic", Kernels()[0]
		for _, k := range Kernels() {
			cases[k] = k
		}
	}
	for env, want := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKernelEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChild+"=1", EnvKernel+"="+env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s=%q: the child failed: %v\n%s", EnvKernel, env, err, out)
		}
		got := ""
		for _, line := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutPrefix(line, "kernel="); ok {
				got = s
			}
		}
		if got != want {
			t.Errorf("%s=%q: Kernel() = %q in the child, want %q\n%s", EnvKernel, env, got, want, out)
		}
	}
}
