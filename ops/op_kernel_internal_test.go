package ops

import (
	"errors"
	"strings"
	"testing"

	"gorgonia.org/tensor"
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
		{"periodic ok", PeriodicCov{}, []tensor.Shape{{}, {d}, {1}}, ""},
		{"periodic lengthscales scalar", PeriodicCov{}, []tensor.Shape{{}, {}, {}}, "hyperparameter 1 (lengthscales) a vector [3]"},
		{"periodic period vector", PeriodicCov{}, []tensor.Shape{{}, {d}, {d}}, "hyperparameter 2 (period) a scalar"},
		{"linear scalar ok", LinearCov{}, []tensor.Shape{{}}, ""},
		{"linear vector ok", LinearCov{}, []tensor.Shape{{d}}, ""},
		{"linear wrong length", LinearCov{}, []tensor.Shape{{d + 1}}, "hyperparameter 0 (variance) a scalar or a vector [3]"},
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
