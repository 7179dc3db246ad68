package serve

import (
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
)

// TestOutputsOnRequest: "std" and "classes" are answered when named (std with the model file's bits, which
// √variance need not have; classes as the model file's label values), never by default.
func TestOutputsOnRequest(t *testing.T) {
	ts := start(t, Config{Logger: discard}, named(t, "reg", golden("SVGP_gaussian")), named(t, "cls", golden("SVGP_softmax")))
	rows := testRows(5, 2)
	req := func(params oip.Parameters, outs ...string) *oip.InferRequest {
		r := matrixRequest(rows, params)
		for _, o := range outs {
			r.Outputs = append(r.Outputs, oip.RequestOutput{Name: o})
		}
		return r
	}
	for _, latent := range []bool{false, true} {
		p := direct(t, golden("SVGP_gaussian"), rows, modelfile.PredictOptions{Latent: latent, Seed: DefaultSeed})
		res := ts.infer(t, "reg", req(oip.Parameters{"latent": latent}, OutMean, OutVariance, OutStd))
		if len(res.Outputs) != 3 || !sameBits(output(t, res, OutStd).Data, flat(p.Std)) || !sameBits(output(t, res, OutVariance).Data, flat(p.Var)) {
			t.Errorf("latent %v: std %v, want %v", latent, output(t, res, OutStd).Data, flat(p.Std))
		}
		if res := ts.infer(t, "reg", req(oip.Parameters{"latent": latent})); len(res.Outputs) != 2 {
			t.Errorf("latent %v: default outputs %d, want mean and variance", latent, len(res.Outputs))
		}
	}
	f, err := modelfile.LoadFile(golden("SVGP_softmax"), gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := ts.infer(t, "cls", req(nil, OutClasses, OutLabel))
	classes := output(t, res, OutClasses)
	want, err := f.ClassValues(int(classes.Shape[0]))
	if err != nil || len(res.Outputs) != 2 || !sameBits(classes.Data, want) || len(want) < 2 {
		t.Errorf("classes %+v, want %v (%v)", classes, want, err)
	}
	if res := ts.infer(t, "cls", req(nil)); len(res.Outputs) != 2 || res.Outputs[0].Name != OutProbabilities || res.Outputs[1].Name != OutLabel {
		t.Errorf("default outputs %+v", res.Outputs)
	}
	if status, body := ts.do(t, "POST", "/v2/models/reg/infer", `{"inputs":[{"name":"x","shape":[1,2],"datatype":"FP64","data":[1,2]}],"outputs":[{"name":"classes"}]}`); status != 400 {
		t.Errorf("classes of a regression: %d %s", status, body)
	}
}
