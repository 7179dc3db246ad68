package grammar

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
)

func TestParseCanonical(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"rq + lin":             "LIN+RQ",
		"LIN*(RQ*PER)":         "PER*LIN*RQ",
		"((SE))":               "SE",
		"RQ×LIN":               "LIN*RQ",
		"SE+RQ*LIN":            "LIN*RQ+SE",
		"(PER+RQ)*LIN":         "(PER+RQ)*LIN",
		"LIN*(RQ+PER)":         "(PER+RQ)*LIN",
		"(PER+RQ)+LIN":         "PER+LIN+RQ",
		"  Per\t*\nSe + se ":   "PER*SE+SE",
		"(SE*RQ)*(LIN*PER)":    "PER*LIN*RQ*SE",
		"(se+lin)×(rq+per)":    "(LIN+SE)*(PER+RQ)",
		"SE*(RQ+LIN*(PER+SE))": "((PER+SE)*LIN+RQ)*SE",
		"(LIN*RQ)+(PER)":       "LIN*RQ+PER",
	}
	for in, want := range cases {
		e, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := e.String(); got != want {
			t.Errorf("Parse(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseRoundTrip checks Parse(e.String()) for every member of K_144 and K_12: Equal and the identical
// canonical string, and the same level.
func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	all := append(K144(), K12()...)
	if len(all) != 156 {
		t.Fatalf("%d expressions", len(all))
	}
	for _, e := range all {
		p, err := Parse(e.String())
		if err != nil {
			t.Errorf("Parse(%q): %v", e, err)
			continue
		}
		if !p.Equal(e) || p.String() != e.String() || p.Level() != e.Level() || p.Op() != e.Op() {
			t.Errorf("round trip of %q gave %q (level %d, want %d)", e, p, p.Level(), e.Level())
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		pos  int
		want string // substring of the message
	}{
		{"", 0, "empty"},
		{"   ", 0, "empty"},
		{"SE+FOO", 3, `unknown kernel "FOO" (valid: ` + validNames() + `)`},
		{"matern", 0, `unknown kernel "matern"`},
		{"(SE+RQ", 0, "unbalanced parentheses: '(' is never closed"},
		{"SE*(", 3, "never closed"},
		{"((SE)", 0, "never closed"},
		{"SE+RQ)", 5, "unbalanced parentheses: ')' without"},
		{")SE", 0, "unbalanced"},
		{"SE+", 2, `operator "+" has no right operand`},
		{"SE*", 2, `operator "*" has no right operand`},
		{"SE×", 2, `operator "×" has no right operand`},
		{"+SE", 0, `operator "+" has no left operand`},
		{"SE+*RQ", 2, `operator "+" has no right operand`},
		{"(SE+)", 3, "no right operand"},
		{"SE RQ", 3, `unexpected "RQ" after a complete expression`},
		{"SE (RQ)", 3, "after a complete expression"},
		{"(SE RQ)", 4, `unexpected "RQ" inside parentheses`},
		{"()", 0, "empty parentheses"},
		{"SE*()", 3, "empty parentheses"},
		{"SE-RQ", 2, "unexpected character '-'"},
		{"SE+é", 3, "unexpected character 'é'"},
		{"SE+\xff", 3, "invalid UTF-8"},
		{"×SE", 0, "no left operand"},
		{"LIN×RQ×", 7, `operator "×" has no right operand`}, // × is two bytes: Pos is a byte offset
		{strings.Repeat("(", maxDepth+1) + "SE" + strings.Repeat(")", maxDepth+1), maxDepth, "nested deeper"},
	}
	for _, c := range cases {
		e, err := Parse(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SyntaxError", c.in, e, err)
			continue
		}
		if e != nil {
			t.Errorf("Parse(%q) returned %v with an error", c.in, e)
		}
		if se.Input != c.in || se.Pos != c.pos || !strings.Contains(se.Msg, c.want) {
			t.Errorf("Parse(%q): Pos %d Msg %q; want Pos %d and %q", c.in, se.Pos, se.Msg, c.pos, c.want)
		}
		if msg := err.Error(); !strings.Contains(msg, se.Msg) || !strings.Contains(msg, "byte") {
			t.Errorf("Parse(%q): Error() = %q lacks the position or message", c.in, msg)
		}
	}
	// Nesting up to the limit is fine.
	deep := strings.Repeat("(", maxDepth) + "SE" + strings.Repeat(")", maxDepth)
	if e, err := Parse(deep); err != nil || e.String() != "SE" {
		t.Errorf("Parse of %d nested parentheses: %v, %v", maxDepth, e, err)
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := Parse("SE+Foo")
	want := `grammar: syntax error in "SE+Foo" at byte 3: unknown kernel "Foo" (valid: ` + validNames() + `)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestParseList(t *testing.T) {
	t.Parallel()
	for _, kw := range []string{"K12", "k12", " K12 "} {
		l, err := ParseList(kw)
		if err != nil || len(l) != 12 || l[11].String() != "(PER+RQ)*LIN" || l[0].String() != "LIN+RQ" {
			t.Errorf("ParseList(%q) = %v, %v", kw, l, err)
		}
	}
	for _, kw := range []string{"K144", "k144"} {
		l, err := ParseList(kw)
		if err != nil || len(l) != 144 || l[0].String() != "LIN" || l[143].Level() != 3 {
			t.Errorf("ParseList(%q): %d kernels, %v", kw, len(l), err)
		}
	}
	l, err := ParseList("se, rq×lin ,(PER+RQ)*LIN")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l {
		got = append(got, e.String())
	}
	if strings.Join(got, ";") != "SE;LIN*RQ;(PER+RQ)*LIN" {
		t.Errorf("custom list parsed to %v", got)
	}

	errCases := []struct {
		in   string
		pos  int
		want []string
	}{
		{"RQ+LIN,LIN+RQ", 7, []string{"item 2", `"LIN+RQ"`, "item 1", `"RQ+LIN"`, "both are LIN+RQ"}},
		{"SE, PER*LIN, lin * per", 13, []string{"item 3", "item 2", "PER*LIN"}},
		{"SE,,RQ", 3, []string{"empty item 2"}},
		{"SE, ", 4, []string{"empty item 2"}},
		{",SE", 0, []string{"empty item 1"}},
		{"", 0, []string{"empty item 1"}},
		{"SE, RQ+FOO", 7, []string{"item 2", `unknown kernel "FOO"`}},
		{"SE,  (RQ", 5, []string{"item 2", "never closed"}},
		{"K12,SE", 0, []string{"item 1", `unknown kernel "K12"`}},
	}
	for _, c := range errCases {
		l, err := ParseList(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseList(%q) = %v, %v; want a *SyntaxError", c.in, l, err)
			continue
		}
		if se.Input != c.in || se.Pos != c.pos {
			t.Errorf("ParseList(%q): Input %q Pos %d, want Pos %d (%s)", c.in, se.Input, se.Pos, c.pos, se.Msg)
		}
		for _, w := range c.want {
			if !strings.Contains(se.Msg, w) {
				t.Errorf("ParseList(%q): message %q lacks %q", c.in, se.Msg, w)
			}
		}
	}
}

// FuzzParse checks that Parse never panics and that a successful parse round-trips through String.
func FuzzParse(f *testing.F) {
	for _, s := range k12Strings {
		f.Add(s)
	}
	for _, s := range []string{"", "()", "(SE", "SE)", "SE+", "+SE", "SE RQ", "foo", "rq × lin", "SE*(RQ+)", "\xff", "((((PER))))", "LIN*(RQ+PER*(SE+LIN))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) || se.Input != s {
				t.Fatalf("Parse(%q): bad error %#v", s, err)
			}
			return
		}
		p, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, e, err)
		}
		if p.String() != e.String() || p.Level() != e.Level() {
			t.Fatalf("Parse(%q) = %q, reparsed as %q", s, e, p)
		}
	})
}

// TestParseRegisteredKernels: every registered kernel family is a leaf (case-insensitive); the base kernels'
// registered names are those bases; others print upper case after the bases and build through the registry.
func TestParseRegisteredKernels(t *testing.T) {
	registered := func(names ...string) bool {
		for _, n := range names {
			if _, ok := gp.LookupKernel(n); !ok {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		in, want string
		needs    []string // the case runs when these families are registered
	}{
		{"matern52", "MATERN52", []string{"matern52"}},
		{"Matern52+se", "SE+MATERN52", []string{"matern52"}},
		{"periodic*linear", "PER*LIN", nil},
		{"rq+matern12*WHITE", "MATERN12*WHITE+RQ", []string{"matern12", "white"}},
		{"se+per*lin", "PER*LIN+SE", nil},
	} {
		if !registered(c.needs...) {
			continue
		}
		e, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		if e.String() != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, e, c.want)
		}
		if back, err := Parse(e.String()); err != nil || !back.Equal(e) {
			t.Errorf("Parse(%s) = %v, %v", e, back, err)
		}
	}
	for _, f := range gp.KernelFamilies() {
		e, err := Parse(f.Name + "*" + strings.ToUpper(f.Name))
		if err != nil {
			t.Fatalf("Parse(%s): %v", f.Name, err)
		}
		k, err := e.Kernel(BuildConfig{InputDim: 2})
		if err != nil {
			t.Fatalf("%v: Kernel: %v", e, err)
		}
		if k.InputDim() != 2 || len(k.Params()) == 0 && f.Name != "nosuch" {
			t.Errorf("%v: %v", e, k)
		}
	}
}

// validNames is the list of valid kernel names the errors give: the base kernels' short names, then the other
// registered families (with every built-in kernel: PER, LIN, RQ, SE, constant, matern12, matern32, matern52,
// white).
func validNames() string {
	names := []string{"PER", "LIN", "RQ", "SE"}
	for _, f := range gp.KernelFamilies() {
		if !slices.Contains([]string{"periodic", "linear", "rq", "se"}, f.Name) {
			names = append(names, f.Name)
		}
		if f.Sized != nil {
			names = append(names, f.Name+"N") // sm: smN, N components
		}
	}
	return strings.Join(names, ", ")
}

// TestParseSizedFamily: a sized family's name with its size (gp.KernelFamily.Sized), sm7, is a leaf like any
// registered name and builds the kernel of that size (while the spectral mixture is registered).
func TestParseSizedFamily(t *testing.T) {
	if _, ok := gp.LookupKernel("sm"); !ok {
		return // the spectral mixture's file is deleted: nothing sized to parse
	}
	e, err := Parse("sm7+se")
	if err != nil {
		t.Fatal(err)
	}
	k, err := e.Kernel(BuildConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	var q int
	for _, p := range k.Params() {
		if strings.HasSuffix(p.Name(), ".weights") {
			q += p.Size()
		}
	}
	if q != 7 {
		t.Errorf("sm7+se: %d spectral-mixture weights, want 7 (params %v)", q, k.Params())
	}
}
