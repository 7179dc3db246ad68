package plots

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toyPredictive returns a seeded 1-D predictive distribution: unsorted test inputs, a sine mean, a growing std,
// noisy training data and a few inducing inputs.
func toyPredictive() (xs, mean, std, dataX, dataY, inducing []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		x := -3 + 6*float64((i*17)%50)/49 // a permutation of a grid: xs is deliberately unsorted
		xs = append(xs, x)
		mean = append(mean, math.Sin(x))
		std = append(std, 0.1+0.05*math.Abs(x))
	}
	for range 20 {
		x := -3 + 6*rng.Float64()
		dataX = append(dataX, x)
		dataY = append(dataY, math.Sin(x)+0.1*rng.NormFloat64())
	}
	inducing = []float64{-2.5, -1, 0, 1, 2.5}
	return
}

// toyLayers returns seeded samples layers[L][S][len(xs)] of a deep GP toy.
func toyLayers(nLayers, nSamples int) (xs []float64, layers [][][]float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 40 {
		xs = append(xs, -2+4*float64(i)/39)
	}
	for l := range nLayers {
		var layer [][]float64
		for range nSamples {
			a, b := rng.NormFloat64(), rng.NormFloat64()
			f := make([]float64, len(xs))
			for i, x := range xs {
				f[i] = a*math.Sin(float64(l+1)*x) + b*x
			}
			layer = append(layer, f)
		}
		layers = append(layers, layer)
	}
	return xs, layers
}

// decodePNG reads path as a PNG and fails the test if it is not one.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	return img
}

// checkPNGSize fails unless the PNG at path is round(w·DPI)×round(h·DPI) pixels.
func checkPNGSize(t *testing.T, path string, w, h float64) image.Image {
	t.Helper()
	img := decodePNG(t, path)
	got := img.Bounds().Size()
	want := image.Pt(int(math.Round(w*DPI)), int(math.Round(h*DPI)))
	if got != want {
		t.Errorf("%s: size %v, want %v", filepath.Base(path), got, want)
	}
	return img
}

// checkSVG fails unless the file at path starts like an SVG document.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "<?xml") && !strings.HasPrefix(s, "<svg") {
		n := min(len(s), 40)
		t.Errorf("%s does not start like an SVG: %q", filepath.Base(path), s[:n])
	}
	if !strings.Contains(s, "</svg>") {
		t.Errorf("%s has no closing </svg>", filepath.Base(path))
	}
}

// pixelsNear counts the pixels of img within tol (per 8-bit channel) of c.
func pixelsNear(img image.Image, c color.Color, tol int) int {
	r0, g0, b0, _ := c.RGBA()
	near := func(a, b uint32) bool { return math.Abs(float64(a>>8)-float64(b>>8)) <= float64(tol) }
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(r, r0) && near(g, g0) && near(b, b0) {
				n++
			}
		}
	}
	return n
}

func TestCurvesPNGAndSVG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	series := []Series{
		{Name: "SVGP", X: []float64{0, 10, 20, 30}, Y: []float64{-500, -200, -120, -110}},
		{Name: "SGPR", X: []float64{0, 10, 20, 30}, Y: []float64{-450, -150, -105, -100}},
		{Name: "", X: []float64{15}, Y: []float64{-300}}, // one point, no legend entry
	}
	pngPath := filepath.Join(dir, "curves.png")
	if err := Curves(pngPath, "ELBO", "step", "ELBO", series); err != nil {
		t.Fatal(err)
	}
	img := checkPNGSize(t, pngPath, DefaultWidth, DefaultHeight)
	if pixelsNear(img, color.White, 0) == img.Bounds().Dx()*img.Bounds().Dy() {
		t.Error("PNG is blank")
	}

	small := filepath.Join(dir, "small.PNG") // upper-case extension is accepted
	if err := Curves(small, "ELBO", "step", "ELBO", series, WithSize(3, 2.5)); err != nil {
		t.Fatal(err)
	}
	checkPNGSize(t, small, 3, 2.5)

	svgPath := filepath.Join(dir, "curves.svg")
	if err := Curves(svgPath, "ELBO", "step", "ELBO", series); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svgPath)
}

