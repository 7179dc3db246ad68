package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestBadInput sends every kind of bad request over REST: each answers the protocol's error object with a 4xx
// status naming what is wrong, and the server keeps answering.
func TestBadInput(t *testing.T) {
	path := withFeatures(t, "SVGP_gaussian", "temp", "pressure")
	ts := start(t, Config{MaxRows: 10, MaxBodyBytes: 4096, Token: "s3cret"}, named(t, "m", path), named(t, "dgp", golden("DGP_coupled")))
	in := func(inputs string) string { return `{"inputs":[` + inputs + `]}` }
	t2 := func(name, shape, dt, data string) string {
		return `{"name":"` + name + `","shape":` + shape + `,"datatype":"` + dt + `","data":` + data + `}`
	}
	good := in(t2("x", "[1,2]", "FP64", "[1,2]"))
	cases := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		msg                      string
	}{
		{"wrong datatype", "POST", "/v2/models/m/infer", in(t2("x", "[1,2]", "FP32", "[1,2]")), nil, 400, "datatype FP32: the model takes FP64"},
		{"unknown datatype", "POST", "/v2/models/m/infer", in(t2("x", "[1,2]", "DOUBLE", "[1,2]")), nil, 400, `unknown datatype "DOUBLE"`},
		{"wrong width", "POST", "/v2/models/m/infer", in(t2("x", "[1,3]", "FP64", "[1,2,3]")), nil, 400, "the model takes one FP64 tensor [N, 2]"},
		{"3-D", "POST", "/v2/models/m/infer", in(t2("x", "[1,1,2]", "FP64", "[1,2]")), nil, 400, "shape [1 1 2]"},
		{"shape and data disagree", "POST", "/v2/models/m/infer", in(t2("x", "[2,2]", "FP64", "[1,2,3]")), nil, 400, "has 4 elements, data has 3"},
		{"no rows", "POST", "/v2/models/m/infer", in(t2("x", "[0,2]", "FP64", "[]")), nil, 400, "no rows"},
		{"missing feature", "POST", "/v2/models/m/infer", in(t2("temp", "[1]", "FP64", "[1]")), nil, 400, `missing features "pressure"`},
		{"extra feature", "POST", "/v2/models/m/infer", in(t2("temp", "[1]", "FP64", "[1]") + "," + t2("pressure", "[1]", "FP64", "[1]") + "," + t2("wind", "[1]", "FP64", "[1]")), nil, 400, `unknown inputs "wind"`},
		{"repeated feature", "POST", "/v2/models/m/infer", in(t2("temp", "[1]", "FP64", "[1]") + "," + t2("pressure", "[1]", "FP64", "[1]") + "," + t2("temp", "[1]", "FP64", "[2]")), nil, 400, `"temp" is given twice`},
		{"feature rows differ", "POST", "/v2/models/m/infer", in(t2("temp", "[1]", "FP64", "[1]") + "," + t2("pressure", "[2]", "FP64", "[1,2]")), nil, 400, "have 1 and 2 rows"},
		{"feature shape", "POST", "/v2/models/m/infer", in(t2("temp", "[1,2]", "FP64", "[1,2]") + "," + t2("pressure", "[1]", "FP64", "[1]")), nil, 400, "want [N] or [N, 1]"},
		{"overflow to +Inf", "POST", "/v2/models/m/infer", in(t2("x", "[2,2]", "FP64", "[1,2,3,1e999]")), nil, 400, `input row 1, feature "pressure": +Inf`},
		{"overflow to -Inf per feature", "POST", "/v2/models/m/infer", in(t2("temp", "[2]", "FP64", "[-1e400,0]") + "," + t2("pressure", "[2]", "FP64", "[1,2]")), nil, 400, `input row 0, feature "temp": -Inf`},
		{"NaN literal", "POST", "/v2/models/m/infer", in(t2("x", "[1,2]", "FP64", "[NaN,1]")), nil, 400, "not valid JSON"},
		{"string number", "POST", "/v2/models/m/infer", in(t2("x", "[1,2]", "FP64", `["1",2]`)), nil, 400, "a string"},
		{"unknown model", "POST", "/v2/models/nope/infer", good, nil, 404, `model "nope" is not loaded (loaded: dgp, m)`},
		{"unknown version", "POST", "/v2/models/m/versions/v9/infer", good, nil, 404, `model "m" has no version "v9"`},
		{"unknown model metadata", "GET", "/v2/models/nope", "", nil, 404, `model "nope" is not loaded`},
		{"unknown model ready", "GET", "/v2/models/nope/ready", "", nil, 404, `model "nope" is not loaded`},
		{"not JSON", "POST", "/v2/models/m/infer", "this is not JSON", nil, 400, "not valid JSON"},
		{"empty body", "POST", "/v2/models/m/infer", "", nil, 400, "not valid JSON"},
		{"JSON array", "POST", "/v2/models/m/infer", "[]", nil, 400, "must be a JSON object"},
		{"unknown field", "POST", "/v2/models/m/infer", `{"input":[]}`, nil, 400, `unknown fields "input"`},
		{"body over the limit", "POST", "/v2/models/m/infer", `{"id":"` + strings.Repeat("a", 5000) + `","inputs":[]}`, nil, 413, "exceeds the 4096-byte limit"},
		{"rows over the limit", "POST", "/v2/models/m/infer", in(t2("x", "[11,2]", "FP64", "["+strings.Repeat("1,", 21)+"1]")), nil, 413, "11 rows: at most 10"},
		{"rows far over the limit", "POST", "/v2/models/m/infer", in(t2("x", "[200,2]", "FP64", "["+strings.Repeat("1,", 399)+"1]")), nil, 413, "at most"},
		{"unknown parameter", "POST", "/v2/models/m/infer", `{"parameters":{"full-cov":true},"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, `unknown parameters ["full-cov"]`},
		{"latent not bool", "POST", "/v2/models/m/infer", `{"parameters":{"latent":"yes"},"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, `parameter "latent"`},
		{"negative samples", "POST", "/v2/models/m/infer", `{"parameters":{"samples":-1},"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, `"samples" is -1`},
		{"negative seed", "POST", "/v2/models/m/infer", `{"parameters":{"seed":-1},"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, `parameter "seed"`},
		{"full_cov of a deep GP", "POST", "/v2/models/dgp/infer", `{"parameters":{"full_cov":true},"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, "no full covariance"},
		{"unavailable output", "POST", "/v2/models/m/infer", `{"outputs":[{"name":"covariance"}],"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, "covariance needs parameters.full_cov"},
		{"unknown output", "POST", "/v2/models/m/infer", `{"outputs":[{"name":"probabilities"}],"inputs":[` + t2("x", "[1,2]", "FP64", "[1,2]") + `]}`, nil, 400, `output "probabilities" is not available`},
		{"missing token", "POST", "/v2/models/m/infer", good, []string{"Authorization", "Basic eDp5"}, 401, "missing bearer token"},
		{"wrong token", "POST", "/v2/models/m/infer", good, []string{"Authorization", "Bearer s3cre"}, 401, "invalid bearer token"},
		{"wrong token on metadata", "GET", "/v2/models/m", "", []string{"Authorization", "Bearer x"}, 401, "invalid bearer token"},
		{"wrong token on metrics", "GET", "/metrics", "", []string{"Authorization", "Bearer x"}, 401, "invalid bearer token"},
		{"wrong method", "GET", "/v2/models/m/infer", "", nil, 405, "method GET not allowed"},
		{"unknown path", "GET", "/v1/models/m", "", nil, 404, "no such endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := ts.do(t, c.method, c.path, c.body, c.header...)
			var e struct {
				Error *string `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
				t.Fatalf("%d %q: not the protocol's error object", status, body)
			}
			if status != c.status || !strings.Contains(*e.Error, c.msg) {
				t.Errorf("%d %q, want %d containing %q", status, *e.Error, c.status, c.msg)
			}
			// The server is alive and answers a good request.
			if status, body := ts.do(t, "POST", "/v2/models/m/infer", good); status != http.StatusOK {
				t.Fatalf("after: %d %s", status, body)
			}
		})
	}
	// The health endpoints answer without the token.
	for _, p := range []string{"/v2/health/live", "/v2/health/ready"} {
		if status, body := ts.do(t, "GET", p, "", "Authorization", "none"); status != http.StatusOK {
			t.Errorf("%s without the token: %d %s", p, status, body)
		}
	}
}
