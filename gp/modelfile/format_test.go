package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"gonum.org/v1/gonum/mat"
)

// formatTestFile returns a trained-looking GPR file: kernel SE-ARD + Periodic × Linear, a linear mean, a
// standardizer, training data, metadata, one frozen Param and every raw value moved off its default.
func formatTestFile(t testing.TB, n int) *File {
	t.Helper()
	const d = 3
	rng := rand.New(rand.NewPCG(11, 12))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	se, err := gp.NewSquaredExp(gp.KernelConfig{Name: "se", InputDim: d, Lengthscales: []float64{0.5, 1, 2}})
	must(err)
	per, err := gp.NewPeriodic(gp.KernelConfig{Name: "per", InputDim: d, Lengthscales: []float64{0.8}, Period: 1.3})
	must(err)
	lin, err := gp.NewLinear(gp.KernelConfig{Name: "lin", InputDim: d, Variances: []float64{0.2, 0.4, 0.6}})
	must(err)
	prod, err := gp.NewProduct(per, lin)
	must(err)
	k, err := gp.NewSum(se, prod)
	must(err)
	mean, err := gp.NewLinearMean("mean", d, 1, nil, nil)
	must(err)
	x, y := mat.NewDense(n, d, nil), mat.NewDense(n, 1, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, rng.NormFloat64())
		}
		y.Set(i, 0, math.Sin(2*x.At(i, 0))+0.5*x.At(i, 1)*x.At(i, 2)+0.05*rng.NormFloat64())
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k, Mean: mean, NoiseVariance: 0.03, NoiseFloor: 1e-5, X: x, Y: y})
	must(err)
	for _, p := range m.Params() {
		for i := range p.Raw() {
			p.Raw()[i] += 0.1 * rng.NormFloat64() // values no decimal text holds exactly
		}
	}
	per.Extra.SetTrainable(false)
	return &File{
		Model:        m,
		Standardizer: &datasets.Standardizer{XMean: []float64{0.1, -1.0 / 3, 2}, XStd: []float64{1.5, 0.7, math.Pi}, YMean: []float64{-0.2}, YStd: []float64{1.1}},
		Meta:         map[string]string{"entry": "test/gpr", "seed": "11", "columns": "a,b,c"},
	}
}

