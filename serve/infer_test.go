package serve

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// direct predicts with the model file itself: what the server must answer, bit for bit.
func direct(t *testing.T, path string, rows [][]float64, o modelfile.PredictOptions) *modelfile.Prediction {
	t.Helper()
	f, err := modelfile.LoadFile(path, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	p, err := f.Predict(x, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func flat(a *mat.Dense) []float64 {
	r, _ := a.Dims()
	var out []float64
	for i := range r {
		out = append(out, a.RawRowView(i)...)
	}
	return out
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

func TestInferFamilies(t *testing.T) {
	ts := start(t, Config{MaxDelay: 1},
		named(t, "gauss", golden("SVGP_gaussian")), named(t, "sgpr", golden("SGPR")), named(t, "gpr", golden("GPR")),
		named(t, "poisson", golden("SVGP_poisson")), named(t, "softmax", golden("SVGP_softmax")),
		named(t, "bernoulli", golden("SVGP_bernoulli")), named(t, "dgp", golden("DGP_coupled")))
	rows := testRows(5, 1)
	for _, c := range []struct {
		model, file string
		params      oip.Parameters
		o           modelfile.PredictOptions
		outs        []string
	}{
		{"gauss", "SVGP_gaussian", nil, modelfile.PredictOptions{Seed: 1}, []string{"mean", "variance"}},
		{"sgpr", "SGPR", nil, modelfile.PredictOptions{Seed: 1}, []string{"mean", "variance"}},
		{"gpr", "GPR", oip.Parameters{"latent": true}, modelfile.PredictOptions{Seed: 1, Latent: true}, []string{"mean", "variance"}},
		{"poisson", "SVGP_poisson", nil, modelfile.PredictOptions{Seed: 1}, []string{"mean", "variance"}},
		{"softmax", "SVGP_softmax", oip.Parameters{"seed": json.Number("7")}, modelfile.PredictOptions{Seed: 7}, []string{"probabilities", "label"}},
		{"bernoulli", "SVGP_bernoulli", nil, modelfile.PredictOptions{Seed: 1}, []string{"probabilities", "label"}},
		{"bernoulli", "SVGP_bernoulli", oip.Parameters{"latent": true}, modelfile.PredictOptions{Seed: 1, Latent: true}, []string{"mean", "variance"}},
		{"dgp", "DGP_coupled", oip.Parameters{"seed": json.Number("3"), "samples": json.Number("4")}, modelfile.PredictOptions{Seed: 3, Draws: 4}, []string{"mean", "variance", "samples"}},
		{"gauss", "SVGP_gaussian", oip.Parameters{"full_cov": true, "samples": json.Number("3"), "seed": json.Number("9")}, modelfile.PredictOptions{Seed: 9, FullCov: true, Draws: 3}, []string{"mean", "variance", "covariance", "samples"}},
	} {
		t.Run(c.model+"/"+strings.Join(c.outs, ","), func(t *testing.T) {
			res := ts.infer(t, c.model, matrixRequest(rows, c.params))
			want := direct(t, golden(c.file), rows, c.o)
			var names []string
			for _, o := range res.Outputs {
				names = append(names, o.Name)
				if o.Datatype != oip.FP64 {
					t.Errorf("%s: datatype %s", o.Name, o.Datatype)
				}
			}
			if !slices.Equal(names, c.outs) {
				t.Fatalf("outputs %v, want %v", names, c.outs)
			}
			check := func(name string, shape []int64, data []float64) {
				t.Helper()
				o := output(t, res, name)
				if !slices.Equal(o.Shape, shape) || !sameBits(o.Data, data) {
					t.Errorf("%s: shape %v data %v, want %v %v", name, o.Shape, o.Data, shape, data)
				}
			}
			n := int64(len(rows))
			for _, name := range c.outs {
				switch name {
				case "mean":
					_, p := want.Mean.Dims()
					check(name, []int64{n, int64(p)}, flat(want.Mean))
				case "variance":
					_, p := want.Var.Dims()
					check(name, []int64{n, int64(p)}, flat(want.Var))
				case "probabilities":
					_, k := want.Probs.Dims()
					check(name, []int64{n, int64(k)}, flat(want.Probs))
				case "label":
					check(name, []int64{n}, want.Labels)
				case "covariance":
					var data []float64
					for _, c := range want.Cov {
						data = append(data, flat(mat.DenseCopyOf(c))...)
					}
					check(name, []int64{int64(len(want.Cov)), n, n}, data)
				case "samples":
					var data []float64
					for _, d := range want.Draws {
						data = append(data, flat(d)...)
					}
					_, l := want.Draws[0].Dims()
					check(name, []int64{int64(len(want.Draws)), n, int64(l)}, data)
				}
			}
			if res.ModelName != c.model || len(res.ModelVersion) != 12 {
				t.Errorf("model %q version %q", res.ModelName, res.ModelVersion)
			}
		})
	}
}

func TestInferFeatureTensorsAndOutputs(t *testing.T) {
	path := withFeatures(t, "SVGP_gaussian", "temp", "pressure")
	ts := start(t, Config{}, named(t, "m", path))
	rows := testRows(3, 2)
	want := direct(t, path, rows, modelfile.PredictOptions{Seed: 1})
	col := func(j int) []float64 {
		var c []float64
		for _, r := range rows {
			c = append(c, r[j])
		}
		return c
	}
	// Per-feature tensors, in another order, one [N] and one [N,1]; only the variance asked for; an id.
	req := &oip.InferRequest{ID: "req-1", Inputs: []oip.RequestInput{
		{Name: "pressure", Shape: []int64{3, 1}, Datatype: oip.FP64, Data: col(1)},
		{Name: "temp", Shape: []int64{3}, Datatype: oip.FP64, Data: col(0)},
	}, Outputs: []oip.RequestOutput{{Name: "variance"}}}
	res := ts.infer(t, "m", req)
	if res.ID != "req-1" || len(res.Outputs) != 1 || !sameBits(output(t, res, "variance").Data, flat(want.Var)) {
		t.Errorf("per-feature request: %+v, want the variance %v", res, flat(want.Var))
	}
	// The same through a nested [N, D] tensor named anything, and a version in the path.
	md := ts.metadata(t, "m")
	body := `{"inputs":[{"name":"x","shape":[3,2],"datatype":"FP64","data":[[` + fmtRow(rows[0]) + `],[` + fmtRow(rows[1]) + `],[` + fmtRow(rows[2]) + `]]}]}`
	status, b := ts.do(t, "POST", "/v2/models/m/versions/"+md.Versions[0]+"/infer", body)
	var r2 oip.InferResponse
	if status != 200 || json.Unmarshal(b, &r2) != nil || !sameBits(output(t, &r2, "mean").Data, flat(want.Mean)) {
		t.Errorf("nested request: %d %s", status, b)
	}
	// Metadata: the [-1, D] tensor, then one per feature; the outputs.
	wantIn := []oip.TensorMetadata{{Name: "input", Datatype: "FP64", Shape: []int64{-1, 2}}, {Name: "temp", Datatype: "FP64", Shape: []int64{-1}}, {Name: "pressure", Datatype: "FP64", Shape: []int64{-1}}}
	wantOut := []oip.TensorMetadata{{Name: "mean", Datatype: "FP64", Shape: []int64{-1, 1}}, {Name: "variance", Datatype: "FP64", Shape: []int64{-1, 1}}}
	if md.Name != "m" || md.Platform != "gpzoo" || !jsonEqual(md.Inputs, wantIn) || !jsonEqual(md.Outputs, wantOut) {
		t.Errorf("metadata %+v", md)
	}
}

func fmtRow(r []float64) string {
	b, _ := json.Marshal(r)
	return strings.Trim(string(b), "[]")
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (ts *testServer) metadata(t *testing.T, model string) *oip.ModelMetadata {
	t.Helper()
	status, b := ts.do(t, "GET", "/v2/models/"+model, "")
	var md oip.ModelMetadata
	if status != 200 || json.Unmarshal(b, &md) != nil {
		t.Fatalf("metadata: %d %s", status, b)
	}
	return &md
}

func TestHealthAndServerMetadata(t *testing.T) {
	ts := start(t, Config{Version: "v-test"}, named(t, "m", golden("SVGP_gaussian")), named(t, "m", golden("SGPR")))
	for _, c := range []struct {
		path string
		want string
	}{
		{"/v2/health/live", `{"live":true}`},
		{"/v2/health/ready", `{"ready":true}`},
		{"/v2", `{"name":"gpzoo","version":"v-test","extensions":[]}`},
		{"/v2/models/m/ready", `{"name":"m","ready":true}`},
	} {
		status, b := ts.do(t, "GET", c.path, "")
		if status != 200 || strings.TrimSpace(string(b)) != c.want {
			t.Errorf("GET %s: %d %s, want %s", c.path, status, b, c.want)
		}
	}
	// Two versions of one name: the default is the last given; each is reachable by its version.
	md := ts.metadata(t, "m")
	if len(md.Versions) != 2 {
		t.Fatalf("versions %v", md.Versions)
	}
	rows := testRows(2, 3)
	res := ts.infer(t, "m", matrixRequest(rows, nil))
	if res.ModelVersion != md.Versions[1] || !sameBits(output(t, res, "mean").Data, flat(direct(t, golden("SGPR"), rows, modelfile.PredictOptions{}).Mean)) {
		t.Errorf("default version %s, want %s (the SGPR's mean)", res.ModelVersion, md.Versions[1])
	}
	status, _ := ts.do(t, "GET", "/v2/models/m/versions/"+md.Versions[0]+"/ready", "")
	if status != 200 {
		t.Errorf("version ready: %d", status)
	}
	if !strings.Contains(ts.log.String(), "model loaded") {
		t.Errorf("no load in the log:\n%s", ts.log)
	}
	if status, _ := ts.do(t, "GET", "/v2/models/m", "", "X", "y"); status != http.StatusOK {
		t.Error(status)
	}
}

// TestNonFiniteOutput: a prediction that overflows float64 (a target scale of 1e200: the variance is ~1e400)
// fails the request with 422 naming the output and row, in the protocol's error object; the finite outputs
// alone are answered.
func TestNonFiniteOutput(t *testing.T) {
	f, err := modelfile.LoadFile(golden("SVGP_gaussian"), gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Standardizer.YStd = []float64{1e200}
	path := t.TempDir() + "/huge.gpz"
	if err := modelfile.SaveFile(path, f); err != nil {
		t.Fatal(err)
	}
	ts := start(t, Config{}, named(t, "huge", path))
	body, _ := json.Marshal(matrixRequest(testRows(3, 1), nil))
	status, b := ts.do(t, "POST", "/v2/models/huge/infer", string(body))
	var e oip.ErrorResponse
	if status != http.StatusUnprocessableEntity || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, `output "variance" is not finite at row 0, column 0 (+Inf)`) {
		t.Errorf("%d %s, want 422 naming the variance's row 0", status, b)
	}
	res := ts.infer(t, "huge", &oip.InferRequest{Inputs: matrixRequest(testRows(3, 1), nil).Inputs, Outputs: []oip.RequestOutput{{Name: "mean"}}})
	if len(res.Outputs) != 1 || res.Outputs[0].Name != "mean" {
		t.Errorf("the mean alone: %+v", res)
	}
}

// TestRequestTimeout: a request whose prediction does not finish within RequestTimeout answers 503.
func TestRequestTimeout(t *testing.T) {
	ts := start(t, Config{MaxDelay: 300 * time.Millisecond, RequestTimeout: 20 * time.Millisecond}, named(t, "m", golden("SVGP_gaussian")))
	body, _ := json.Marshal(matrixRequest(testRows(2, 1), nil))
	status, b := ts.do(t, "POST", "/v2/models/m/infer", string(body))
	if status != http.StatusServiceUnavailable || !strings.Contains(string(b), "request timeout") {
		t.Errorf("%d %s, want 503", status, b)
	}
}
