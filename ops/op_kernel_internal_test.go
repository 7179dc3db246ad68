package ops

import (
	"errors"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// hyperStub is a covariance function with the given hyperparameters and no maths: enough for covCheckHyper.
type hyperStub []CovHyper

func (h hyperStub) Name() string                                                   { return "stub" }
func (h hyperStub) Hypers() []CovHyper                                             { return h }
func (hyperStub) Matrix(_, _ CovInput, _ []CovInput, _ []float64)                  {}
func (hyperStub) MatrixGrad(_ int, _, _ CovInput, _ []CovInput, _, _, _ []float64) {}
func (hyperStub) Diag(_ CovInput, _ []CovInput, _ []float64)                       {}
func (hyperStub) DiagGrad(_ int, _ CovInput, _ []CovInput, _, _, _ []float64)      {}

// The hyperparameters of gp's periodic and linear covariance functions.
var (
	periodicHypers = hyperStub{{Name: "variance"}, {Name: "lengthscales", Vec: true}, {Name: "period"}}
	linearHypers   = hyperStub{{Name: "variance", Vec: true, ScalarOK: true}}
)

// TestCovCheckHyperMessages: a wrong hyperparameter shape is a *ShapeError that names the hyperparameter and the
// shapes it accepts (formatted only on this error path), and the accepted shapes pass.
func TestCovCheckHyperMessages(t *testing.T) {
	const d = 3
	cases := []struct {
		name string
		f    CovFunc
		in   []tensor.Shape
		want string // "" for no error
	}{
		{"periodic ok", periodicHypers, []tensor.Shape{{}, {d}, {1}}, ""},
		{"periodic lengthscales scalar", periodicHypers, []tensor.Shape{{}, {}, {}}, "hyperparameter 1 (lengthscales) a vector [3]"},
		{"periodic period vector", periodicHypers, []tensor.Shape{{}, {d}, {d}}, "hyperparameter 2 (period) a scalar"},
		{"linear scalar ok", linearHypers, []tensor.Shape{{}}, ""},
		{"linear vector ok", linearHypers, []tensor.Shape{{d}}, ""},
		{"linear wrong length", linearHypers, []tensor.Shape{{d + 1}}, "hyperparameter 0 (variance) a scalar or a vector [3]"},
	}
	for _, tc := range cases {
		err := covCheckHyper("CovMatrix", tc.f, tc.in, d)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var se *ShapeError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a *ShapeError", tc.name, err)
			continue
		}
		if !strings.Contains(se.Want, tc.want) {
			t.Errorf("%s: Want %q, want it to contain %q", tc.name, se.Want, tc.want)
		}
	}
}