func encodeFile(t testing.TB, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Save(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rewrapPayload returns a model file (current version, valid checksum) around payload.
func rewrapPayload(payload []byte) []byte {
	out := append([]byte(nil), magic[:]...)
	out = binary.LittleEndian.AppendUint32(out, FormatVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = append(out, payload...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// payloadOf returns the payload of a model file.
func payloadOf(data []byte) []byte { return data[headerLen : len(data)-sha256.Size] }

func predictGPR(t *testing.T, f *File, xs *mat.Dense) []float64 {
	t.Helper()
	m, ok := f.Model.(*gp.GPR)
	if !ok {
		t.Fatalf("model is a %T, want *gp.GPR", f.Model)
	}
	pr, err := m.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(pr.FMean.RawMatrix().Data), pr.FVar.RawMatrix().Data...)
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	f := formatTestFile(t, 40)
	xs := mat.NewDense(25, 3, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 25 {
		for j := range 3 {
			xs.Set(i, j, 2*rng.NormFloat64())
		}
	}
	want := predictGPR(t, f, xs)
	path := filepath.Join(t.TempDir(), "model.gpz")
	if err := SaveFile(path, f); err != nil {
		t.Fatal(err)
	}
	// Saving again over an existing file works and leaves no temporary file behind.
	if err := SaveFile(path, f); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("directory holds %d entries after SaveFile, want 1", len(ents))
	}
	g, err := LoadFile(path, gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := predictGPR(t, g, xs); !slices.Equal(got, want) {
		t.Fatalf("predictions after loading differ:\n%v\nwant\n%v", got, want)
	}
	ps, qs := f.Model.Params(), g.Model.Params()
	if len(ps) != len(qs) {
		t.Fatalf("%d Params loaded, want %d", len(qs), len(ps))
	}
	for i, p := range ps {
		q := qs[i]
		if p.Name() != q.Name() || p.Trainable() != q.Trainable() || !slices.Equal(bitsOf(p.Raw()), bitsOf(q.Raw())) {
			t.Errorf("Param %d loaded as %v trainable=%v raw=%v, want %v trainable=%v raw=%v", i, q, q.Trainable(), q.Raw(), p, p.Trainable(), p.Raw())
		}
	}
	fx, fy := f.Model.(gp.DataHolder).TrainingData()
	gx, gy := g.Model.(gp.DataHolder).TrainingData()
	if !mat.Equal(fx, gx) || !mat.Equal(fy, gy) {
		t.Error("training data changed")
	}
	s, u := f.Standardizer, g.Standardizer
	if !slices.Equal(s.XMean, u.XMean) || !slices.Equal(s.XStd, u.XStd) || !slices.Equal(s.YMean, u.YMean) || !slices.Equal(s.YStd, u.YStd) {
		t.Errorf("standardizer %+v loaded as %+v", s, u)
	}
	for k, v := range f.Meta {
		if g.Meta[k] != v {
			t.Errorf("meta %q = %q, want %q", k, g.Meta[k], v)
		}
	}
	if !strings.HasPrefix(g.Meta["created_by"], "gpzoo ") {
		t.Errorf("created_by = %q", g.Meta["created_by"])
	}
	// The same file is written again: saving is deterministic.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if again := encodeFile(t, f); !bytes.Equal(again, data) {
		t.Error("two saves of one model differ")
	}
}

func bitsOf(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, a := range v {
		out[i] = math.Float64bits(a)
	}
	return out
}

func TestMinimalFile(t *testing.T) {
	t.Parallel()
	f, ok := gp.LookupKernel("white")
	if !ok {
		t.Skip("kernel white is not registered")
	}
	k, err := f.New(gp.KernelOptions{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Load(bytes.NewReader(encodeFile(t, &File{Model: m})), gp.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if x, y := g.Model.(gp.DataHolder).TrainingData(); g.Standardizer != nil || x != nil || y != nil {
		t.Errorf("loaded %+v, want no standardizer or data", g)
	}
}

func TestLoadStopsAtChecksum(t *testing.T) {
	t.Parallel()
	data := encodeFile(t, formatTestFile(t, 5))
	r := bytes.NewReader(append(slices.Clone(data), "next"...))
	if _, err := Load(r, gp.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "next" {
		t.Errorf("Load consumed past the checksum: %q left", rest)
	}
	path := filepath.Join(t.TempDir(), "m.gpz")
	if err := os.WriteFile(path, append(slices.Clone(data), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path, gp.BuildOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("LoadFile with a trailing byte: %v, want ErrCorrupt", err)
	}
}

func TestNotModelFile(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "x", "hello, world: this is not a model", "{\"spec\":{}}", "\x89PNG\r\n\x1a\n\x00\x00\x00\x00"} {
		if _, err := Load(strings.NewReader(in), gp.BuildOptions{}); !errors.Is(err, ErrNotModelFile) {
			t.Errorf("Load(%q) = %v, want ErrNotModelFile", in, err)
		}
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.gpz"), gp.BuildOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile of a missing file: %v, want os.ErrNotExist", err)
	}
}

func TestEveryTruncation(t *testing.T) {
	t.Parallel()
	data := encodeFile(t, formatTestFile(t, 3))
	for n := 1; n < len(data); n++ {
		_, err := Load(bytes.NewReader(data[:n]), gp.BuildOptions{})
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "expected") {
			t.Fatalf("Load of the first %d of %d bytes: %v, want ErrTruncated saying what was expected", n, len(data), err)
		}
	}
}

func TestEveryBitFlip(t *testing.T) {
	t.Parallel()
	data := encodeFile(t, formatTestFile(t, 2))
	bad := slices.Clone(data)
	for i := range data {
		for b := range 8 {
			bad[i] ^= 1 << b
			f, err := Load(bytes.NewReader(bad), gp.BuildOptions{})
			bad[i] ^= 1 << b
			if err == nil {
				t.Fatalf("bit %d of byte %d flipped: loaded %T, want an error", b, i, f.Model)
			}
			var ve *VersionError
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotModelFile) && !errors.As(err, &ve) {
				t.Fatalf("bit %d of byte %d flipped: untyped error %v", b, i, err)
			}
		}
	}
}

func TestVersions(t *testing.T) {
	t.Parallel()
	data := encodeFile(t, formatTestFile(t, 2))
	future := slices.Clone(data)
	binary.LittleEndian.PutUint32(future[len(magic):], 7)
	_, err := Load(bytes.NewReader(future), gp.BuildOptions{})
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got != 7 || ve.Max != FormatVersion {
		t.Fatalf("version 7: %v, want *VersionError{7, %d}", err, FormatVersion)
	}
	if want := "model file format version 7 is newer than this gpzoo reads (≤ 2): upgrade gpzoo"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A future version is reported even when the rest of the file is not readable by this version.
	if _, err := Load(bytes.NewReader(future[:len(magic)+4]), gp.BuildOptions{}); !errors.As(err, &ve) {
		t.Errorf("version 7 header only: %v, want *VersionError", err)
	}
	zero := slices.Clone(data)
	binary.LittleEndian.PutUint32(zero[len(magic):], 0)
	if _, err := Load(bytes.NewReader(zero), gp.BuildOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 0: %v, want ErrCorrupt", err)
	}
}

func TestHugeLengthDoesNotAllocate(t *testing.T) {
	data := encodeFile(t, formatTestFile(t, 2))
	for _, c := range []struct {
		length uint64
		want   error
	}{{1 << 60, ErrCorrupt}, {math.MaxUint64, ErrCorrupt}, {MaxPayload + 1, ErrCorrupt}, {MaxPayload, ErrTruncated}, {1 << 33, ErrTruncated}} {
		bad := slices.Clone(data)
		binary.LittleEndian.PutUint64(bad[len(magic)+4:], c.length)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Load(bytes.NewReader(bad), gp.BuildOptions{})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, c.want) {
			t.Errorf("length %d: %v, want %v", c.length, err, c.want)
		}
		// The file is a few KiB: reading it must not allocate anywhere near the length field.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
			t.Errorf("length %d: Load allocated %d bytes", c.length, grew)
		}
	}
}

// editPayload decodes the payload of data as generic JSON, applies edit and re-wraps it with a valid checksum.
func editPayload(t *testing.T, data []byte, edit func(p map[string]any)) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(payloadOf(data), &p); err != nil {
		t.Fatal(err)
	}
	edit(p)
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return rewrapPayload(js)
}

func TestCorruptPayloads(t *testing.T) {
	t.Parallel()
	data := encodeFile(t, formatTestFile(t, 4))
	param := func(p map[string]any, i int) map[string]any { return p["params"].([]any)[i].(map[string]any) }
	nan := bits{math.NaN()}
	nanJSON, _ := json.Marshal(nan)
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"checksum", func() []byte { b := slices.Clone(data); b[len(b)-1] ^= 1; return b }(), "checksum"},
		{"not JSON", rewrapPayload([]byte("{\"spec\":")), "payload"},
		{"two objects", rewrapPayload(append(slices.Clone(payloadOf(data)), " {}"...)), "after the JSON"},
		{"unknown field", editPayload(t, data, func(p map[string]any) { p["extra"] = 1 }), "unknown field"},
		{"unknown kind", editPayload(t, data, func(p map[string]any) { p["spec"].(map[string]any)["kind"] = "model/nope" }), "unknown component kind"},
		{"not a model", editPayload(t, data, func(p map[string]any) {
			p["spec"] = map[string]any{"kind": gp.KindZeroMean, "config": map[string]any{"dim": 1}}
		}), "not a model"},
		{"param name", editPayload(t, data, func(p map[string]any) { param(p, 1)["name"] = "se.lengthscale" }), `"se.lengthscale"`},
		{"param shape", editPayload(t, data, func(p map[string]any) { param(p, 1)["shape"] = []int{1, 3} }), `Param "se.lengthscales" has shape [1 3]`},
		{"param transform", editPayload(t, data, func(p map[string]any) { param(p, 0)["transform"] = "Identity" }), `Param "se.variance" has transform Identity`},
		{"param size", editPayload(t, data, func(p map[string]any) { param(p, 0)["raw"] = "AAAAAAAAAAAAAAAAAAAAAA==" }), `Param "se.variance" has 2 values`},
		{"param bits", editPayload(t, data, func(p map[string]any) { param(p, 0)["raw"] = "AAA=" }), "multiple of 8"},
		{"param NaN", editPayload(t, data, func(p map[string]any) {
			param(p, 2)["raw"] = json.RawMessage(nanJSON)
		}), `"per.variance"`},
		{"param missing", editPayload(t, data, func(p map[string]any) { p["params"] = p["params"].([]any)[1:] }), "Params stored, the model has"},
		{"standardizer width", editPayload(t, data, func(p map[string]any) {
			s := p["standardizer"].(map[string]any)
			s["x_mean"], s["x_std"] = "AAAAAAAAAAA=", "AAAAAAAA8D8="
		}), "standardizer has 1 input columns, the model takes 3"},
		{"standardizer std", editPayload(t, data, func(p map[string]any) { p["standardizer"].(map[string]any)["y_std"] = "AAAAAAAAAAA=" }), "y_std column 0 is 0"},
		{"train rows", editPayload(t, data, func(p map[string]any) { p["train_x"].(map[string]any)["rows"] = 5 }), "training inputs are 5×3"},
		{"train huge", editPayload(t, data, func(p map[string]any) {
			p["train_x"].(map[string]any)["rows"] = 1 << 40
			p["train_x"].(map[string]any)["cols"] = 1 << 40
		}), "training inputs are"},
		{"train cols", editPayload(t, data, func(p map[string]any) {
			x := p["train_x"].(map[string]any)
			x["rows"], x["cols"] = 3, 4
		}), "training inputs have 4 columns"},
		{"train y missing", editPayload(t, data, func(p map[string]any) { delete(p, "train_y") }), "both present"},
		{"train y rows", editPayload(t, data, func(p map[string]any) {
			y := p["train_y"].(map[string]any)
			y["rows"], y["cols"] = 2, 2
		}), "4 training input rows, 2 target rows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Load(bytes.NewReader(c.file), gp.BuildOptions{})
			if err == nil {
				t.Fatalf("loaded %T, want ErrCorrupt", f.Model)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want ErrCorrupt containing %q", err, c.want)
			}
		})
	}
	// The file itself still loads: every case above is the edit's doing.
	if _, err := Load(bytes.NewReader(editPayload(t, data, func(map[string]any) {})), gp.BuildOptions{}); err != nil {
		t.Fatalf("unedited payload: %v", err)
	}
}

