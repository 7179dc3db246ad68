package oip

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

func FuzzDecodeInferRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","parameters":{"latent":true,"seed":7},"inputs":[{"name":"x","shape":[2,2],"datatype":"FP64","data":[[1,2],[3,4]]}],"outputs":[{"name":"mean"}]}`,
		`{"inputs":[{"name":"a","shape":[2],"datatype":"FP64","data":[1,2]},{"name":"b","shape":[2,1],"datatype":"INT32","data":[[3],[4]]}]}`,
		`{"inputs":[{"name":"x","shape":[0,3],"datatype":"FP32","data":[]}]}`,
		`{"inputs":[{"name":"x","shape":[1],"datatype":"FP64","data":[1e999]}]}`,
		`{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP64","data":[[1,2],[3]]}]}`,
		`{"inputs":[{"name":"x","shape":[1],"datatype":"BYTES","data":["a"]}]}`,
		`[]`, `{`, `{"inputs":[{"data":[[[[[[[]]]]]]]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		limits := Limits{MaxBytes: 1 << 16, MaxElements: 1 << 12}
		req, err := DecodeInferRequest(bytes.NewReader(body), limits)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 || e.Msg == "" {
				t.Fatalf("error %T %v, want a 4xx *oip.Error", err, err)
			}
			return
		}
		if len(req.Inputs) == 0 {
			t.Fatal("no inputs decoded")
		}
		finite := true
		for _, in := range req.Inputs {
			n, overflow := product(in.Shape)
			if overflow || n != int64(len(in.Data)) || !KnownDatatype(in.Datatype) || in.Name == "" {
				t.Fatalf("input %q: shape %v, %d elements, datatype %q", in.Name, in.Shape, len(in.Data), in.Datatype)
			}
			for _, v := range in.Data {
				if math.IsNaN(v) {
					t.Fatal("NaN decoded")
				}
				finite = finite && !math.IsInf(v, 0)
			}
		}
		if !finite {
			return
		}
		// What was decoded encodes to an equivalent request.
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("encoding the decoded request: %v", err)
		}
		again, err := DecodeInferRequest(bytes.NewReader(b), Limits{MaxBytes: 1 << 20, MaxElements: 1 << 12})
		if err != nil {
			t.Fatalf("decoding the re-encoded request %s: %v", b, err)
		}
		if !reflect.DeepEqual(normal(again), normal(req)) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", again, req)
		}
	})
}

// normal maps empty slices and maps to nil, which encoding drops.
func normal(r *InferRequest) *InferRequest {
	c := *r
	if len(c.Parameters) == 0 {
		c.Parameters = nil
	}
	if len(c.Outputs) == 0 {
		c.Outputs = nil
	}
	c.Inputs = append([]RequestInput(nil), r.Inputs...)
	for i := range c.Inputs {
		if len(c.Inputs[i].Parameters) == 0 {
			c.Inputs[i].Parameters = nil
		}
		if len(c.Inputs[i].Data) == 0 {
			c.Inputs[i].Data = nil
		}
	}
	for i := range c.Outputs {
		if len(c.Outputs[i].Parameters) == 0 {
			c.Outputs[i].Parameters = nil
		}
	}
	return &c
}
