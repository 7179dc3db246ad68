package zoo_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

// The four tables of issue 39 are registered with the rows, budgets, splits, published numbers and
// differences the issue and the sources give.
func TestPaperTables(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		rows   int
		splits []int
	}{"havasi-kin8nm": {10, []int{0, 1, 2}}, "havasi-protein": {10, []int{0, 1}}, "dsdgp-kin8nm": {5, []int{0, 1, 2}},
		"bayesian-benchmarks": {15, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}
	var names []string
	for _, tab := range zoo.PaperTables() {
		names = append(names, tab.Name)
		w, ok := want[tab.Name]
		if !ok {
			t.Errorf("unexpected table %s", tab.Name)
			continue
		}
		if len(tab.Rows) != w.rows || !slices.Equal(tab.Splits, w.splits) || len(tab.Differences) < 4 || tab.Protocol == "" {
			t.Errorf("%s: %d rows, splits %v, %d differences", tab.Name, len(tab.Rows), tab.Splits, len(tab.Differences))
		}
		fps := map[string]string{}
		for i := range tab.Rows {
			r := &tab.Rows[i]
			e, err := zoo.Lookup(r.Entry)
			if err != nil {
				t.Fatal(err)
			}
			if r.LL == nil {
				t.Errorf("%s %s: no published LL", tab.Name, r.RowID())
			}
			if r.RMSE == nil && !strings.HasPrefix(r.Entry, "naval") {
				t.Errorf("%s %s: no published RMSE", tab.Name, r.RowID())
			}
			text, fp, err := tab.RowProtocol(r)
			if err != nil || len(fp) != 16 || !strings.Contains(text, "entry "+r.Entry) {
				t.Errorf("%s %s: protocol %q %q %v", tab.Name, r.RowID(), fp, text, err)
			}
			if _, fp2, _ := tab.RowProtocol(r); fp2 != fp {
				t.Errorf("%s %s: the fingerprint is not stable", tab.Name, r.RowID())
			}
			// A result recorded before CustomConfig gained a field (its text without the field's line), or
			// before zero-valued lines were dropped (its text with them), is of the same protocol; a changed
			// value is not.
			legacy := &zoo.TableRun{Protocol: text + "config Restarts=0\nconfig Inference=\nconfig Priors=[]\nconfig Exact=\n", Fingerprint: "x"}
			changed := &zoo.TableRun{Protocol: text + "config Restarts=3\n"}
			if legacy.CurrentFingerprint() != fp || changed.CurrentFingerprint() == fp || strings.Contains(text, "=0\n") || strings.Contains(text, "Exact") {
				t.Errorf("%s %s: zero-valued configuration lines change the fingerprint (or are in the text)", tab.Name, r.RowID())
			}
			if other, dup := fps[fp]; dup {
				t.Errorf("%s: rows %s and %s have one fingerprint", tab.Name, other, r.RowID())
			}
			fps[fp] = r.RowID()
			c := e.Config
			switch tab.Name {
			case "havasi-kin8nm", "havasi-protein":
				iters := map[string]int{"havasi-kin8nm": 5000, "havasi-protein": 18292}[tab.Name]
				if c.Iters != iters || c.BatchSize != 10000 || c.LR != 0.01 || c.Hidden == nil && !strings.HasSuffix(r.Entry, "-0") ||
					!strings.Contains(e.Dataset, "-havasi") {
					t.Errorf("%s %s: %+v", tab.Name, r.RowID(), c)
				}
			case "dsdgp-kin8nm":
				if e.Dataset != "kin8nm-bb" || c.Inducing != 100 {
					t.Errorf("%s %s: data %s, %+v", tab.Name, r.RowID(), e.Dataset, c)
				}
				if r.Options.NatGrad && r.Options.Iters != 10200 || !r.Options.NatGrad && c.Iters != 5100 {
					t.Errorf("%s %s: %d steps (options %+v)", tab.Name, r.RowID(), c.Iters, r.Options)
				}
			case "bayesian-benchmarks":
				if !strings.HasSuffix(e.Dataset, "-bb") || c.Inducing != 100 || c.NoiseVariance != 0.01 || c.KernelLengthscale < 2 {
					t.Errorf("%s %s: %+v", tab.Name, r.RowID(), c)
				}
				if (c.Family == "dgp") != (r.Options.LL == zoo.LLMomentMatched) || c.Family == "dgp" && c.TestSamples != 1000 {
					t.Errorf("%s %s: LL %q, test samples %d", tab.Name, r.RowID(), r.Options.LL, c.TestSamples)
				}
				if c.Family != "sgpr" && (c.Iters != 5000 || !c.NatGrad) || c.Family == "sgpr" && (c.Iters != 10000 || c.Optimizer != "lbfgs") {
					t.Errorf("%s %s: %+v", tab.Name, r.RowID(), c)
				}
			}
		}
	}
	if !slices.Equal(names, []string{"havasi-kin8nm", "havasi-protein", "dsdgp-kin8nm", "bayesian-benchmarks"}) {
		t.Errorf("paper tables %v", names)
	}
	// The published numbers are ANCHORS §1.1–1.3's.
	tab, _ := zoo.LookupTable("havasi-kin8nm")
	if r, _ := tab.Row("kin8nm-havasi/dgp-decoupled-3"); r.LL.Text != "1.37 ± 0.01" || *r.LL.Std != 0.01 || r.RMSE.Std != nil || r.RMSE.Mean != 0.07 {
		t.Errorf("decoupled L=3: %+v %+v", r.LL, r.RMSE)
	}
	tab, _ = zoo.LookupTable("dsdgp-kin8nm")
	if r, _ := tab.Row("kin8nm-bb/dsdgp-3+natgrad"); r.LL.Mean != 1.315 || r.LL.String() != "1.315 ± —" || !r.Options.NatGrad {
		t.Errorf("natgrad row %+v", r)
	}
	tab, _ = zoo.LookupTable("bayesian-benchmarks")
	if r, _ := tab.Row("yacht-bb/dgp2"); r.LL.Mean != -0.458 || r.RMSE.Mean != 0.476 {
		t.Errorf("yacht DGP-2 %+v %+v", r.LL, r.RMSE)
	}
}

