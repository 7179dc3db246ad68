package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours of the predictive figure.
var (
	bandColor     = color.RGBA{R: 160, G: 200, B: 235, A: 255}
	meanColor     = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	dataColor     = color.Black
	inducingColor = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

// inducingMargin is the gap, as a fraction of the data's y span, between the lowest drawn value and the row of
// inducing-input ticks below it.
const inducingMargin = 0.06

// Predictive1D plots a 1-D predictive distribution and writes it to path (.png or .svg): the mean at the test
// inputs xs as a line, the band mean ± 2·std shaded, the training points (dataX[i], dataY[i]) as dots, and the
// inducing inputs as ticks in a row below the curves. xs need not be sorted (the curve is drawn in x order).
// std is the predictive standard deviation (not the variance), of the latent f or of y, as the caller chooses.
// dataX/dataY and inducing may be empty. The default size is DefaultWidth×DefaultHeight inches.
//
// Shapes: len(mean) = len(std) = len(xs) ≥ 1, len(dataY) = len(dataX).
//
// Errors: *FormatError; *ShapeError for lengths that disagree or empty xs; *NonFiniteError naming the input and
// row; *RangeError for a negative std or a bad WithSize; or the wrapped error from writing the file.
func Predictive1D(path, title string, xs, mean, std, dataX, dataY, inducing []float64, opts ...Option) error {
	const fn = "Predictive1D"
	f, err := fileFormat(fn, path)
	if err != nil {
		return err
	}
	cfg, err := newConfig(fn, DefaultWidth, DefaultHeight, opts)
	if err != nil {
		return err
	}
	if err := checkAtLeast(fn, "xs", len(xs), 1); err != nil {
		return err
	}
	if err := checkLen(fn, "mean", len(mean), len(xs)); err != nil {
		return err
	}
	if err := checkLen(fn, "std", len(std), len(xs)); err != nil {
		return err
	}
	if err := checkLen(fn, "dataY", len(dataY), len(dataX)); err != nil {
		return err
	}
	for _, in := range []struct {
		name string
		v    []float64
	}{{"xs", xs}, {"mean", mean}, {"std", std}, {"dataX", dataX}, {"dataY", dataY}, {"inducing", inducing}} {
		if err := checkFinite(fn, in.name, in.v); err != nil {
			return err
		}
	}
	for i, s := range std {
		if s < 0 {
			return &RangeError{Func: fn, Name: "std", Index: i, Value: s, Min: 0, Max: math.Inf(1)}
		}
	}

	idx := order(xs)
	n := len(xs)
	band := make(plotter.XYs, 2*n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, i := range idx {
		up, down := mean[i]+2*std[i], mean[i]-2*std[i]
		band[k] = plotter.XY{X: xs[i], Y: up}
		band[2*n-1-k] = plotter.XY{X: xs[i], Y: down}
		lo, hi = math.Min(lo, down), math.Max(hi, up)
	}
	for _, y := range dataY {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "x"
	p.Y.Label.Text = "y"
	leg := newSideLegend()

	poly, err := plotter.NewPolygon(band)
	if err != nil {
		return fmt.Errorf("plots: %s: band: %w", fn, err)
	}
	poly.Color = bandColor
	poly.LineStyle.Width = 0
	p.Add(poly)
	leg.Add("mean ± 2σ", poly)

	line, err := plotter.NewLine(xysOrdered(xs, mean, idx))
	if err != nil {
		return fmt.Errorf("plots: %s: mean: %w", fn, err)
	}
	line.Color = meanColor
	line.Width = vg.Points(1.5)
	p.Add(line)
	leg.Add("mean", line)

	if len(dataX) > 0 {
		sc, err := plotter.NewScatter(xysOf(dataX, dataY))
		if err != nil {
			return fmt.Errorf("plots: %s: data: %w", fn, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: dataColor, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		leg.Add("data", sc)
	}

	if len(inducing) > 0 {
		span := hi - lo
		if span == 0 {
			span = 1
		}
		row := lo - inducingMargin*span
		zs := make(plotter.XYs, len(inducing))
		for i, z := range inducing {
			zs[i] = plotter.XY{X: z, Y: row}
		}
		sc, err := plotter.NewScatter(zs)
		if err != nil {
			return fmt.Errorf("plots: %s: inducing: %w", fn, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: inducingColor, Radius: vg.Points(4), Shape: tickGlyph{}}
		p.Add(sc)
		leg.Add("inducing inputs", sc)
	}
	return save(fn, path, f, cfg, func(dc draw.Canvas) { leg.draw(p, dc) })
}

// tickGlyph draws a short vertical line centred on the point, Radius above and below it.
type tickGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (tickGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	var path vg.Path
	path.Move(vg.Point{X: pt.X, Y: pt.Y - sty.Radius})
	path.Line(vg.Point{X: pt.X, Y: pt.Y + sty.Radius})
	c.Stroke(path)
}
