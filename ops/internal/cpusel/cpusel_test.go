package cpusel

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

type impl struct{ name string }

var (
	order = []string{"avx512", "avx2", "generic"}
	// avail stands for a CPU without AVX-512: "avx512" is known but not available.
	avail = map[string]*impl{"avx2": {"avx2"}, "generic": {"generic"}, "other": {"other"}}
	// startup is chosen at start-up, as the packages that use a Selector choose theirs.
	startup = New(order, avail)
)

// envChild marks the test binary run as a subprocess by TestEnv.
const envChild = "GPZOO_CPUSEL_TEST_CHILD"

// Env is honoured at start-up: the test binary, run again with it set, reports the implementation chosen (the
// case does not matter; an empty or unknown value, or one not available, gives the best). The short mode runs
// three cases.
func TestEnv(t *testing.T) {
	if os.Getenv(envChild) == "1" {
		fmt.Printf("active=%s\n", startup.Active().name)
		return
	}
	cases := map[string]string{"generic": "generic", "bogus": "avx2", "avx512": "avx2"}
	if !testing.Short() {
		cases["GENERIC"], cases["Avx2"], cases["avx2"], cases[""], cases["other"] = "generic", "avx2", "avx2", "avx2", "avx2"
	}
	for env, want := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChild+"=1", Env+"="+env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s=%q: the child failed: %v\n%s", Env, env, err, out)
		}
		got := ""
		for _, line := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutPrefix(line, "active="); ok {
				got = s
			}
		}
		if got != want {
			t.Errorf("%s=%q: the child chose %q, want %q\n%s", Env, env, got, want, out)
		}
	}
}

func TestSelector(t *testing.T) {
	t.Setenv(Env, "")
	s := New(order, avail)
	if got, want := s.Names(), []string{"avx2", "generic"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	s.Names()[0] = "changed"
	if s.Names()[0] != "avx2" {
		t.Fatal("Names() returned the Selector's own slice")
	}
	if s.Active() != avail["avx2"] {
		t.Fatalf("Active() = %v, want the best, avx2", s.Active())
	}
	if !s.Set("generic") || s.Active() != avail["generic"] {
		t.Fatalf("Set(generic): Active() = %v", s.Active())
	}
	for _, n := range []string{"avx512", "other", "GENERIC", ""} {
		if s.Set(n) {
			t.Errorf("Set(%q) = true for an implementation not available", n)
		}
		if s.Active() != avail["generic"] {
			t.Errorf("Set(%q) changed the implementation to %v", n, s.Active())
		}
	}
	t.Setenv(Env, "Generic")
	if s := New(order, avail); s.Active() != avail["generic"] {
		t.Errorf("%s=Generic: Active() = %v", Env, s.Active())
	}
	defer func() {
		if recover() == nil {
			t.Error("New with nothing available did not panic")
		}
	}()
	New(order, map[string]*impl{"avx512": nil})
}
