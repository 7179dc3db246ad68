package modelfile_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Golden model files: one file of every model family (and of every likelihood through SVGP), written once by
// `go test ./gp/modelfile -run TestGolden -update` and committed under testdata/golden with the predictions the
// writing code made. A refactor must leave them loading and predicting bit for bit the same: a change of the
// model file format, of a component's Spec or Param order, or of the prediction arithmetic fails this test.
// The same -update run rewrites TestGoldenPredictor's records (NAME.predictor.json: every part of each model's
// gp.Prediction, latent marginals, components, covariances and draws included), which it checks the same way.
//
// Predictions depend on the linear-algebra build: the expected bits are those of the build recorded in the
// JSON (ops.Build); another build (openblas) checks them to a relative 1e-9 instead, which still catches any
// change of what is computed.

var update = flag.Bool("update", false, "rewrite the golden model files and their expected predictions")

// golden is a golden file's expected predictions: the float64 bits (hex) of Predict's Mean, Var and Probs at
// Inputs (original units), and the build that computed them.
type golden struct {
	Build  string      `json:"build"`
	Inputs [][]float64 `json:"inputs"`
	Task   int         `json:"task"`
	Bits   []string    `json:"bits"`
}

// goldenCases are famCases plus the families model files hold under another type: ADVGP (a whitened SVGP),
// ORTHNAT (an ORTH layer trained by natural gradients) and a coupled-only deep GP.
func goldenCases() []famCase {
	cases := famCases()
	for i := range cases {
		if cases[i].name == "ORTH" {
			orth := cases[i]
			orth.name = "ORTHNAT"
			cases = append(cases, orth) // trained below with the natural-gradient hook
		}
	}
	for _, fam := range []string{"coupled", "decoupled"} {
		cases = append(cases, famCase{"DGP/" + fam, regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			lk, err := famGaussian()
			if err != nil {
				t.Fatal(err)
			}
			return goldenDGP(t, x, lk, fam == "decoupled")
		}})
	}
	return append(cases, famCase{"ADVGP", regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
		m, err := advgp.New(advgp.Config{Kernel: famKernel(t, "kern", famD), Z: famZ(x, famM, 0), NumData: famN})
		if err != nil {
			t.Fatal(err)
		}
		return m.SVGP
	}}, famCG())
}

// goldenDGP returns a 2-layer deep GP whose layers are all coupled SVGP layers (as gpzoo train --model dgp
// builds) or all decoupled ones (μ_GPcent, S-form: --layer-family decoupled).
func goldenDGP(t *testing.T, x *mat.Dense, lik gp.Likelihood, decoupled bool) modelfile.Model {
	t.Helper()
	needWhite(t, "DGP")
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{3}, OutputDim: 1, Rand: rand.New(rand.NewPCG(4, 4)),
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			name := fmt.Sprintf("layer%d", s.Index)
			z, err := s.Inducing(famM)
			if err != nil {
				return nil, err
			}
			k := famKernel(t, name+".kern", s.InputDim)
			if s.Inner {
				if k, err = dgp.InnerKernel(k, name+".white"); err != nil {
					return nil, err
				}
			}
			if decoupled {
				return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: z, Zbeta: mat.DenseCopyOf(z.Slice(0, 4, 0, s.InputDim)),
					OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS, SPrior: true})
			}
			return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
		}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: famN, Samples: 2, Rand: rand.New(rand.NewPCG(5, 5))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func goldenPath(name, ext string) string {
	return filepath.Join("testdata", "golden", strings.NewReplacer("/", "_", "+", "-").Replace(name)+ext)
}

func TestGolden(t *testing.T) {
	if *update || *updatePredictions {
		writeGolden(t, *updatePredictions)
	}
	for i, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			needWhite(t, c.name)
			raw, err := os.ReadFile(goldenPath(c.name, ".json"))
			if err != nil {
				t.Fatalf("no golden predictions (write them with -update before a refactor): %v", err)
			}
			var want golden
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			f, err := modelfile.LoadFile(goldenPath(c.name, ".gpz"), gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			got := famPredict(t, f, goldenInputs(want.Inputs), famTask(want.Task))
			if len(got) != len(want.Bits) {
				t.Fatalf("%d predicted values, want %d", len(got), len(want.Bits))
			}
			exact := want.Build == ops.Build
			for k, v := range got {
				var b uint64
				if _, err := fmt.Sscanf(want.Bits[k], "%x", &b); err != nil {
					t.Fatal(err)
				}
				w := math.Float64frombits(b)
				if exact && math.Float64bits(v) != b || !exact && !(math.Abs(v-w) <= 1e-9*math.Abs(w)) {
					t.Errorf("value %d = %v (%016x), want %v (%s) [case %d, recorded by build %s, this is %s]", k, v, math.Float64bits(v), w, want.Bits[k], i, want.Build, ops.Build)
				}
			}
		})
	}
}

