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
	var files []string
	title := fmt.Sprintf("%s (split %d, seed %d)", r.Entry, r.Split, r.Seed)
	if len(r.losses) > 0 && r.NTrain > 0 {
		steps, obj := make([]float64, len(r.losses)), make([]float64, len(r.losses))
		for i, l := range r.losses {
			steps[i], obj[i] = float64(i+1), -l/float64(r.NTrain)
		}
		curves := []struct {
			name, xlabel string
			x            []float64
		}{{"objective-step", "step", steps}, {"objective-time", "training seconds", r.times}}
		for _, c := range curves {
			if len(c.x) != len(obj) {
				continue
			}
			for _, ext := range []string{".png", ".svg"} {
				path := filepath.Join(dir, c.name+ext)
				if err := plots.Curves(path, title, c.xlabel, "objective per training point", []plots.Series{{Name: r.Model, X: c.x, Y: obj}}); err != nil {
					return files, fmt.Errorf("zoo: plots: %w", err)
				}
				files = append(files, path)
			}
		}
	}
	for _, metric := range []string{"test_rmse", "test_ll", "test_accuracy"} {
		var steps, secs, vals []float64
		for _, ev := range r.evals {
			if v, ok := ev.Metrics[metric]; ok {
				steps, secs, vals = append(steps, float64(ev.Step)), append(secs, ev.Seconds), append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		label := strings.ReplaceAll(metric, "_", " ")
		for _, c := range []struct {
			name, xlabel string
			x            []float64
		}{{"-step", "step", steps}, {"-time", "training seconds", secs}} {
			for _, ext := range []string{".png", ".svg"} {
				path := filepath.Join(dir, strings.ReplaceAll(metric, "_", "-")+c.name+ext)
				if err := plots.Curves(path, title, c.xlabel, label, []plots.Series{{Name: r.Model, X: c.x, Y: vals}}); err != nil {
					return files, fmt.Errorf("zoo: plots: %w", err)
				}
				files = append(files, path)
			}
		}
	}
	if len(r.confidence) > 0 {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, "reliability"+ext)
			if _, err := plots.Reliability(path, title+": test predictions", r.confidence, r.correct, ReliabilityBins); err != nil {
				return files, fmt.Errorf("zoo: plots: %w", err)
			}
			files = append(files, path)
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
