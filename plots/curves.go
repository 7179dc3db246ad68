package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named curve: Y[i] against X[i], drawn in the given order (X need not be sorted). X and Y must have
// the same, non-zero length and finite values. An empty Name leaves the series out of the legend.
type Series struct {
	Name string    // legend entry, e.g. "SVGP ELBO"
	X    []float64 // e.g. the training step or the wall-clock seconds
	Y    []float64 // e.g. the ELBO or a test metric
}

// Curves plots one or more series as lines on one pair of axes (for example the ELBO per step for several
// methods, or the test RMSE per wall-clock second) with the given title and axis labels, and writes the figure
// to path (.png or .svg). A series with a single point is drawn as a marker. The legend of the named series is
// drawn to the right of the axes (inside them if it would take over 40% of the width). The default size is
// DefaultWidth×DefaultHeight inches.
//
// Errors: *FormatError for another extension; *ShapeError when series is empty, or a series has no points or
// len(X) != len(Y); *NonFiniteError naming the series and its row; *RangeError for a bad WithSize; or the
// wrapped error from writing the file.
func Curves(path, title, xLabel, yLabel string, series []Series, opts ...Option) error {
	const fn = "Curves"
	f, err := fileFormat(fn, path)
	if err != nil {
		return err
	}
	cfg, err := newConfig(fn, DefaultWidth, DefaultHeight, opts)
	if err != nil {
		return err
	}
	if err := checkAtLeast(fn, "series", len(series), 1); err != nil {
		return err
	}
	for i, s := range series {
		name := fmt.Sprintf("series[%d] %q", i, s.Name)
		if err := checkAtLeast(fn, name+".X", len(s.X), 1); err != nil {
			return err
		}
		if err := checkLen(fn, name+".Y", len(s.Y), len(s.X)); err != nil {
			return err
		}
		if err := checkFinite(fn, name+".X", s.X); err != nil {
			return err
		}
		if err := checkFinite(fn, name+".Y", s.Y); err != nil {
			return err
		}
	}

	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	leg := newSideLegend()
	for i, s := range series {
		pts := xysOf(s.X, s.Y)
		var thumb plot.Thumbnailer
		if len(pts) == 1 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return fmt.Errorf("plots: %s: series[%d]: %w", fn, i, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plotutil.Color(i), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			thumb = sc
		} else {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return fmt.Errorf("plots: %s: series[%d]: %w", fn, i, err)
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
			p.Add(l)
			thumb = l
		}
		if s.Name != "" {
			leg.Add(s.Name, thumb)
		}
	}
	return save(fn, path, f, cfg, func(dc draw.Canvas) { leg.draw(p, dc) })
}
