// Package plots draws the figures of the gpzoo experiments with gonum/plot: training curves, the 1-D predictive
// distribution of a GP, reliability (calibration) diagrams of classifiers and the per-layer samples of a 1-D deep
// GP toy.
//
// The package takes plain Go data (slices of float64) and imports no other gpzoo package, so the model zoo and the
// command line can both call it. It holds no state: every function renders one figure and writes one file.
//
// # Conventions
//
// The file format follows the extension of the path, case-insensitively: ".png" (raster, [DPI] dots per inch)
// or ".svg" (vector). Any other extension is rejected with a [*FormatError] before any drawing is done. The file
// is rendered in memory first and written in one go, so a failed call never leaves a partial figure behind (it
// may leave no file at all).
//
// Figure sizes are given in inches. Each function documents its default size; [WithSize] overrides it. A PNG of
// w×h inches is round(w·DPI)×round(h·DPI) pixels.
//
// Inputs that share an index must have equal lengths, and every value must be finite. Predictive1D and
// LayerSamples sort their test inputs xs (carrying the matching values along), so xs need not be sorted; Curves
// draws each series in the order given. Rendering is deterministic: equal inputs give byte-identical files.
//
// Reliability and ECE measure calibration with equal-width bins of [0, 1] and the expected calibration error
// (Naeini et al. 2015; Guo et al. 2017).
//
// # Errors
//
// Every exported function validates its inputs and returns typed errors; none panics on user data:
//
//   - [*FormatError] (errors.Is [ErrFormat]): the path's extension is not .png or .svg.
//   - [*ShapeError] (errors.Is [ErrShape]): lengths that must agree do not, or an input that must not be empty is.
//   - [*NonFiniteError] (errors.Is [ErrNonFinite]): a NaN or ±Inf value, naming the input, its row and column.
//   - [*RangeError] (errors.Is [ErrRange]): a finite value outside its allowed range (a probability outside
//     [0, 1], a negative standard deviation, fewer than one bin, a non-positive figure size).
//
// Errors from writing the file are wrapped with the function name and the path.
package plots