func goldenInputs(rows [][]float64) *mat.Dense {
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	return x
}

// updatePredictions re-records the golden predictions from the model files as they are (after a deliberate
// change of the prediction path: the model files, recorded before, must still load).
var updatePredictions = flag.Bool("update-predictions", false, "re-record the golden predictions of the existing golden model files")

// writeGolden trains every golden case briefly (as TestFamiliesRoundTrip does) and writes its model file and
// predictions; predictionsOnly keeps the model files and records their predictions.
func writeGolden(t *testing.T, predictionsOnly bool) {
	if err := os.MkdirAll(filepath.Join("testdata", "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range goldenCases() {
		ds, xTest := famData(c.task, uint64(100+i))
		if !predictionsOnly {
			saveGolden(t, c, ds)
		} else if old, err := os.ReadFile(goldenPath(c.name, ".json")); err == nil {
			var gd golden // re-record at the recorded inputs (the cases' seeds follow their order)
			if err := json.Unmarshal(old, &gd); err != nil {
				t.Fatal(err)
			}
			xTest = mat.NewDense(len(gd.Inputs), len(gd.Inputs[0]), nil)
			for r, row := range gd.Inputs {
				xTest.SetRow(r, row)
			}
		}
		// Predict from the file as loaded, so that what is recorded is what a loaded model gives.
		g, err := modelfile.LoadFile(goldenPath(c.name, ".gpz"), gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
		if err != nil {
			t.Fatal(err)
		}
		vals := famPredict(t, g, xTest, c.task)
		gd := golden{Build: ops.Build, Task: int(c.task)}
		for r := 0; r < famTest; r++ {
			gd.Inputs = append(gd.Inputs, mat.Row(nil, r, xTest))
		}
		for _, v := range vals {
			gd.Bits = append(gd.Bits, fmt.Sprintf("%016x", math.Float64bits(v)))
		}
		raw, err := json.MarshalIndent(gd, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath(c.name, ".json"), append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// saveGolden trains golden case c briefly on ds and writes its model file.
func saveGolden(t *testing.T, c famCase, ds *datasets.Dataset) {
	std, err := datasets.FitStandardizer(ds, c.task == regression)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := std.Apply(ds)
	if err != nil {
		t.Fatal(err)
	}
	m := c.build(t, tr.X, tr.Y)
	cfg := train.Config{Iters: famSteps, Optimizer: &train.Adam{LR: 0.05}}
	if c.name == "ORTHNAT" {
		h, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{orthQ(t, m)}, Gamma: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Hooks = []train.Hook{h}
	}
	if _, err := train.Train(m, tr.X, tr.Y, rand.New(rand.NewPCG(6, 6)), cfg); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	f := &modelfile.File{Model: m, Standardizer: std, Meta: map[string]string{"family": c.name}}
	if c.needData {
		if err := m.(gp.DataHolder).SetTrainingData(tr.X, tr.Y); err != nil {
			t.Fatal(err)
		}
	}
	if err := modelfile.SaveFile(goldenPath(c.name, ".gpz"), f); err != nil {
		t.Fatal(err)
	}
}

// orthQ returns the q(u) of the ORTH layer of an SVGP model (the one natural gradients own).
func orthQ(t *testing.T, m modelfile.Model) *gp.GaussianQ {
	t.Helper()
	s, ok := m.(*models.SVGP)
	if !ok {
		t.Fatalf("ORTHNAT: a %T, want an SVGP model", m)
	}
	o, ok := s.Layer.(*layers.Orth)
	if !ok {
		t.Fatalf("ORTHNAT: a %T layer, want ORTH", s.Layer)
	}
	return o.Beta.Q
}
