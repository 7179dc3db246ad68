package modelfile_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// goldenPredictor is a golden file's expected gp.Prediction: the float64 bits (hex) of every part, by name.
type goldenPredictor struct {
	Build string              `json:"build"`
	Parts map[string][]string `json:"parts"`
}

// predictorOptions are the options of TestGoldenPredictor: chunks that split the 9 test rows unevenly, 5
// samples of a deep GP, the full covariances (refused by deep GPs) and 2 joint draws, from the default
// generator, and the covariances between the outputs at each row.
var predictorOptions = gp.PredictOptions{ChunkRows: 4, Samples: 5, Full: true, Draws: 2, OutputCov: true}

// TestGoldenPredictor is the conformance test of the prediction contract over every model family of the
// golden files (GPR, SGPR, SVGP with each likelihood, DECOUPLED, HYBRID, ORTH, ORTHNAT, coupled, decoupled and
// mixed deep GPs, ADVGP): each loaded model, called through gp.Predictor only at the golden inputs in
// standardised units, passes gptest.CheckPredictor (shapes, determinism, typed shape and non-finite errors) and
// gives the recorded bits of every part of its Prediction: f's and y's marginals, the class probabilities, a
// deep GP's components, the full covariances and the joint draws. The records were written with the golden
// files (-update rewrites both) by the refactor that introduced gp.Predictor, whose outputs were checked bit for
// bit against the previous methods' (GPR.Predict and PredictCov's covariance, SGPR.Predict, SVGP.PredictF and
// PredictY, DGP.PredictF, MomentMatched and YMoments). As in TestGolden, another build checks them to 1e-9. An
// ADVGP model (advgp.FromSVGP of the ADVGP file's SVGP) predicts the SVGP's bits.
func TestGoldenPredictor(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			needWhite(t, c.name)
			raw, err := os.ReadFile(goldenPath(c.name, ".json"))
			if err != nil {
				t.Fatalf("no golden inputs: %v", err)
			}
			var in golden
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			f, err := modelfile.LoadFile(goldenPath(c.name, ".gpz"), gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			x := goldenInputs(in.Inputs)
			if f.Standardizer != nil {
				if x, err = f.Standardizer.ApplyX(x); err != nil {
					t.Fatal(err)
				}
			}
			m, ok := f.Model.(gp.Predictor)
			if !ok {
				t.Fatalf("a %T is not a gp.Predictor", f.Model)
			}
			p := gptest.CheckPredictor(t, m, x, predictorOptions)
			got := predictionParts(p)
			if c.name == "ADVGP" {
				a, err := advgp.FromSVGP(f.Model.(*models.SVGP))
				if err != nil {
					t.Fatal(err)
				}
				ap := gptest.CheckPredictor(t, a, x, predictorOptions)
				if !equalParts(predictionParts(ap), got) {
					t.Error("advgp.Model predicts other bits than the SVGP it views")
				}
			}
			path := goldenPath(c.name, ".predictor.json")
			if *update || *updatePredictions { // the model files are kept by -update-predictions; their predictions are recorded afresh
				rec := goldenPredictor{Build: ops.Build, Parts: got}
				raw, err := json.MarshalIndent(rec, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err = os.ReadFile(path)
			if err != nil {
				t.Fatalf("no recorded prediction (write it with -update): %v", err)
			}
			var want goldenPredictor
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			exact := want.Build == ops.Build
			for _, name := range sortedKeys(want.Parts) {
				w, g := want.Parts[name], got[name]
				if len(g) != len(w) {
					t.Errorf("%s: %d values, want %d", name, len(g), len(w))
					continue
				}
				for k := range w {
					gv, wv := fromHex(t, g[k]), fromHex(t, w[k])
					if exact && g[k] != w[k] || !exact && !(math.Abs(gv-wv) <= 1e-9*math.Abs(wv)) {
						t.Errorf("%s[%d] = %v (%s), want %v (%s) [recorded by build %s, this is %s]", name, k, gv, g[k], wv, w[k], want.Build, ops.Build)
						break
					}
				}
			}
			for name := range got {
				if _, ok := want.Parts[name]; !ok {
					t.Errorf("part %s is not recorded", name)
				}
			}
		})
	}
}

// predictionParts returns every part of p as hex float64 bits, by name.
func predictionParts(p *gp.Prediction) map[string][]string {
	out := map[string][]string{}
	add := func(name string, m *mat.Dense) {
		if m == nil {
			return
		}
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out[name] = append(out[name], fmt.Sprintf("%016x", math.Float64bits(m.At(i, j))))
			}
		}
	}
	add("fmean", p.FMean)
	add("fvar", p.FVar)
	add("ymean", p.YMean)
	add("yvar", p.YVar)
	add("probs", p.Probs)
	for l, c := range p.FCov {
		add(fmt.Sprint("fcov", l), mat.DenseCopyOf(c))
	}
	for k, d := range p.Draws {
		add(fmt.Sprint("draw", k), d)
	}
	for k, c := range p.Components {
		out[fmt.Sprint("component", k, ".weight")] = []string{fmt.Sprintf("%016x", math.Float64bits(c.Weight))}
		add(fmt.Sprint("component", k, ".fmean"), c.FMean)
		add(fmt.Sprint("component", k, ".fvar"), c.FVar)
		add(fmt.Sprint("component", k, ".ymean"), c.YMean)
		add(fmt.Sprint("component", k, ".yvar"), c.YVar)
	}
	return out
}

func equalParts(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func fromHex(t *testing.T, s string) float64 {
	t.Helper()
	var b uint64
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return math.Float64frombits(b)
}