func TestPredictive1D(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	xs, mean, std, dataX, dataY, inducing := toyPredictive()

	with := filepath.Join(dir, "pred.png")
	if err := Predictive1D(with, "toy", xs, mean, std, dataX, dataY, inducing); err != nil {
		t.Fatal(err)
	}
	img := checkPNGSize(t, with, DefaultWidth, DefaultHeight)
	if n := pixelsNear(img, bandColor, 2); n < 1000 {
		t.Errorf("only %d pixels of the ±2σ band colour; the band was not filled", n)
	}
	withRed := pixelsNear(img, inducingColor, 40)

	without := filepath.Join(dir, "pred-noz.png")
	if err := Predictive1D(without, "toy", xs, mean, std, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	noRed := pixelsNear(checkPNGSize(t, without, DefaultWidth, DefaultHeight), inducingColor, 40)
	if withRed == 0 || noRed != 0 {
		t.Errorf("inducing-tick pixels: %d with inducing inputs (want > 0), %d without (want 0)", withRed, noRed)
	}

	svgPath := filepath.Join(dir, "pred.svg")
	if err := Predictive1D(svgPath, "toy", xs, mean, std, dataX, dataY, inducing); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svgPath)
}

func TestECEHandComputed(t *testing.T) {
	t.Parallel()
	// Five bins of width 0.2. Bin [0, 0.2): {0.1 ✗, 0.15 ✓}, conf 0.125, freq 0.5, gap 0.375.
	// Bin [0.4, 0.6): {0.5 ✓, 0.55 ✗}, conf 0.525, freq 0.5, gap 0.025.
	// Bin [0.8, 1]: {0.9 ✓, 0.95 ✓, 0.85 ✓, 1 ✗} (p = 1 goes to the last bin), conf 0.925, freq 0.75, gap 0.175.
	// ECE = (2·0.375 + 2·0.025 + 4·0.175) / 8 = 1.5 / 8 = 0.1875.
	prob := []float64{0.1, 0.15, 0.5, 0.55, 0.9, 0.95, 0.85, 1}
	correct := []bool{false, true, true, false, true, true, true, false}
	const want = 0.1875
	got, err := ECE(prob, correct, 5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("ECE = %v, want %v", got, want)
	}

	// With one bin the ECE is |accuracy − mean confidence| = |5/8 − 5/8|: here exactly 0 (Σprob = 5).
	one, err := ECE(prob, correct, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(one) > 1e-12 {
		t.Errorf("ECE with one bin = %v, want 0", one)
	}

	// Reliability returns the same ECE and writes both formats.
	dir := t.TempDir()
	for _, name := range []string{"rel.png", "rel.svg"} {
		path := filepath.Join(dir, name)
		ece, err := Reliability(path, "toy classifier", prob, correct, 5)
		if err != nil {
			t.Fatal(err)
		}
		if ece != got {
			t.Errorf("%s: Reliability ECE = %v, ECE() = %v", name, ece, got)
		}
		if strings.HasSuffix(name, ".png") {
			checkPNGSize(t, path, DefaultWidth, DefaultReliabilityHeight)
		} else {
			checkSVG(t, path)
		}
	}
}

func TestECEOverconfidentIsWorse(t *testing.T) {
	t.Parallel()
	// Seeded events with true probability p; a calibrated forecaster says p, an overconfident one pushes p to
	// the nearer of 0 and 1 by half the distance. With 20000 draws the calibrated ECE is sampling noise (≈0.01 at
	// 10 bins), while the overconfident one is off by about a quarter on average.
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 20000
	cal, over := make([]float64, n), make([]float64, n)
	hit := make([]bool, n)
	for i := range n {
		p := rng.Float64()
		hit[i] = rng.Float64() < p
		cal[i] = p
		if p < 0.5 {
			over[i] = p / 2
		} else {
			over[i] = p + (1-p)/2
		}
	}
	eCal, err := ECE(cal, hit, 10)
	if err != nil {
		t.Fatal(err)
	}
	eOver, err := ECE(over, hit, 10)
	if err != nil {
		t.Fatal(err)
	}
	if eCal > 0.03 || eOver < 0.1 {
		t.Errorf("ECE calibrated = %.4f (want ≤ 0.03), overconfident = %.4f (want ≥ 0.1)", eCal, eOver)
	}
}

func TestLayerSamples(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		layers     int
		wIn, hIn   float64 // expected default size in inches
		extensions []string
	}{
		{layers: 2, wIn: 2 * DefaultPanelWidth, hIn: DefaultPanelHeight, extensions: []string{"png", "svg"}},
		{layers: 4, wIn: 3 * DefaultPanelWidth, hIn: 2 * DefaultPanelHeight, extensions: []string{"png"}},
	} {
		xs, layers := toyLayers(tc.layers, 5)
		for _, ext := range tc.extensions {
			path := filepath.Join(dir, "layers"+string(rune('0'+tc.layers))+"."+ext)
			if err := LayerSamples(path, "DGP", xs, layers); err != nil {
				t.Fatal(err)
			}
			if ext == "png" {
				checkPNGSize(t, path, tc.wIn, tc.hIn)
			} else {
				checkSVG(t, path)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	xs, mean, std, dataX, dataY, inducing := toyPredictive()
	var files [2][]byte
	for k := range files {
		path := filepath.Join(dir, "p"+string(rune('0'+k))+".png")
		if err := Predictive1D(path, "toy", xs, mean, std, dataX, dataY, inducing); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[k] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two renderings of the same input differ")
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png := filepath.Join(dir, "bad.png")
	xs, mean, std, dataX, dataY, inducing := toyPredictive()
	lxs, layers := toyLayers(2, 3)
	ok := []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}
	nan, inf := math.NaN(), math.Inf(1)
	withAt := func(v []float64, i int, x float64) []float64 {
		c := append([]float64(nil), v...)
		c[i] = x
		return c
	}
	badLayers := [][][]float64{layers[0], {layers[1][0], withAt(layers[1][1], 7, nan), layers[1][2]}}
	shortLayers := [][][]float64{layers[0], {layers[1][0], layers[1][1][:3]}}

	for _, tc := range []struct {
		name   string
		call   func() error
		target error
		check  func(t *testing.T, err error) // optional: inspect the typed error
	}{
		{"format pdf", func() error { return Curves(filepath.Join(dir, "x.pdf"), "", "", "", ok) }, ErrFormat,
			func(t *testing.T, err error) {
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Ext != ".pdf" {
					t.Errorf("got %#v", err)
				}
			}},
		{"format none", func() error { return Predictive1D(filepath.Join(dir, "x"), "", xs, mean, std, nil, nil, nil) }, ErrFormat, nil},
		{"no series", func() error { return Curves(png, "", "", "", nil) }, ErrShape, nil},
		{"series lengths", func() error {
			return Curves(png, "", "", "", []Series{ok[0], {Name: "b", X: []float64{0, 1, 2}, Y: []float64{1, 2}}})
		}, ErrShape, func(t *testing.T, err error) {
			var se *ShapeError
			if !errors.As(err, &se) || se.Want != 3 || se.Got != 2 || !strings.Contains(se.Name, `series[1] "b"`) {
				t.Errorf("got %v", err)
			}
		}},
		{"series empty", func() error { return Curves(png, "", "", "", []Series{{Name: "e"}}) }, ErrShape, nil},
		{"series NaN", func() error {
			return Curves(png, "", "", "", []Series{ok[0], {X: []float64{0, 1, 2}, Y: []float64{1, nan, 3}}})
		}, ErrNonFinite, func(t *testing.T, err error) {
			var ne *NonFiniteError
			if !errors.As(err, &ne) || ne.Row != 1 || ne.Col != -1 || !strings.Contains(ne.Name, "series[1]") {
				t.Errorf("got %v", err)
			}
		}},
		{"mean length", func() error { return Predictive1D(png, "", xs, mean[:3], std, nil, nil, nil) }, ErrShape, nil},
		{"data length", func() error { return Predictive1D(png, "", xs, mean, std, dataX, dataY[:2], nil) }, ErrShape, nil},
		{"empty xs", func() error { return Predictive1D(png, "", nil, nil, nil, nil, nil, nil) }, ErrShape, nil},
		{"std Inf", func() error { return Predictive1D(png, "", xs, mean, withAt(std, 4, inf), nil, nil, nil) }, ErrNonFinite,
			func(t *testing.T, err error) {
				var ne *NonFiniteError
				if !errors.As(err, &ne) || ne.Name != "std" || ne.Row != 4 {
					t.Errorf("got %v", err)
				}
			}},
		{"inducing NaN", func() error { return Predictive1D(png, "", xs, mean, std, dataX, dataY, withAt(inducing, 2, nan)) }, ErrNonFinite, nil},
		{"std negative", func() error { return Predictive1D(png, "", xs, mean, withAt(std, 9, -0.5), nil, nil, nil) }, ErrRange,
			func(t *testing.T, err error) {
				var re *RangeError
				if !errors.As(err, &re) || re.Name != "std" || re.Index != 9 || re.Value != -0.5 {
					t.Errorf("got %v", err)
				}
			}},
		{"bins zero", func() error { _, err := Reliability(png, "", []float64{0.5}, []bool{true}, 0); return err }, ErrRange, nil},
		{"bins huge", func() error { _, err := ECE([]float64{0.5}, []bool{true}, MaxBins+1); return err }, ErrRange, nil},
		{"prob above 1", func() error { _, err := Reliability(png, "", []float64{0.5, 1.2}, []bool{true, false}, 10); return err }, ErrRange,
			func(t *testing.T, err error) {
				var re *RangeError
				if !errors.As(err, &re) || re.Name != "prob" || re.Index != 1 {
					t.Errorf("got %v", err)
				}
			}},
		{"prob NaN", func() error { _, err := ECE([]float64{nan}, []bool{true}, 10); return err }, ErrNonFinite, nil},
		{"prob empty", func() error { _, err := ECE(nil, nil, 10); return err }, ErrShape, nil},
		{"correct length", func() error { _, err := ECE([]float64{0.2, 0.3}, []bool{true}, 10); return err }, ErrShape, nil},
		{"no layers", func() error { return LayerSamples(png, "", lxs, nil) }, ErrShape, nil},
		{"layer no samples", func() error { return LayerSamples(png, "", lxs, [][][]float64{layers[0], {}}) }, ErrShape, nil},
		{"sample length", func() error { return LayerSamples(png, "", lxs, shortLayers) }, ErrShape,
			func(t *testing.T, err error) {
				var se *ShapeError
				if !errors.As(err, &se) || se.Name != "layers[1][1]" || se.Got != 3 || se.Want != len(lxs) {
					t.Errorf("got %v", err)
				}
			}},
		{"sample NaN", func() error { return LayerSamples(png, "", lxs, badLayers) }, ErrNonFinite,
			func(t *testing.T, err error) {
				var ne *NonFiniteError
				if !errors.As(err, &ne) || ne.Name != "layers[1]" || ne.Row != 1 || ne.Col != 7 {
					t.Errorf("got %v", err)
				}
			}},
		{"size zero width", func() error { return Curves(png, "", "", "", ok, WithSize(0, 3)) }, ErrRange, nil},
		{"size too big", func() error { return Curves(png, "", "", "", ok, WithSize(3, MaxSize+1)) }, ErrRange, nil},
		{"size NaN", func() error { return Curves(png, "", "", "", ok, WithSize(nan, 3)) }, ErrNonFinite, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.target) {
				t.Fatalf("error %v, want errors.Is %v", err, tc.target)
			}
			if !strings.HasPrefix(err.Error(), "plots: ") {
				t.Errorf("message %q lacks the package prefix", err)
			}
			if tc.check != nil {
				tc.check(t, err)
			}
		})
	}
	if _, err := os.Stat(png); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rejected calls left a file behind (stat: %v)", err)
	}
}

func TestWriteErrorKeepsECE(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing-dir", "rel.png")
	ece, err := Reliability(path, "", []float64{0.9, 0.9}, []bool{true, false}, 2)
	if err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap the file-system error", err)
	}
	// One bin holds both points: conf 0.9, freq 0.5, so ECE = 0.4.
	if math.Abs(ece-0.4) > 1e-12 {
		t.Errorf("ECE = %v, want 0.4", ece)
	}
}