// Issue 40's comparison table: the exact GP by CG, SGPR (M = 512) and SVGP (M = 1024, 100 epochs) on five sets,
// split 0, RMSE in the source's standardised units; not one of the seeds' tables (REPRODUCTION.md).
func TestWangTable(t *testing.T) {
	t.Parallel()
	tab, err := zoo.LookupTable("wang-exact")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 15 || !slices.Equal(tab.Splits, []int{0}) || !tab.StandardisedRMSE || len(tab.Differences) < 4 {
		t.Errorf("wang-exact: %d rows, splits %v, standardised %t", len(tab.Rows), tab.Splits, tab.StandardisedRMSE)
	}
	for _, p := range zoo.PaperTables() {
		if p.Name == tab.Name {
			t.Error("wang-exact is among the seeds' tables")
		}
	}
	for i := range tab.Rows {
		r := &tab.Rows[i]
		e, err := zoo.Lookup(r.Entry)
		if err != nil {
			t.Fatal(err)
		}
		c := e.Config
		ok := r.RMSE != nil && r.RMSE.Mean > 0 && r.RMSE.Mean < 1
		switch e.Model {
		case "gpr":
			ok = ok && c.Family == "gpr" && c.Exact.Solver == "cg" && c.Iters == zoo.DefaultCGIters && c.Exact.PrecondRank == 0
		case "sgpr-512":
			ok = ok && c.Family == "sgpr" && c.Inducing == 512
		case "svgp-1024":
			ok = ok && c.Family == "svgp" && c.Inducing == 1024 && c.BatchSize == 1024 && c.Iters >= 100*13000/1024 && c.Iters <= 100*44000/1024+1
		default:
			ok = false
		}
		if !ok {
			t.Errorf("%s: %+v, published RMSE %+v", r.Entry, c, r.RMSE)
		}
	}
	if r, _ := tab.Row("kin40k/gpr"); r.RMSE.Mean != 0.099 {
		t.Errorf("kin40k exact GP published %+v", r.RMSE)
	}
}

