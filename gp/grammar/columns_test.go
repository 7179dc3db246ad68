package grammar

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"gonum.org/v1/gonum/mat"
)

// TestParseColumns: a kernel followed by [i,j,…] acts on those input columns (gp.Active); columns after a
// parenthesised expression go to each of its leaves (composed with a leaf's own columns); the canonical form
// prints them and parses back to the same expression.
func TestParseColumns(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"se[0,1,2] * per[3]":      "PER[3]*SE[0,1,2]",
		"SE[2]+se":                "SE+SE[2]",
		"(se + per)[1]":           "PER[1]+SE[1]",
		"(se[1] * per)[0, 2]":     "PER[0,2]*SE[2]",
		"se[1]+se[0]":             "SE[0]+SE[1]",
		"(lin[0]+rq[2,1])[4,5,6]": "LIN[4]+RQ[6,5]",
	} {
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if e.String() != want {
			t.Errorf("Parse(%q) = %s, want %s", in, e, want)
		}
		if back, err := Parse(e.String()); err != nil || !back.Equal(e) {
			t.Errorf("Parse(%s) = %v, %v", e, back, err)
		}
	}
	e, err := Parse("se[2,0]")
	if err != nil || !slices.Equal(e.Dims(), []int{2, 0}) || e.Level() != 1 {
		t.Errorf("se[2,0]: %v, dims %v, %v", e, e.Dims(), err)
	}
	for _, bad := range []struct {
		in  string
		pos int
	}{
		{"se[]", 2}, {"se[0,0]", 5}, {"se[a]", 3}, {"se[0", 2}, {"se[0 1]", 5}, {"[0]", 0}, {"se[-1]", 3},
		{"(se[3])[0,1]", 0}, {"se[0,]", 5}, {"se,per", 2}, {"se[1]]", 5}, {"se[99999999999999999999]", 3},
	} {
		_, err := Parse(bad.in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Pos != bad.pos {
			t.Errorf("Parse(%q): %v (want a SyntaxError at byte %d)", bad.in, err, bad.pos)
		}
	}
	list, err := ParseList("se[0,1]*per[2], per[0,1]*se[2]")
	if err != nil || len(list) != 2 {
		t.Errorf("ParseList with columns: %v, %v", list, err)
	}
}

// TestKernelColumns: Expr.Kernel builds a leaf with columns as gp.Active over the leaf's kernel at the number of
// its columns, with the configuration's length-scales of those columns: the same matrix, bit for bit, as built
// by hand; a column outside InputDim is refused.
func TestKernelColumns(t *testing.T) {
	t.Parallel()
	e, err := Parse("se[2,0] * per[1]")
	if err != nil {
		t.Fatal(err)
	}
	ls := []float64{0.5, 0.9, 1.7}
	k, err := e.Kernel(BuildConfig{InputDim: 3, Lengthscales: ls, Variance: 1.3})
	if err != nil {
		t.Fatal(err)
	}
	if k.InputDim() != 3 {
		t.Fatalf("InputDim %d", k.InputDim())
	}
	per, err := gp.NewPeriodic(gp.KernelConfig{Name: "k.0.per", InputDim: 1, Variance: 1.3, Lengthscales: []float64{0.9}})
	if err != nil {
		t.Fatal(err)
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "k.1.se", InputDim: 2, Lengthscales: []float64{1.7, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := gp.NewActive(per, 3, []int{1})
	b, _ := gp.NewActive(se, 3, []int{2, 0})
	want, err := gp.NewProduct(a, b)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(5, 3, nil)
	for i := range 5 {
		for j := range 3 {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	got, err := gp.KernelMatrix(k, x, x)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := gp.KernelMatrix(want, x, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, ref) {
		t.Errorf("K = %v, want %v", mat.Formatted(got), mat.Formatted(ref))
	}
	if _, err := e.Kernel(BuildConfig{InputDim: 2}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("column 2 with InputDim 2: %v", err)
	}
}
