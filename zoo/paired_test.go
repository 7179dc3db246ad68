package zoo

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestReportPaired(t *testing.T) {
	acc := func(a float64) *float64 { return &a }
	res := func(entry string, split int, seed uint64, ll, a float64) *Result {
		ds, model, _ := strings.Cut(entry, "/")
		return &Result{Entry: entry, Dataset: ds, Model: model, Split: split, Seed: seed, NTest: 10, TestLL: ll, TestAccuracy: acc(a)}
	}
	var rep Report
	add := func(file string, rs ...*Result) {
		t.Helper()
		if err := rep.Add(file, rs); err != nil {
			t.Fatal(err)
		}
	}
	// The baseline ran splits 0-2 (seed 1) and split 3 with another seed; the EP row splits 2, 0, 1, 3 (seed 1):
	// split 3 does not pair (its seeds differ).
	add("la.json", res("d/la", 0, 1, -0.50, 0.70), res("d/la", 1, 1, -0.40, 0.80), res("d/la", 2, 1, -0.60, 0.75), res("d/la", 3, 2, -0.1, 0.9))
	add("ep.json", res("d/ep", 2, 1, -0.55, 0.75), res("d/ep", 0, 1, -0.52, 0.72), res("d/ep", 1, 1, -0.37, 0.80), res("d/ep", 3, 1, 0, 1))
	add("other.json", res("e/ep", 0, 1, -1, 0.5)) // no baseline on e: left out
	ps, err := rep.Paired("la")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		t.Fatalf("%d paired rows, want 1 (d/ep against d/la): %+v", len(ps), ps)
	}
	p := ps[0]
	if p.Key != "d/ep" || p.Baseline != "d/la" || p.Dataset != "d" || FormatSplits(p.Splits) != "0-2" {
		t.Fatalf("paired row %+v, want d/ep against d/la on splits 0-2", p)
	}
	// Differences: -0.02, +0.03, +0.05 → mean 0.02, std sqrt(((−.04)²+.01²+.03²)/2) = sqrt(0.0013).
	if math.Abs(p.TestLL.Mean-0.02) > 1e-12 || p.TestLL.N != 3 || math.Abs(*p.TestLL.Std-math.Sqrt(0.0013)) > 1e-12 {
		t.Errorf("test LL difference %+v (std %v), want mean 0.02, std %v over 3", p.TestLL, *p.TestLL.Std, math.Sqrt(0.0013))
	}
	if p.HigherLL != 2 {
		t.Errorf("higher LL on %d splits, want 2", p.HigherLL)
	}
	if math.Abs(p.TestAccuracy.Mean-0.02/3) > 1e-12 || p.TestRMSE != nil {
		t.Errorf("accuracy difference %+v, RMSE %+v; want mean 0.00667 and none", p.TestAccuracy, p.TestRMSE)
	}
	var b bytes.Buffer
	if err := rep.WritePairedMarkdown(&b, "la"); err != nil {
		t.Fatal(err)
	}
	want := "| d/ep | d/la | 0-2 (3) | +0.02 ± 0.021 | 2 of 3 | +0.006667 ± 0.0067 | — |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("paired table\n%s\nlacks %q", b.String(), want)
	}
	if _, err := rep.Paired("svgp"); err == nil || !strings.Contains(err.Error(), `"svgp"`) {
		t.Errorf("a baseline no row has: err %v, want one naming it", err)
	}
}
