package zoo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpzoo/gpzoo/plots"
)

// ReliabilityBins is the number of confidence bins of the reliability diagrams WritePlots draws.
const ReliabilityBins = 10

// WritePlots draws r's figures into dir (created if missing), each as PNG and SVG, and returns the files: the
// training objective per training point against the step (objective-step) and against the training seconds
// (objective-time; runs that record step times); the test metrics evaluated during training
// (Options.EvalEvery) against step and seconds (test-rmse-step, test-ll-time, …); and for classifiers the reliability diagram of the test
// predictions (reliability; r.TestECE is its expected calibration error). The objective is the ELBO
// (the log marginal likelihood for the exact GP) per point in standardised units; minibatch values are noisy
// unbiased estimates.
func (r *Result) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("zoo: plots: %w", err)
	}
	title := fmt.Sprintf("%s (split %d, seed %d)", r.Entry, r.Split, r.Seed)
	type curve struct {
		name, xlabel, ylabel string
		x, y                 []float64
	}
	var curves []curve
	if len(r.losses) > 0 && r.NTrain > 0 {
		steps, obj := make([]float64, len(r.losses)), make([]float64, len(r.losses))
		for i, l := range r.losses {
			steps[i], obj[i] = float64(i+1), -l/float64(r.NTrain)
		}
		curves = append(curves, curve{"objective-step", "step", "objective per training point", steps, obj},
			curve{"objective-time", "training seconds", "objective per training point", r.times, obj})
	}
	for _, metric := range []string{"test_rmse", "test_ll", "test_accuracy"} {
		var steps, secs, vals []float64
		for _, ev := range r.evals {
			if v, ok := ev.Metrics[metric]; ok {
				steps, secs, vals = append(steps, float64(ev.Step)), append(secs, ev.Seconds), append(vals, v)
			}
		}
		if len(vals) > 0 {
			name, label := strings.ReplaceAll(metric, "_", "-"), strings.ReplaceAll(metric, "_", " ")
			curves = append(curves, curve{name + "-step", "step", label, steps, vals}, curve{name + "-time", "training seconds", label, secs, vals})
		}
	}
	var files []string
	for _, c := range curves {
		if len(c.x) != len(c.y) { // runs that record no step times (L-BFGS)
			continue
		}
		fs, err := DrawBoth(dir, c.name, func(path string) error {
			return plots.Curves(path, title, c.xlabel, c.ylabel, []plots.Series{{Name: r.Model, X: c.x, Y: c.y}})
		})
		if files = append(files, fs...); err != nil {
			return files, err
		}
	}
	if len(r.confidence) > 0 {
		fs, err := DrawBoth(dir, "reliability", func(path string) error {
			_, err := plots.Reliability(path, title+": test predictions", r.confidence, r.correct, ReliabilityBins)
			return err
		})
		if files = append(files, fs...); err != nil {
			return files, err
		}
	}
	return files, nil
}

// setECE sets r.TestECE from the recorded test confidences (classifiers).
func setECE(r *Result) {
	if ece, err := plots.ECE(r.confidence, r.correct, ReliabilityBins); err == nil {
		r.TestECE = &ece
	}
}

// PlotFormats are the formats WritePlots and DrawBoth write, by file extension.
var PlotFormats = []string{".png", ".svg"}

// DrawBoth calls draw with dir/name in every PlotFormats format and returns the files written.
func DrawBoth(dir, name string, draw func(path string) error) ([]string, error) {
	var files []string
	for _, ext := range PlotFormats {
		path := filepath.Join(dir, name+ext)
		if err := draw(path); err != nil {
			return files, fmt.Errorf("zoo: plots: %w", err)
		}
		files = append(files, path)
	}
	return files, nil
}
