package serve

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// twoOutputModel saves an exact GP of two targets "a" and "b" (gpzoo train --targets a,b records their names in
// Meta "targets"), each standardised on its own, and returns its path.
func twoOutputModel(t *testing.T) string {
	t.Helper()
	const n = 20
	x, y := mat.NewDense(n, 2, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		x0, x1 := float64(i%5)/2-1, float64(i%7)/3-1
		x.Set(i, 0, x0)
		x.Set(i, 1, x1)
		y.Set(i, 0, math.Sin(2*x0)+0.5*x1)
		y.Set(i, 1, 3*math.Cos(x0)-x1)
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2, Lengthscales: []float64{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	model, err := gp.NewGPR(gp.GPRConfig{Kernel: kern, NoiseVariance: 0.01, X: x, Y: y})
	if err != nil {
		t.Fatal(err)
	}
	std := &datasets.Standardizer{XMean: []float64{0, 0}, XStd: []float64{1, 1}, YMean: []float64{100, -5}, YStd: []float64{10, 0.5}}
	f := &modelfile.File{Model: model, Standardizer: std, Meta: map[string]string{"targets": `["a","b"]`, "features": `["x0","x1"]`}}
	path := filepath.Join(t.TempDir(), "two.gpz")
	if err := modelfile.SaveFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServeSeveralOutputs: a model of two targets answers mean, variance and std as [N, 2] tensors (column p the
// target p, in its own units: the model file's bits), each naming its columns in parameters.targets; the
// metadata gives the width 2; a single-target model's tensors carry no such parameter.
func TestServeSeveralOutputs(t *testing.T) {
	path := twoOutputModel(t)
	ts := start(t, Config{Logger: discard}, named(t, "two", path), named(t, "one", golden("SVGP_gaussian")))
	rows := testRows(6, 4)
	want := direct(t, path, rows, modelfile.PredictOptions{Seed: DefaultSeed})
	req := matrixRequest(rows, nil)
	req.Outputs = []oip.RequestOutput{{Name: OutMean}, {Name: OutVariance}, {Name: OutStd}}
	res := ts.infer(t, "two", req)
	for _, c := range []struct {
		name string
		want *mat.Dense
	}{{OutMean, want.Mean}, {OutVariance, want.Var}, {OutStd, want.Std}} {
		o := output(t, res, c.name)
		if len(o.Shape) != 2 || o.Shape[0] != 6 || o.Shape[1] != 2 || !sameBits(o.Data, flat(c.want)) {
			t.Errorf("%s: shape %v, data %v; want [6 2] %v", c.name, o.Shape, o.Data, flat(c.want))
		}
		var names []string
		if s, ok := o.Parameters[ParamTargets].(string); !ok || json.Unmarshal([]byte(s), &names) != nil || strings.Join(names, ",") != "a,b" {
			t.Errorf("%s: parameters %v, want targets [\"a\",\"b\"]", c.name, o.Parameters)
		}
	}
	// The two outputs are in their own units: the standardiser's means 100 and −5 are far apart.
	if m := output(t, res, OutMean).Data; !(math.Abs(m[0]-100) < 50 && math.Abs(m[1]+5) < 5) {
		t.Errorf("means %v: want column 0 near 100, column 1 near −5", m[:2])
	}
	status, body := ts.do(t, "GET", "/v2/models/two", "")
	var md oip.ModelMetadata
	if status != 200 || json.Unmarshal(body, &md) != nil || len(md.Outputs) != 2 || md.Outputs[0].Shape[1] != 2 {
		t.Errorf("metadata %d %s: want mean and variance [-1, 2]", status, body)
	}
	if o := output(t, ts.infer(t, "two", matrixRequest(rows, oip.Parameters{"latent": true})), OutMean); o.Parameters[ParamTargets] != nil {
		t.Errorf("latent mean: parameters %v, want no target names (its columns are latent functions)", o.Parameters)
	}
	if o := output(t, ts.infer(t, "one", matrixRequest(rows, nil)), OutMean); o.Parameters[ParamTargets] != nil || o.Shape[1] != 1 {
		t.Errorf("single-target model: mean %v %v", o.Shape, o.Parameters)
	}
}
