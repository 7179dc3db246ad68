package grammar

import (
	"slices"
	"strings"
	"testing"
)

// shape classifies a level-3 expression: "sum3", "prod3", "(A+B)*C" or "A*B+C".
func shape(e *Expr) string {
	ts := e.Terms()
	switch {
	case e.Op() == Add && len(ts) == 3:
		return "sum3"
	case e.Op() == Mul && len(ts) == 3:
		return "prod3"
	case e.Op() == Mul && len(ts) == 2 && ts[0].Op() == Add && ts[1].Op() == Leaf:
		return "(A+B)*C"
	case e.Op() == Add && len(ts) == 2 && ts[0].Op() == Mul && ts[1].Op() == Leaf:
		return "A*B+C"
	}
	return "other"
}

func TestEnumerateCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		level   int
		total   int
		byLevel []int
	}{
		{1, 4, []int{4}},
		{2, 24, []int{4, 20}},
		{3, 144, []int{4, 20, 120}},
	} {
		es, err := Enumerate(c.level)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != c.total {
			t.Errorf("Enumerate(%d): %d expressions, want %d", c.level, len(es), c.total)
		}
		got := make([]int, c.level)
		for _, e := range es {
			if e.Level() < 1 || e.Level() > c.level {
				t.Fatalf("Enumerate(%d) holds %v of level %d", c.level, e, e.Level())
			}
			got[e.Level()-1]++
		}
		if !slices.Equal(got, c.byLevel) {
			t.Errorf("Enumerate(%d): counts by level %v, want %v", c.level, got, c.byLevel)
		}
	}
	// Level 2: 10 sums and 10 products; level 3: the four shapes of the paper's count (20 + 20 + 40 + 40).
	k := K144()
	ops := map[Op]int{}
	for _, e := range k[4:24] {
		ops[e.Op()]++
	}
	if ops[Add] != 10 || ops[Mul] != 10 {
		t.Errorf("level 2: %d sums and %d products, want 10 and 10", ops[Add], ops[Mul])
	}
	shapes := map[string]int{}
	for _, e := range k[24:] {
		shapes[shape(e)]++
	}
	want := map[string]int{"sum3": 20, "prod3": 20, "(A+B)*C": 40, "A*B+C": 40}
	for s, n := range want {
		if shapes[s] != n {
			t.Errorf("level 3: %d of shape %s, want %d (all: %v)", shapes[s], s, n, shapes)
		}
	}
}

func TestEnumerateOrderAndUniqueness(t *testing.T) {
	t.Parallel()
	a, err := Enumerate(3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Enumerate(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, e := range a {
		if seen[e.String()] {
			t.Errorf("%v listed twice", e)
		}
		seen[e.String()] = true
		if b[i].String() != e.String() {
			t.Errorf("Enumerate is not deterministic at %d: %v vs %v", i, e, b[i])
		}
		if i > 0 {
			p := a[i-1]
			if p.Level() > e.Level() || p.Level() == e.Level() && strings.Compare(p.String(), e.String()) >= 0 {
				t.Errorf("order broken at %d: %v (level %d) before %v (level %d)", i, p, p.Level(), e, e.Level())
			}
		}
		// Every member is canonical: reparsing gives the same string.
		if q, err := Parse(e.String()); err != nil || q.String() != e.String() {
			t.Errorf("%v is not canonical: %v, %v", e, q, err)
		}
	}
	// Level 1 is sorted by string too, not in Base order.
	if got := []string{a[0].String(), a[1].String(), a[2].String(), a[3].String()}; !slices.Equal(got, []string{"LIN", "PER", "RQ", "SE"}) {
		t.Errorf("level 1 = %v", got)
	}
	// The prefix property: Enumerate(2) is the first 24 of Enumerate(3).
	two, _ := Enumerate(2)
	for i, e := range two {
		if !e.Equal(a[i]) {
			t.Errorf("Enumerate(2)[%d] = %v, Enumerate(3)[%d] = %v", i, e, i, a[i])
		}
	}
	k := K144()
	if len(k) != len(a) || !k[100].Equal(a[100]) {
		t.Error("K144 differs from Enumerate(3)")
	}
	k[0] = nil
	if K144()[0] == nil {
		t.Error("K144 returned a shared slice")
	}
}

func TestK12InK144(t *testing.T) {
	t.Parallel()
	in := map[string]bool{}
	for _, e := range K144() {
		in[e.String()] = true
	}
	for i, e := range K12() {
		if !in[e.String()] {
			t.Errorf("k%d = %v is not in K144", i+1, e)
		}
	}
	// Outside K144: level 4, and distributed forms are different kernels.
	for _, s := range []string{"PER+LIN+RQ+SE", "(PER+RQ)*(LIN+SE)"} {
		e, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if in[e.String()] {
			t.Errorf("%v should not be in K144", e)
		}
	}
}

func TestEnumerateLevels(t *testing.T) {
	t.Parallel()
	for _, l := range []int{0, -1, maxEnumerateLevel + 1} {
		if es, err := Enumerate(l); err == nil || es != nil {
			t.Errorf("Enumerate(%d) = %d expressions, %v; want an error", l, len(es), err)
		}
	}
	// Level 4 grows from level 3 by the same rules: every level-4 expression comes from a level-3 one.
	es, err := Enumerate(4)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) <= 144 || !es[143].Equal(K144()[143]) {
		t.Errorf("Enumerate(4): %d expressions", len(es))
	}
	for _, e := range es[144:] {
		if e.Level() != 4 {
			t.Fatalf("Enumerate(4) holds %v of level %d after the first 144", e, e.Level())
		}
	}
}
