package grammar

import (
	"errors"
	"testing"
)

func leaf(b Base) *Expr { return NewBase(b) }

func mustSum(t *testing.T, terms ...*Expr) *Expr {
	t.Helper()
	e, err := Sum(terms...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustProduct(t *testing.T, terms ...*Expr) *Expr {
	t.Helper()
	e, err := Product(terms...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBaseString(t *testing.T) {
	t.Parallel()
	for b, want := range map[Base]string{PER: "PER", LIN: "LIN", RQ: "RQ", SE: "SE", Base(4): "Base(4)", Base(-1): "Base(-1)"} {
		if got := b.String(); got != want {
			t.Errorf("Base(%d).String() = %q, want %q", int(b), got, want)
		}
	}
}

// TestCanonicalConstruction builds expressions with Sum and Product in non-canonical operand orders and
// nestings and checks the canonical form, operator, operands and level.
func TestCanonicalConstruction(t *testing.T) {
	t.Parallel()
	per, lin, rq, se := leaf(PER), leaf(LIN), leaf(RQ), leaf(SE)
	cases := []struct {
		name  string
		e     *Expr
		want  string
		op    Op
		terms int
		level int
	}{
		{"leaf", se, "SE", Leaf, 0, 1},
		{"sum sorted", mustSum(t, se, rq, per), "PER+RQ+SE", Add, 3, 3},
		{"sum keeps repeats", mustSum(t, se, per, per), "PER+PER+SE", Add, 3, 3},
		{"sum flattened left", mustSum(t, mustSum(t, rq, lin), per), "PER+LIN+RQ", Add, 3, 3},
		{"sum flattened right", mustSum(t, per, mustSum(t, se, mustSum(t, rq, lin))), "PER+LIN+RQ+SE", Add, 4, 4},
		{"product flattened", mustProduct(t, se, mustProduct(t, lin, per)), "PER*LIN*SE", Mul, 3, 3},
		{"compound first in sum", mustSum(t, lin, mustProduct(t, rq, lin)), "LIN*RQ+LIN", Add, 2, 3},
		{"compound first in product", mustProduct(t, lin, mustSum(t, rq, per)), "(PER+RQ)*LIN", Mul, 2, 3},
		{"no distributivity", mustProduct(t, mustSum(t, per, rq), mustSum(t, se, lin)), "(LIN+SE)*(PER+RQ)", Mul, 2, 4},
		{"compounds by string", mustSum(t, se, mustProduct(t, se, rq), mustProduct(t, lin, per)), "PER*LIN+RQ*SE+SE", Add, 3, 5},
		{"product inside sum unparenthesised", mustSum(t, mustProduct(t, mustSum(t, per, se), lin), rq), "(PER+SE)*LIN+RQ", Add, 2, 4},
	}
	for _, c := range cases {
		if got := c.e.String(); got != c.want {
			t.Errorf("%s: String() = %q, want %q", c.name, got, c.want)
		}
		if c.e.Op() != c.op || len(c.e.Terms()) != c.terms || c.e.Level() != c.level {
			t.Errorf("%s: Op %d, %d terms, level %d; want %d, %d, %d", c.name, c.e.Op(), len(c.e.Terms()), c.e.Level(), c.op, c.terms, c.level)
		}
		for _, sub := range c.e.Terms() {
			if sub.Op() == c.e.Op() {
				t.Errorf("%s: operand %v has the parent's operator (not flattened)", c.name, sub)
			}
		}
	}
}

func TestK12Canonical(t *testing.T) {
	t.Parallel()
	// Table 1 of App. E.1 with × replaced by *, built here from operands in deliberately scrambled order.
	per, lin, rq, se := leaf(PER), leaf(LIN), leaf(RQ), leaf(SE)
	built := []*Expr{
		mustSum(t, rq, lin),
		mustSum(t, lin, mustProduct(t, rq, lin)),
		mustSum(t, per, mustProduct(t, rq, lin)),
		mustSum(t, se, rq, per),
		mustSum(t, rq, mustSum(t, lin, per)),
		mustSum(t, se, per, per),
		mustSum(t, se, mustProduct(t, se, per)),
		mustSum(t, se, mustProduct(t, rq, per)),
		mustSum(t, se, mustProduct(t, lin, per)),
		mustProduct(t, se, lin, per),
		mustProduct(t, rq, mustProduct(t, lin, per)),
		mustProduct(t, lin, mustSum(t, rq, per)),
	}
	want := []string{"LIN+RQ", "LIN*RQ+LIN", "LIN*RQ+PER", "PER+RQ+SE", "PER+LIN+RQ", "PER+PER+SE", "PER*SE+SE",
		"PER*RQ+SE", "PER*LIN+SE", "PER*LIN*SE", "PER*LIN*RQ", "(PER+RQ)*LIN"}
	k12 := K12()
	if len(k12) != 12 {
		t.Fatalf("K12 has %d kernels", len(k12))
	}
	for i := range want {
		if got := built[i].String(); got != want[i] {
			t.Errorf("k%d built: %q, want %q", i+1, got, want[i])
		}
		if got := k12[i].String(); got != want[i] {
			t.Errorf("K12()[%d] = %q, want k%d = %q", i, got, i+1, want[i])
		}
		if !k12[i].Equal(built[i]) {
			t.Errorf("k%d: K12 entry not Equal to the built one", i+1)
		}
	}
	k12[0] = nil
	if K12()[0] == nil {
		t.Error("K12 returned a shared slice")
	}
}

func TestSumProductErrors(t *testing.T) {
	t.Parallel()
	se := leaf(SE)
	for name, f := range map[string]func() (*Expr, error){
		"sum none":         func() (*Expr, error) { return Sum() },
		"sum one":          func() (*Expr, error) { return Sum(se) },
		"sum nil":          func() (*Expr, error) { return Sum(se, nil) },
		"product one":      func() (*Expr, error) { return Product(se) },
		"product nil":      func() (*Expr, error) { return Product(nil, se) },
		"sum invalid base": func() (*Expr, error) { return Sum(se, NewBase(Base(9))) },
		"product invalid":  func() (*Expr, error) { return Product(NewBase(Base(-1)), se) },
	} {
		e, err := f()
		if err == nil || e != nil {
			t.Errorf("%s: got %v, %v; want an error", name, e, err)
		}
	}
	if _, err := Sum(se, NewBase(Base(9))); !errors.Is(err, errInvalidBase) {
		t.Errorf("invalid base: error %v does not wrap errInvalidBase", err)
	}
}

func TestExprAccessors(t *testing.T) {
	t.Parallel()
	e := mustProduct(t, leaf(LIN), mustSum(t, leaf(RQ), leaf(PER)))
	terms := e.Terms()
	if len(terms) != 2 || terms[0].String() != "PER+RQ" || terms[1].Op() != Leaf || terms[1].Base() != LIN {
		t.Fatalf("Terms() = %v", terms)
	}
	terms[0] = leaf(SE)
	if e.String() != "(PER+RQ)*LIN" || e.Terms()[0].String() != "PER+RQ" {
		t.Error("modifying the Terms() copy changed the expression")
	}
	if leaf(RQ).Terms() != nil {
		t.Error("a leaf has operands")
	}
	var zero Expr
	if zero.String() != "PER" || zero.Level() != 1 || zero.Op() != Leaf || !zero.Equal(leaf(PER)) {
		t.Errorf("zero Expr: %q level %d", zero.String(), zero.Level())
	}
	var nilExpr *Expr
	if nilExpr.String() != "<nil>" || nilExpr.Level() != 0 || nilExpr.Terms() != nil || !nilExpr.Equal(nil) || nilExpr.Equal(leaf(SE)) || leaf(SE).Equal(nil) {
		t.Error("nil *Expr accessors misbehave")
	}
	if leaf(SE).Equal(leaf(RQ)) || !mustSum(t, leaf(SE), leaf(RQ)).Equal(mustSum(t, leaf(RQ), leaf(SE))) {
		t.Error("Equal is not canonical equality")
	}
	if mustSum(t, leaf(SE), leaf(RQ)).Equal(mustProduct(t, leaf(SE), leaf(RQ))) {
		t.Error("SE+RQ equals SE*RQ")
	}
}
