package plots

import "math"

// DPI is the resolution of PNG output in dots per inch; a w×h inch PNG is round(w·DPI)×round(h·DPI) pixels.
const DPI = 96

// MaxSize is the largest accepted figure width or height in inches (a MaxSize-inch square PNG is 3840×3840
// pixels); it bounds the memory a PNG needs.
const MaxSize = 40

// Default figure sizes in inches, used when no WithSize option is given.
const (
	// DefaultWidth is the width of single-panel figures (Curves, Predictive1D, Reliability).
	DefaultWidth = 6.0
	// DefaultHeight is the height of single-panel figures (Curves, Predictive1D).
	DefaultHeight = 4.0
	// DefaultReliabilityHeight is the height of a reliability diagram, which stacks the diagram above the bin
	// counts.
	DefaultReliabilityHeight = 6.0
	// DefaultPanelWidth is the width of one panel of LayerSamples.
	DefaultPanelWidth = 4.0
	// DefaultPanelHeight is the height of one panel of LayerSamples.
	DefaultPanelHeight = 3.0
)

// Option changes how a figure is drawn. Options are applied in order; the last one of a kind wins.
type Option func(*config)

// config collects the options of one call; the zero value means "all defaults".
type config struct {
	width, height float64 // inches; 0 means the function's default
}

// WithSize sets the size of the whole figure to width×height inches. Both must be finite and in (0, MaxSize];
// otherwise the plotting function returns a *RangeError (or *NonFiniteError) naming "width" or "height".
// WithSize(0, 0) keeps the function's default size.
func WithSize(width, height float64) Option {
	return func(c *config) {
		c.width, c.height = width, height
	}
}

// newConfig applies opts and validates the result, filling the default size w×h where no size was given.
func newConfig(fn string, w, h float64, opts []Option) (config, error) {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.width == 0 && c.height == 0 {
		c.width, c.height = w, h
	}
	for _, d := range []struct {
		name string
		v    float64
	}{{"width", c.width}, {"height", c.height}} {
		if math.IsNaN(d.v) || math.IsInf(d.v, 0) {
			return c, &NonFiniteError{Func: fn, Name: d.name, Row: 0, Col: -1, Value: d.v}
		}
		if d.v <= 0 || d.v > MaxSize {
			return c, &RangeError{Func: fn, Name: d.name, Index: -1, Value: d.v, Min: 0, Max: MaxSize, MinOpen: true}
		}
	}
	return c, nil
}
