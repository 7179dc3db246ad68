package plots_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpzoo/gpzoo/plots"
)

// ExampleReliability draws the reliability diagram of eight predictions in five bins and prints its ECE:
// (2·|0.5−0.125| + 2·|0.5−0.525| + 4·|0.75−0.925|) / 8 = 0.1875.
func ExampleReliability() {
	dir, err := os.MkdirTemp("", "plots-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	prob := []float64{0.1, 0.15, 0.5, 0.55, 0.9, 0.95, 0.85, 1}
	correct := []bool{false, true, true, false, true, true, true, false}
	ece, err := plots.Reliability(filepath.Join(dir, "reliability.svg"), "toy classifier", prob, correct, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ECE = %.4g\n", ece)
	// Output: ECE = 0.1875
}

// ExampleCurves plots the ELBO of two methods against the training step, then shows the typed error for a
// series whose X and Y lengths disagree.
func ExampleCurves() {
	dir, err := os.MkdirTemp("", "plots-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	series := []plots.Series{
		{Name: "SVGP", X: []float64{0, 100, 200}, Y: []float64{-900, -310, -280}},
		{Name: "SGPR", X: []float64{0, 100, 200}, Y: []float64{-850, -290, -275}},
	}
	path := filepath.Join(dir, "elbo.png")
	fmt.Println(plots.Curves(path, "ELBO", "step", "ELBO", series, plots.WithSize(5, 3)))

	series[1].Y = series[1].Y[:2]
	fmt.Println(plots.Curves(path, "ELBO", "step", "ELBO", series))
	// Output:
	// <nil>
	// plots: Curves: series[1] "SGPR".Y has length 2, want 3
}
