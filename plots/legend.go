package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Layout of a legend drawn beside the data area.
const (
	// legendMaxFraction is the largest share of the figure width a side legend may take; a wider legend is
	// drawn inside the data area instead.
	legendMaxFraction = 0.4
	// legendGap separates the plot from a side legend.
	legendGap = 3 * vg.Millimeter
	// legendTopOffset lowers a side legend below the plot title.
	legendTopOffset = 8 * vg.Millimeter
)

// sideLegend collects legend entries to draw to the right of a plot, outside its data area, so that the
// legend never hides the curves.
type sideLegend struct {
	leg plot.Legend
	n   int // number of entries
}

// newSideLegend returns an empty side legend with icons left of the text.
func newSideLegend() *sideLegend {
	l := &sideLegend{leg: plot.NewLegend()}
	l.leg.Top, l.leg.Left = true, true
	l.leg.YOffs = -legendTopOffset
	return l
}

// Add adds an entry, as plot.Legend.Add.
func (l *sideLegend) Add(name string, thumbs ...plot.Thumbnailer) {
	l.leg.Add(name, thumbs...)
	l.n++
}

// draw draws p on dc with the legend to its right, or inside p's data area (top right) when the legend would
// take more than legendMaxFraction of the width.
func (l *sideLegend) draw(p *plot.Plot, dc draw.Canvas) {
	if l.n == 0 {
		p.Draw(dc)
		return
	}
	r := l.leg.Rectangle(dc)
	w := r.Max.X - r.Min.X + legendGap
	if w > vg.Length(legendMaxFraction)*(dc.Max.X-dc.Min.X) {
		p.Legend = l.leg
		p.Legend.Left, p.Legend.YOffs = false, 0
		p.Draw(dc)
		return
	}
	p.Draw(draw.Crop(dc, 0, -w, 0, 0))
	lc := dc
	lc.Min.X = dc.Max.X - w + legendGap
	l.leg.Draw(lc)
}
