package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours of the reliability diagram.
var (
	diagonalColor = color.Gray{Y: 128}
	freqColor     = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	countColor    = color.RGBA{R: 160, G: 200, B: 235, A: 255}
)

// figurePad is the padding around and between the panels of tiled figures.
const figurePad = 2 * vg.Millimeter

// legendInset moves a legend drawn inside the data area away from its corner.
const legendInset = 2 * vg.Millimeter

// Reliability draws the reliability (calibration) diagram of the predicted probabilities prob and writes it to
// path (.png or .svg), and returns their expected calibration error (see ECE for the binning, the meaning of
// correct and the formula). The upper panel plots, for every non-empty bin, the empirical frequency of the event
// against the bin's mean predicted probability, with the diagonal of perfect calibration; the lower panel is
// the histogram of bin counts. The title is followed by the ECE. The default size is
// DefaultWidth×DefaultReliabilityHeight inches.
//
// Shapes: len(correct) = len(prob) ≥ 1; 1 ≤ bins ≤ MaxBins.
//
// Errors: as ECE, plus *FormatError, *RangeError for a bad WithSize and the wrapped error from writing the file.
// The ECE is returned whenever the inputs are valid, even when writing the file fails; otherwise it is 0.
func Reliability(path, title string, prob []float64, correct []bool, bins int, opts ...Option) (ece float64, err error) {
	const fn = "Reliability"
	f, err := fileFormat(fn, path)
	if err != nil {
		return 0, err
	}
	cfg, err := newConfig(fn, DefaultWidth, DefaultReliabilityHeight, opts)
	if err != nil {
		return 0, err
	}
	bs, ece, err := calibrate(fn, prob, correct, bins)
	if err != nil {
		return 0, err
	}

	top := plot.New()
	if title != "" {
		top.Title.Text = fmt.Sprintf("%s (ECE %.4f)", title, ece)
	} else {
		top.Title.Text = fmt.Sprintf("ECE %.4f", ece)
	}
	top.X.Label.Text = "mean predicted probability"
	top.Y.Label.Text = "empirical frequency"
	top.X.Min, top.X.Max, top.Y.Min, top.Y.Max = 0, 1, 0, 1
	top.Add(plotter.NewGrid())
	top.Legend.Top, top.Legend.Left = true, true
	top.Legend.XOffs, top.Legend.YOffs = legendInset, -legendInset

	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return ece, fmt.Errorf("plots: %s: diagonal: %w", fn, err)
	}
	diag.Color = diagonalColor
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	top.Add(diag)
	top.Legend.Add("perfect calibration", diag)

	var pts plotter.XYs
	for _, b := range bs {
		if b.n > 0 {
			pts = append(pts, plotter.XY{X: b.confidence(), Y: b.frequency()})
		}
	}
	line, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return ece, fmt.Errorf("plots: %s: bins: %w", fn, err)
	}
	line.Color = freqColor
	line.Width = vg.Points(1.5)
	sc.GlyphStyle = draw.GlyphStyle{Color: freqColor, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	top.Add(line, sc)
	top.Legend.Add("model", line, sc)

	bottom := plot.New()
	bottom.X.Label.Text = "predicted probability"
	bottom.Y.Label.Text = "count"
	bottom.X.Min, bottom.X.Max = 0, 1
	hist := &plotter.Histogram{
		Bins:      make([]plotter.HistogramBin, len(bs)),
		Width:     1 / float64(len(bs)),
		FillColor: countColor,
		LineStyle: plotter.DefaultLineStyle,
	}
	for i, b := range bs {
		hist.Bins[i] = plotter.HistogramBin{Min: b.lo, Max: b.hi, Weight: float64(b.n)}
	}
	bottom.Add(hist)

	return ece, save(fn, path, f, cfg, func(dc draw.Canvas) {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: figurePad, PadY: figurePad,
			PadTop: figurePad, PadBottom: figurePad, PadLeft: figurePad, PadRight: figurePad}
		plots := [][]*plot.Plot{{top}, {bottom}}
		cs := plot.Align(plots, tiles, dc)
		top.Draw(cs[0][0])
		bottom.Draw(cs[1][0])
	})
}
