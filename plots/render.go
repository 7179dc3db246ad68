package plots

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Supported file formats, keyed by lower-case extension without the dot.
const (
	formatPNG = "png"
	formatSVG = "svg"
)

// fileFormat returns the format named by path's extension, or a *FormatError.
func fileFormat(fn, path string) (string, error) {
	ext := filepath.Ext(path)
	switch f := strings.ToLower(strings.TrimPrefix(ext, ".")); f {
	case formatPNG, formatSVG:
		return f, nil
	default:
		return "", &FormatError{Func: fn, Path: path, Ext: ext}
	}
}

// newCanvas returns an empty canvas of w×h inches in format f (as returned by fileFormat).
func newCanvas(f string, w, h float64) vg.CanvasWriterTo {
	width, height := vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch
	if f == formatSVG {
		return vgsvg.New(width, height)
	}
	return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(DPI))}
}

// save renders a figure of cfg's size with paint and writes it to path in format f. The whole file is rendered
// in memory first, so nothing is written when drawing fails. gonum/plot panics on some degenerate inputs that
// validation does not foresee; such a panic becomes an error here, so exported functions never panic.
func save(fn, path, f string, cfg config, paint func(dc draw.Canvas)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plots: %s: drawing %q failed: %v", fn, path, r)
		}
	}()
	c := newCanvas(f, cfg.width, cfg.height)
	paint(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plots: %s: encoding %q: %w", fn, path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plots: %s: writing %q: %w", fn, path, err)
	}
	return nil
}
