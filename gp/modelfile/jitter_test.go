package modelfile_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
)

// fileSpec returns the Spec JSON stored in a model file's bytes.
func fileSpec(t *testing.T, raw []byte) string {
	t.Helper()
	i := bytes.Index(raw, []byte(`{"created_by"`))
	if i < 0 || len(raw) < i+32 {
		t.Fatal("no payload in the model file")
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw[i:len(raw)-32], &p); err != nil { // the payload, then its SHA-256
		t.Fatal(err)
	}
	return string(p["spec"])
}

// TestGoldenJitterUnchanged: the golden files, written before issue 31, store a fixed Kuu jitter (1e-6) and no
// jitter policy; loaded and saved again, their Specs are byte for byte the ones stored (the fixed policy is kept
// and written as before; TestGolden checks that they predict the same bits).
func TestGoldenJitterUnchanged(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.gpz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("golden files: %v, %v", paths, err)
	}
	fixed := 0
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		stored := fileSpec(t, raw)
		if strings.Contains(stored, "jitter_policy") {
			t.Fatalf("%s: a golden file with a jitter policy: %s", path, stored)
		}
		if strings.Contains(stored, `"jitter":0.000001`) && (strings.Contains(stored, models.KindSGPR) || strings.Contains(stored, layers.KindSVGP)) {
			fixed++
		}
		f, err := modelfile.LoadFile(path, gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := modelfile.Save(&buf, f); err != nil {
			t.Fatal(err)
		}
		if again := fileSpec(t, buf.Bytes()); again != stored {
			t.Errorf("%s: Spec saved again\n%s\nstored\n%s", filepath.Base(path), again, stored)
		}
	}
	if fixed < 10 {
		t.Errorf("%d golden files with an SGPR or SVGP-layer Kuu jitter of 1e-6, want the SVGP, SGPR, HYBRID, ORTH, DGP and ADVGP ones", fixed)
	}
}

// TestNewFilesRecordOnFailure: a newly built SGPR and SVGP (default jitter policy) write "jitter_policy":
// "on-failure" and load back with no fixed jitter.
func TestNewFilesRecordOnFailure(t *testing.T) {
	t.Parallel()
	ds, _ := famData(regression, 131)
	s, err := models.NewSGPR(models.SGPRConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(ds.X, famM, 0), X: ds.X, Y: ds.Y})
	if err != nil {
		t.Fatal(err)
	}
	l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(ds.X, famM, 0)})
	if err != nil {
		t.Fatal(err)
	}
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: famN})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]modelfile.Model{"SGPR": s, "SVGP": v} {
		var buf bytes.Buffer
		if err := modelfile.Save(&buf, &modelfile.File{Model: m}); err != nil {
			t.Fatal(err)
		}
		if spec := fileSpec(t, buf.Bytes()); !strings.Contains(spec, `"jitter":0,"jitter_policy":"on-failure"`) {
			t.Errorf("%s: Spec %s, want the on-failure policy", name, spec)
		}
		f, err := modelfile.Load(bytes.NewReader(buf.Bytes()), gp.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var j float64
		switch back := f.Model.(type) {
		case *models.SGPR:
			j = back.Jitter()
		case *models.SVGP:
			j = back.Layer.(*layers.SVGP).Jitter()
		}
		if j != 0 {
			t.Errorf("%s: loaded with jitter %v, want 0", name, j)
		}
	}
}
