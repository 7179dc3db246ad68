package cluster

import "testing"

// A run name is one subject token: dots, wildcards and white space would reach other runs' subjects.
func TestCheckRunName(t *testing.T) {
	for _, ok := range []string{"a", "run-1", "kin8nm_dgp", "R2D2"} {
		if err := CheckRunName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a.b", "*", ">", "a b", "run\n", "é", string(make([]byte, 65))} {
		if err := CheckRunName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := subjectsOf("r").grad; got != "gpzoo.cluster.r.grad" {
		t.Errorf("grad subject %q", got)
	}
}
