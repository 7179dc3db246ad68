package gptest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// Component is what CheckSpecRoundTrip takes: a component that describes itself and lists its Params.
type Component interface {
	gp.Describer
	Params() []*graph.Param
}

// CheckSpecRoundTrip sends c's Spec through JSON and gp.BuildSpec (with o), and checks that the rebuilt
// component has c's type, the same Params (names, shapes, transforms, trainability, in order) and the same
// Spec. It copies c's raw values into the rebuilt Params and returns the rebuilt component, which must then
// compute exactly what c computes.
func CheckSpecRoundTrip(t testing.TB, c Component, o gp.BuildOptions) Component {
	t.Helper()
	s, err := c.Spec()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back gp.Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	v, err := gp.BuildSpec(back, o)
	if err != nil {
		t.Fatalf("BuildSpec(%s): %v", raw, err)
	}
	if reflect.TypeOf(v) != reflect.TypeOf(c) {
		t.Fatalf("rebuilt %T, want %T", v, c)
	}
	nc := v.(Component)
	want, got := c.Params(), nc.Params()
	if len(got) != len(want) {
		t.Fatalf("%s: %d Params rebuilt, want %d", s.Kind, len(got), len(want))
	}
	for i, p := range want {
		q := got[i]
		if q.Name() != p.Name() || !reflect.DeepEqual(q.Shape(), p.Shape()) || q.Transform() != p.Transform() || q.Trainable() != p.Trainable() {
			t.Errorf("%s Param %d: rebuilt %v (trainable %v), want %v (trainable %v)", s.Kind, i, q, q.Trainable(), p, p.Trainable())
		}
		if err := q.SetRaw(p.Raw()); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := nc.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if raw2, _ := json.Marshal(s2); string(raw2) != string(raw) {
		t.Errorf("Spec changed by the round trip:\n%s\n%s", raw, raw2)
	}
	return nc
}
