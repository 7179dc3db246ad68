package cluster

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

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

// Parameters and gradients cross the wire as raw float64s (MarshalBinary): every bit and field survives gob,
// nested too (a join reply's parameters); short, long and malformed messages are errors, never panics.
func TestWireFloats(t *testing.T) {
	p := paramsMsg{Version: 7, Raw: []float64{1.5, -0, math.Inf(1), math.NaN(), 5e-324}}
	var back paramsMsg
	data, err := encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := decode(data, &back); err != nil || back.Version != 7 || back.Done || len(back.Raw) != 5 {
		t.Fatalf("%+v, %v", back, err)
	}
	for i, v := range p.Raw {
		if math.Float64bits(v) != math.Float64bits(back.Raw[i]) {
			t.Errorf("value %d: %v became %v", i, v, back.Raw[i])
		}
	}
	g := gradMsg{ID: "w-ü", Shard: 3, Version: -1, Loss: 2.5, Points: 64, ShardN: 1000, Grad: []float64{1, 2, 3}}
	var gb gradMsg
	if data, err = encode(g); err != nil {
		t.Fatal(err)
	}
	if err := decode(data, &gb); err != nil || gb.ID != g.ID || gb.Shard != 3 || gb.Version != -1 || gb.Loss != 2.5 ||
		gb.Points != 64 || gb.ShardN != 1000 || !slices.Equal(gb.Grad, g.Grad) {
		t.Fatalf("%+v, %v", gb, err)
	}
	var rep joinReply
	if data, err = encode(joinReply{Params: paramsMsg{Version: 2, Done: true, Raw: []float64{4}}}); err != nil {
		t.Fatal(err)
	}
	if err := decode(data, &rep); err != nil || rep.Params.Version != 2 || !rep.Params.Done || rep.Params.Raw[0] != 4 {
		t.Fatalf("%+v, %v", rep, err)
	}
	raw, _ := g.MarshalBinary()
	for _, bad := range [][]byte{nil, {1}, raw[:len(raw)-1], append(append([]byte(nil), raw...), 0)} {
		if err := new(gradMsg).UnmarshalBinary(bad); err == nil {
			t.Errorf("gradient message of %d bytes accepted", len(bad))
		}
	}
	pr, _ := p.MarshalBinary()
	pr[8] = 2 // neither done nor not
	if err := new(paramsMsg).UnmarshalBinary(pr); err == nil {
		t.Error("a done flag of 2 accepted")
	}
}

func FuzzWireMessages(f *testing.F) {
	p, _ := paramsMsg{Version: 1, Raw: []float64{1, 2}}.MarshalBinary()
	g, _ := gradMsg{ID: "a", Grad: []float64{3}}.MarshalBinary()
	f.Add(p)
	f.Add(g)
	f.Fuzz(func(t *testing.T, data []byte) {
		var pm paramsMsg
		if pm.UnmarshalBinary(data) == nil {
			again, _ := pm.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Fatalf("parameters %x re-encode as %x", data, again)
			}
		}
		var gm gradMsg
		if gm.UnmarshalBinary(data) == nil {
			again, _ := gm.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Fatalf("gradient %x re-encodes as %x", data, again)
			}
		}
	})
}
