package oip

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func decode(t *testing.T, body string, l Limits) (*InferRequest, *Error) {
	t.Helper()
	req, err := DecodeInferRequest(strings.NewReader(body), l)
	if err == nil {
		return req, nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %T %v, want *oip.Error", body, err, err)
	}
	return nil, e
}

func TestDecodeValid(t *testing.T) {
	cases := []struct {
		name, body string
		want       *InferRequest
	}{
		{"flat 2-D", `{"id":"42","inputs":[{"name":"x","shape":[2,2],"datatype":"FP64","data":[1,2,3.5,-4e2]}]}`,
			&InferRequest{ID: "42", Inputs: []RequestInput{{Name: "x", Shape: []int64{2, 2}, Datatype: FP64, Data: []float64{1, 2, 3.5, -400}}}}},
		{"nested 2-D", `{"inputs":[{"name":"x","shape":[2,3],"datatype":"FP64","data":[[1,2,3],[4,5,6]]}]}`,
			&InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{2, 3}, Datatype: FP64, Data: []float64{1, 2, 3, 4, 5, 6}}}}},
		{"nested 3-D", ` { "inputs" : [ { "name" : "x" , "shape" : [ 2 , 1 , 2 ] , "datatype" : "FP64" , "data" : [ [ [ 1 , 2 ] ] , [ [ 3 , 4 ] ] ] } ] } `,
			&InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{2, 1, 2}, Datatype: FP64, Data: []float64{1, 2, 3, 4}}}}},
		{"per feature, parameters, outputs", `{"parameters":{"latent":true,"seed":18446744073709551615,"tag":"a"},"inputs":[{"name":"a","shape":[2],"datatype":"FP64","data":[1,2]},{"name":"b","shape":[2,1],"datatype":"FP64","parameters":{"unit":"m"},"data":[[3],[4]]}],"outputs":[{"name":"mean"},{"name":"variance","parameters":{"binary_data":false}}]}`,
			&InferRequest{
				Parameters: Parameters{"latent": true, "seed": json.Number("18446744073709551615"), "tag": "a"},
				Inputs: []RequestInput{
					{Name: "a", Shape: []int64{2}, Datatype: FP64, Data: []float64{1, 2}},
					{Name: "b", Shape: []int64{2, 1}, Datatype: FP64, Parameters: Parameters{"unit": "m"}, Data: []float64{3, 4}},
				},
				Outputs: []RequestOutput{{Name: "mean"}, {Name: "variance", Parameters: Parameters{"binary_data": false}}},
			}},
		{"empty tensor", `{"inputs":[{"name":"x","shape":[0,3],"datatype":"FP64","data":[]}]}`,
			&InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{0, 3}, Datatype: FP64, Data: []float64{}}}}},
		{"integers and FP32", `{"inputs":[{"name":"i","shape":[2],"datatype":"INT32","data":[-2147483648,7]},{"name":"f","shape":[1],"datatype":"FP32","data":[0.1]}]}`,
			&InferRequest{Inputs: []RequestInput{
				{Name: "i", Shape: []int64{2}, Datatype: INT32, Data: []float64{-2147483648, 7}},
				{Name: "f", Shape: []int64{1}, Datatype: FP32, Data: []float64{float64(float32(0.1))}},
			}}},
		{"null optionals", `{"id":null,"parameters":null,"outputs":null,"inputs":[{"name":"x","shape":[1],"datatype":"FP64","parameters":null,"data":[1]}]}`,
			&InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: FP64, Data: []float64{1}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, e := decode(t, c.body, Limits{})
			if e != nil {
				t.Fatalf("error %d %q", e.Status, e.Msg)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestDecodeOverflowIsInf(t *testing.T) {
	got, e := decode(t, `{"inputs":[{"name":"x","shape":[3],"datatype":"FP64","data":[1e999,-1e999,1e-999]}]}`, Limits{})
	if e != nil {
		t.Fatal(e)
	}
	d := got.Inputs[0].Data
	if !math.IsInf(d[0], 1) || !math.IsInf(d[1], -1) || d[2] != 0 {
		t.Errorf("data %v, want [+Inf -Inf 0]", d)
	}
}

func TestDecodeErrors(t *testing.T) {
	in := func(s string) string { return `{"inputs":[` + s + `]}` }
	cases := []struct {
		name, body string
		status     int
		msg        string // a substring of the message
	}{
		{"empty body", ``, 400, "not valid JSON"},
		{"not JSON", `hello`, 400, "not valid JSON"},
		{"array", `[1,2]`, 400, "JSON object"},
		{"trailing data", `{"inputs":[]} {}`, 400, "not valid JSON"},
		{"unknown field", `{"inputs":[],"Inputs":[]}`, 400, `unknown fields "Inputs"`},
		{"case-sensitive", `{"INPUTS":[]}`, 400, `unknown fields "INPUTS"`},
		{"no inputs", `{}`, 400, `no "inputs"`},
		{"inputs empty", `{"inputs":[]}`, 400, "empty"},
		{"inputs not array", `{"inputs":{}}`, 400, "must be an array"},
		{"id number", `{"id":4,"inputs":[]}`, 400, `"id" must be a string`},
		{"parameter object", `{"parameters":{"a":{}},"inputs":[]}`, 400, "parameters are strings, numbers or booleans"},
		{"parameter null", `{"parameters":{"a":null},"inputs":[]}`, 400, "parameters are strings"},
		{"parameters array", `{"parameters":[1],"inputs":[]}`, 400, "JSON object"},
		{"input not object", in(`1`), 400, "JSON object"},
		{"no name", in(`{"shape":[1],"datatype":"FP64","data":[1]}`), 400, `no "name"`},
		{"empty name", in(`{"name":"","shape":[1],"datatype":"FP64","data":[1]}`), 400, `empty "name"`},
		{"repeated input", in(`{"name":"a","shape":[1],"datatype":"FP64","data":[1]},{"name":"a","shape":[1],"datatype":"FP64","data":[1]}`), 400, `"a" is given twice`},
		{"no shape", in(`{"name":"x","datatype":"FP64","data":[1]}`), 400, `no "shape"`},
		{"negative dim", in(`{"name":"x","shape":[-1],"datatype":"FP64","data":[1]}`), 400, "integers ≥ 0"},
		{"fractional dim", in(`{"name":"x","shape":[1.0],"datatype":"FP64","data":[1]}`), 400, "integers ≥ 0"},
		{"string dim", in(`{"name":"x","shape":["1"],"datatype":"FP64","data":[1]}`), 400, "integers ≥ 0"},
		{"too many dims", in(`{"name":"x","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"datatype":"FP64","data":[1]}`), 400, "at most 16"},
		{"no datatype", in(`{"name":"x","shape":[1],"data":[1]}`), 400, `no "datatype"`},
		{"unknown datatype", in(`{"name":"x","shape":[1],"datatype":"FLOAT64","data":[1]}`), 400, `unknown datatype "FLOAT64"`},
		{"lower-case datatype", in(`{"name":"x","shape":[1],"datatype":"fp64","data":[1]}`), 400, `unknown datatype "fp64"`},
		{"BYTES", in(`{"name":"x","shape":[1],"datatype":"BYTES","data":["a"]}`), 400, "numeric tensors only"},
		{"no data", in(`{"name":"x","shape":[1],"datatype":"FP64"}`), 400, `no "data"`},
		{"data not array", in(`{"name":"x","shape":[1],"datatype":"FP64","data":1}`), 400, "must be an array"},
		{"string element", in(`{"name":"x","shape":[2],"datatype":"FP64","data":[1,"2"]}`), 400, "element 1 is a string"},
		{"bool element", in(`{"name":"x","shape":[1],"datatype":"FP64","data":[true]}`), 400, "a boolean"},
		{"null element", in(`{"name":"x","shape":[1],"datatype":"FP64","data":[null]}`), 400, "null"},
		{"NaN literal", in(`{"name":"x","shape":[1],"datatype":"FP64","data":[NaN]}`), 400, "not valid JSON"},
		{"too few", in(`{"name":"x","shape":[2,2],"datatype":"FP64","data":[1,2,3]}`), 400, "shape [2 2] has 4 elements, data has 3"},
		{"too many", in(`{"name":"x","shape":[1],"datatype":"FP64","data":[1,2]}`), 400, "has 1 elements, data has 2"},
		{"nested wrong", in(`{"name":"x","shape":[2,3],"datatype":"FP64","data":[[1,2],[3,4],[5,6]]}`), 400, "nested as [3 2], shape is [2 3]"},
		{"ragged", in(`{"name":"x","shape":[2,2],"datatype":"FP64","data":[[1,2],[3]]}`), 400, "not a regular array"},
		{"mixed", in(`{"name":"x","shape":[2,2],"datatype":"FP64","data":[[1,2],3,4]}`), 400, "not a regular array"},
		{"too deep", in(`{"name":"x","shape":[1],"datatype":"FP64","data":[[1]]}`), 400, "deeper than"},
		{"not integer", in(`{"name":"x","shape":[1],"datatype":"INT64","data":[1.5]}`), 400, "not an integer"},
		{"out of range", in(`{"name":"x","shape":[1],"datatype":"UINT8","data":[256]}`), 400, "not an integer in [0, 255]"},
		{"negative unsigned", in(`{"name":"x","shape":[1],"datatype":"UINT32","data":[-1]}`), 400, "not an integer"},
		{"output no name", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP64","data":[1]}],"outputs":[{}]}`, 400, `no "name"`},
		{"output twice", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP64","data":[1]}],"outputs":[{"name":"m"},{"name":"m"}]}`, 400, "twice"},
		{"output unknown field", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP64","data":[1]}],"outputs":[{"name":"m","shape":[1]}]}`, 400, "unknown fields"},
		{"huge shape", in(`{"name":"x","shape":[4294967296,4294967296,4294967296],"datatype":"FP64","data":[1]}`), 400, "too many elements"},
		{"shape over limit", in(`{"name":"x","shape":[100000000],"datatype":"FP64","data":[1]}`), 413, "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, e := decode(t, c.body, Limits{})
			if e == nil {
				t.Fatalf("decoded %+v, want an error", got)
			}
			if e.Status != c.status || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("error %d %q, want %d containing %q", e.Status, e.Msg, c.status, c.msg)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	body := `{"inputs":[{"name":"x","shape":[4],"datatype":"FP64","data":[1,2,3,4]}]}`
	if _, e := decode(t, body, Limits{MaxBytes: int64(len(body))}); e != nil {
		t.Fatalf("body at the limit: %v", e)
	}
	if _, e := decode(t, body, Limits{MaxBytes: int64(len(body)) - 1}); e == nil || e.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("body over the limit: %v, want 413", e)
	}
	if _, e := decode(t, body, Limits{MaxElements: 3}); e == nil || e.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("elements over the limit: %v, want 413", e)
	}
	two := `{"inputs":[{"name":"x","shape":[2],"datatype":"FP64","data":[1,2]},{"name":"y","shape":[2],"datatype":"FP64","data":[1,2]}]}`
	if _, e := decode(t, two, Limits{MaxElements: 3}); e == nil || e.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("elements over the limit over two inputs: %v, want 413", e)
	}
	if _, e := decode(t, two, Limits{MaxInputs: 1}); e == nil || e.Status != http.StatusBadRequest {
		t.Errorf("inputs over the limit: %v, want 400", e)
	}
	// A body of ragged data beyond the element budget stops at the budget.
	long := `{"inputs":[{"name":"x","shape":[2],"datatype":"FP64","data":[` + strings.Repeat("1,", 1000) + `1]}]}`
	if _, e := decode(t, long, Limits{MaxElements: 10}); e == nil || e.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("data beyond the element budget: %v, want 413", e)
	}
}

func TestParameters(t *testing.T) {
	p := Parameters{"b": true, "n": json.Number("7"), "big": json.Number("18446744073709551615"), "neg": json.Number("-3"),
		"f": json.Number("2.5"), "fi": json.Number("3e2"), "s": "x", "i64": int64(-5), "u64": uint64(9), "f64": 4.0}
	if v, err := p.Bool("b"); !v || err != nil {
		t.Errorf("Bool(b) = %v, %v", v, err)
	}
	if v, err := p.Bool("absent"); v || err != nil {
		t.Errorf("Bool(absent) = %v, %v", v, err)
	}
	if _, err := p.Bool("n"); err == nil {
		t.Error("Bool(n): no error")
	}
	for name, want := range map[string]int64{"n": 7, "neg": -3, "fi": 300, "i64": -5, "u64": 9, "f64": 4} {
		if v, ok, err := p.Int(name); v != want || !ok || err != nil {
			t.Errorf("Int(%s) = %v, %v, %v; want %d", name, v, ok, err, want)
		}
	}
	for _, name := range []string{"big", "f", "s", "b"} {
		if _, _, err := p.Int(name); err == nil {
			t.Errorf("Int(%s): no error", name)
		}
	}
	for name, want := range map[string]uint64{"n": 7, "big": math.MaxUint64, "fi": 300, "u64": 9, "f64": 4} {
		if v, ok, err := p.Uint(name); v != want || !ok || err != nil {
			t.Errorf("Uint(%s) = %v, %v, %v; want %d", name, v, ok, err, want)
		}
	}
	for _, name := range []string{"neg", "f", "s", "b", "i64"} {
		if _, _, err := p.Uint(name); err == nil {
			t.Errorf("Uint(%s): no error", name)
		}
	}
	if _, ok, err := p.Uint("absent"); ok || err != nil {
		t.Errorf("Uint(absent) = %v, %v", ok, err)
	}
	var e *Error
	if _, _, err := p.Int("s"); !errors.As(err, &e) || e.Status != 400 {
		t.Errorf("Int(s) error %v, want a 400 *Error", err)
	}
	if v, ok, err := p.String("s"); v != "x" || !ok || err != nil {
		t.Errorf("String(s) = %q, %v, %v", v, ok, err)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	req := &InferRequest{ID: "a", Parameters: Parameters{"seed": json.Number("3")},
		Inputs:  []RequestInput{{Name: "x", Shape: []int64{2, 2}, Datatype: FP64, Data: []float64{0.1, math.MaxFloat64, -5e-324, 1}}},
		Outputs: []RequestOutput{{Name: "mean"}}}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got, e := decode(t, string(b), Limits{})
	if e != nil {
		t.Fatal(e)
	}
	if !reflect.DeepEqual(got, req) {
		t.Errorf("round trip: %+v, want %+v", got, req)
	}
	er, _ := json.Marshal(Errorf(404, "no model %q", "m").Response())
	if string(er) != `{"error":"no model \"m\""}` {
		t.Errorf("error object %s", er)
	}
}