func TestSaveErrors(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Save(&buf, nil); err == nil {
		t.Error("Save(nil): no error")
	}
	if err := Save(&buf, &File{}); err == nil {
		t.Error("Save without a model: no error")
	}
	f := formatTestFile(t, 3)
	f.Standardizer.YMean, f.Standardizer.YStd = []float64{0, 0}, []float64{1, 1}
	if err := Save(&buf, f); err == nil || !strings.Contains(err.Error(), "training data are 3 and 1 columns wide, the standardizer 3 and 2") {
		t.Errorf("Save with training data wider than the standardizer: %v", err)
	}
	// The training data's own checks are the model's (gp.DataHolder): nothing inconsistent reaches Save.
	f = formatTestFile(t, 3)
	x, _ := f.Model.(gp.DataHolder).TrainingData()
	if err := f.Model.(gp.DataHolder).SetTrainingData(x, mat.NewDense(2, 1, nil)); err == nil {
		t.Error("mismatched rows: no error")
	}
	bad := mat.DenseCopyOf(x)
	bad.Set(1, 2, math.Inf(1))
	if err := f.Model.(gp.DataHolder).SetTrainingData(bad, mat.NewDense(3, 1, nil)); err == nil || !strings.Contains(err.Error(), "row 1, column 2") {
		t.Errorf("an infinite input: %v", err)
	}
	f = formatTestFile(t, 3)
	f.Standardizer.XStd = f.Standardizer.XStd[:2]
	if err := Save(&buf, f); err == nil || !strings.Contains(err.Error(), "standardizer") {
		t.Errorf("Save with a short standardizer: %v", err)
	}
	f = formatTestFile(t, 3)
	f.Model.Params()[1].Raw()[0] = math.NaN()
	if err := Save(&buf, f); err == nil || !strings.Contains(err.Error(), `"se.lengthscales" entry 0 is NaN`) {
		t.Errorf("Save with a NaN Param: %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("failed Saves wrote %d bytes", buf.Len())
	}
	if err := SaveFile(filepath.Join(t.TempDir(), "no", "such", "dir.gpz"), formatTestFile(t, 3)); err == nil {
		t.Error("SaveFile into a missing directory: no error")
	}
}