func TestParsePublished(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		mean float64
		std  float64 // −1: none
		out  string
	}{{"1.34 ± 0.02", 1.34, 0.02, "1.34 ± 0.02"}, {"−2.77 ± 0.01", -2.77, 0.01, "−2.77 ± 0.01"}, {"-2.4", -2.4, -1, "−2.4 ± —"}, {"9.353", 9.353, -1, "9.353 ± —"}} {
		p, err := zoo.ParsePublished(c.in)
		if err != nil || p.Mean != c.mean || (c.std < 0) != (p.Std == nil) || p.Std != nil && *p.Std != c.std || p.String() != c.out {
			t.Errorf("%q: %+v %v", c.in, p, err)
		}
	}
	for _, bad := range []string{"", "x", "1 ±", "1 ± −2", "NaN", "1 ± 2 ± 3"} {
		if _, err := zoo.ParsePublished(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Malformed tables are refused with ErrBadTable, naming what is wrong.
func TestRegisterTableRefusals(t *testing.T) {
	t.Parallel()
	ok := func() *zoo.Table { return tinyTable("refusal-ok") }
	for _, c := range []struct {
		name string
		edit func(*zoo.Table)
	}{
		{"bad name", func(t *zoo.Table) { t.Name = "Bad Name" }},
		{"no rows", func(t *zoo.Table) { t.Rows = nil }},
		{"no splits", func(t *zoo.Table) { t.Splits = nil }},
		{"repeated split", func(t *zoo.Table) { t.Splits = []int{1, 1} }},
		{"unknown entry", func(t *zoo.Table) { t.Rows[0].Entry = "no/such" }},
		{"unsafe ID", func(t *zoo.Table) { t.Rows[0].ID = "../escape" }},
		{"absolute ID", func(t *zoo.Table) { t.Rows[0].ID = "/abs" }},
		{"duplicate ID", func(t *zoo.Table) { t.Rows[1].ID = "boston-bb/svgp" }},
		{"no label", func(t *zoo.Table) { t.Rows[0].Label = "" }},
		{"moment-matched LL of an SVGP", func(t *zoo.Table) { t.Rows[0].Options.LL = zoo.LLMomentMatched }},
		{"unknown LL", func(t *zoo.Table) { t.Rows[0].Options.LL = "best" }},
		{"negative option", func(t *zoo.Table) { t.Rows[0].Options.Iters = -1 }},
		{"difference without a reason", func(t *zoo.Table) { t.Differences = []zoo.Difference{{What: "x"}} }},
		{"taken name", func(t *zoo.Table) { t.Name = "havasi-kin8nm" }},
	} {
		tab := ok()
		c.edit(tab)
		if err := zoo.RegisterTable(tab); !errors.Is(err, zoo.ErrBadTable) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// Tasks selects rows by glob patterns of their IDs and splits by a list; a pattern matching no row is an error
// listing the rows.
func TestTableTasks(t *testing.T) {
	t.Parallel()
	tab, _ := zoo.LookupTable("havasi-kin8nm")
	ks, err := tab.Tasks("*decoupled-[12]", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range ks {
		got = append(got, k.Key())
	}
	want := []string{}
	for _, l := range []int{1, 2} {
		for s := range 3 {
			want = append(want, fmt.Sprintf("havasi-kin8nm/kin8nm-havasi/dgp-decoupled-%d/split-%d", l, s))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("tasks %v, want %v", got, want)
	}
	if ks, err := tab.Tasks("kin8nm-havasi/dgp-coupled-0, *decoupled-4", []int{3, 4}); err != nil || len(ks) != 4 || ks[1].Split != 4 {
		t.Errorf("two patterns and splits 3,4: %v %v", ks, err)
	}
	if _, err := tab.Tasks("*nothing*", nil); err == nil || !strings.Contains(err.Error(), "kin8nm-havasi/dgp-coupled-0") {
		t.Errorf("unmatched pattern: %v", err)
	}
	if _, err := tab.Tasks("", []int{1, 1}); !errors.Is(err, zoo.ErrBadSplits) {
		t.Errorf("repeated split: %v", err)
	}
	if _, err := tab.Tasks("[", nil); err == nil {
		t.Error("malformed pattern accepted")
	}
	if ks, _ := tab.Tasks("", nil); len(ks) != 30 {
		t.Errorf("%d runs in the whole table, want 30", len(ks))
	}
}

// A struct's configuration line keeps only its non-zero fields in the fingerprint, so that a field the struct
// gains later at a zero value (ExactOptions.MaxPrecondRank, say) leaves its rows' results current; a changed
// value, or a struct print that does not split into plain fields, is not dropped.
func TestFingerprintStructFields(t *testing.T) {
	fp := func(text string) string { return (&zoo.TableRun{Protocol: "entry e\n" + text}).CurrentFingerprint() }
	base := fp("config Exact={Solver:cg Memory:0 PrecondRank:0 solver: reason:}\n")
	for _, c := range []struct {
		text string
		same bool
	}{
		{"config Exact={Solver:cg}\n", true},
		{"config Exact={Solver:cg Memory:0 PrecondRank:0 MaxPrecondRank:0 solver: reason:}\n", true},
		{"config Exact={Solver:cg MaxPrecondRank:-1}\n", false},
		{"config Exact={Solver:cholesky}\n", false},
		{"", false},
	} {
		if got := fp(c.text) == base; got != c.same {
			t.Errorf("%q: same fingerprint %v, want %v", c.text, got, c.same)
		}
	}
	if fp("config Exact={Memory:0 solver:}\n") != fp("") {
		t.Error("a struct line of zero fields only changes the fingerprint")
	}
	if fp("config Kernel=SE{ls:0}\n") == fp("config Kernel=SE{}\n") {
		t.Error("a value that is not a struct print was rewritten")
	}
	if fp("config Layer={Inner:{A:0} B:0}\n") == fp("config Layer={Inner:{A:0}}\n") {
		t.Error("a nested struct's print was rewritten")
	}
}
