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

// sampleColor is the colour of one sampled function; it is translucent so overlapping samples show density.
var sampleColor = color.NRGBA{R: 31, G: 119, B: 180, A: 110}

// maxPanelCols is the number of panels per row of LayerSamples.
const maxPanelCols = 3

// LayerSamples draws, for a deep GP on 1-D inputs, one panel per layer with the S sampled functions of that
// layer's output plotted against the input x, and writes the tiled figure to path (.png or .svg).
// layers[l][s][i] is sample s of layer l's output at xs[i]; xs need not be sorted. Panels are laid out left to
// right, at most 3 per row, titled "<title>: layer l" (l from 1). The default size is DefaultPanelWidth inches
// per column by DefaultPanelHeight inches per row, each capped at MaxSize.
//
// Shapes: len(xs) ≥ 1; len(layers) ≥ 1; len(layers[l]) ≥ 1; len(layers[l][s]) = len(xs).
//
// Errors: *FormatError; *ShapeError naming the slice ("layers[1][3]"); *NonFiniteError naming xs and its row, or
// "layers[l]" with the sample as row and the x index as column; *RangeError for a bad WithSize; or the wrapped
// error from writing the file.
func LayerSamples(path, title string, xs []float64, layers [][][]float64, opts ...Option) error {
	const fn = "LayerSamples"
	f, err := fileFormat(fn, path)
	if err != nil {
		return err
	}
	if err := checkAtLeast(fn, "layers", len(layers), 1); err != nil {
		return err
	}
	cols := min(len(layers), maxPanelCols)
	rows := (len(layers) + cols - 1) / cols
	cfg, err := newConfig(fn, math.Min(float64(cols)*DefaultPanelWidth, MaxSize),
		math.Min(float64(rows)*DefaultPanelHeight, MaxSize), opts)
	if err != nil {
		return err
	}
	if err := checkAtLeast(fn, "xs", len(xs), 1); err != nil {
		return err
	}
	if err := checkFinite(fn, "xs", xs); err != nil {
		return err
	}
	for l, layer := range layers {
		if err := checkAtLeast(fn, fmt.Sprintf("layers[%d]", l), len(layer), 1); err != nil {
			return err
		}
		for s, sample := range layer {
			if err := checkLen(fn, fmt.Sprintf("layers[%d][%d]", l, s), len(sample), len(xs)); err != nil {
				return err
			}
			for i, v := range sample {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return &NonFiniteError{Func: fn, Name: fmt.Sprintf("layers[%d]", l), Row: s, Col: i, Value: v}
				}
			}
		}
	}

	idx := order(xs)
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for l, layer := range layers {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("layer %d", l+1)
		if title != "" {
			p.Title.Text = fmt.Sprintf("%s: layer %d", title, l+1)
		}
		p.X.Label.Text = "x"
		p.Y.Label.Text = fmt.Sprintf("layer %d output", l+1)
		p.Add(plotter.NewGrid())
		for s, sample := range layer {
			line, err := plotter.NewLine(xysOrdered(xs, sample, idx))
			if err != nil {
				return fmt.Errorf("plots: %s: layers[%d][%d]: %w", fn, l, s, err)
			}
			line.Color = sampleColor
			line.Width = vg.Points(1)
			p.Add(line)
		}
		grid[l/cols][l%cols] = p
	}

	return save(fn, path, f, cfg, func(dc draw.Canvas) {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: figurePad, PadY: figurePad,
			PadTop: figurePad, PadBottom: figurePad, PadLeft: figurePad, PadRight: figurePad}
		cs := plot.Align(grid, tiles, dc)
		for r := range grid {
			for c, p := range grid[r] {
				if p != nil {
					p.Draw(cs[r][c])
				}
			}
		}
	})
}
