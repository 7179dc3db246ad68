package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"

	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// The output names.
const (
	OutMean          = "mean"          // [N, P] (or [N, L] with latent)
	OutVariance      = "variance"      // [N, P] (or [N, L] with latent)
	OutProbabilities = "probabilities" // [N, C]
	OutLabel         = "label"         // [N]
	OutCovariance    = "covariance"    // [P, N, N] with full_cov
	OutSamples       = "samples"       // [S, N, L] with samples
	// Asked for by name only (never among the default outputs):
	OutStd     = "std"     // [N, P] (or [N, L] with latent): √variance as the model file computes it, √v·σ_y (finite where variance overflows)
	OutClasses = "classes" // [C]: a classifier's label value of each column of probabilities
)

// ParamTargets is the parameter of the "mean", "variance" and "std" tensors of a regression model that names their
// columns: the model's target names in column order (its file's OutputNames, for a model trained with --targets)
// as a JSON array in a string, e.g. "[\"a\",\"b\"]" for [N, 2] tensors. A model of several targets answers one
// [N, P] tensor per quantity (column p is target p), not one tensor per target: the protocol's tensors are
// n-dimensional, and a client reads every output of a row at once.
const ParamTargets = "targets"

// nameTargets adds ParamTargets to outs' mean, variance and std tensors when the model names its targets (Meta
// "targets") and the names match their width.
func (m *model) nameTargets(outs []oip.ResponseOutput) {
	if m.task == modelfile.TaskClassification || m.file.Meta["targets"] == "" || len(m.outputs) != m.width {
		return
	}
	names, err := json.Marshal(m.outputs)
	if err != nil {
		return
	}
	for i, t := range outs {
		switch t.Name {
		case OutMean, OutVariance, OutStd:
			if outs[i].Parameters == nil {
				outs[i].Parameters = oip.Parameters{}
			}
			outs[i].Parameters[ParamTargets] = string(names)
		}
	}
}

// onRequest are the outputs answered only when a request names them.
var onRequest = []string{OutStd, OutClasses}

// available returns the outputs a request with options o gets from the model, in answer order.
func (m *model) available(o modelfile.PredictOptions) []string {
	var out []string
	if m.task == modelfile.TaskClassification && !o.Latent {
		out = []string{OutProbabilities, OutLabel, OutClasses}
	} else {
		out = []string{OutMean, OutVariance, OutStd}
	}
	if o.FullCov {
		out = append(out, OutCovariance)
	}
	if o.Draws > 0 {
		out = append(out, OutSamples)
	}
	return out
}

// wanted returns the outputs to answer: those requested (each one available), else every available one but
// those answered on request only.
func (m *model) wanted(req []oip.RequestOutput, o modelfile.PredictOptions) ([]string, error) {
	avail := m.available(o)
	if len(req) == 0 {
		return slices.DeleteFunc(avail, func(name string) bool { return slices.Contains(onRequest, name) }), nil
	}
	want := make([]string, 0, len(req))
	for _, r := range req {
		if !slices.Contains(avail, r.Name) {
			hint := ""
			switch r.Name {
			case OutCovariance:
				hint = " (covariance needs parameters.full_cov = true)"
			case OutSamples:
				hint = " (samples needs parameters.samples > 0)"
			}
			return nil, errorf(http.StatusBadRequest, "output %q is not available%s: this request's outputs are %s", clip(r.Name), hint, listNames(avail))
		}
		if !slices.Contains(want, r.Name) {
			want = append(want, r.Name)
		}
	}
	return want, nil
}

// outputs builds the response tensors of p for the rows of a request, in want's order (f gives a classifier's
// label values). A non-finite value fails the request with 422 naming the output and row (JSON cannot carry
// it, and it is no answer).
func outputs(p *modelfile.Prediction, want []string, n int, f *modelfile.File) ([]oip.ResponseOutput, error) {
	outs := make([]oip.ResponseOutput, 0, len(want))
	for _, name := range want {
		var t oip.ResponseOutput
		var err error
		switch name {
		case OutMean:
			t, err = matrixOutput(name, p.Mean, n)
		case OutVariance:
			t, err = matrixOutput(name, p.Var, n)
		case OutStd:
			t, err = matrixOutput(name, p.Std, n)
		case OutClasses:
			t, err = classesOutput(p.Probs, f)
		case OutProbabilities:
			t, err = matrixOutput(name, p.Probs, n)
		case OutLabel:
			if len(p.Labels) != n {
				err = fmt.Errorf("%d labels for %d rows", len(p.Labels), n)
			} else {
				t = oip.ResponseOutput{Name: name, Datatype: oip.FP64, Shape: []int64{int64(n)}, Data: slices.Clone(p.Labels)}
			}
		case OutCovariance:
			t, err = covarianceOutput(p.Cov, n)
		case OutSamples:
			t, err = samplesOutput(p.Draws, n)
		}
		if err != nil {
			return nil, errorf(http.StatusInternalServerError, "output %q: %v", name, err)
		}
		if err := finite(t, n); err != nil {
			return nil, err
		}
		outs = append(outs, t)
	}
	return outs, nil
}

func matrixOutput(name string, a *mat.Dense, n int) (oip.ResponseOutput, error) {
	if a == nil {
		return oip.ResponseOutput{}, fmt.Errorf("the model gave none")
	}
	r, c := a.Dims()
	if r != n {
		return oip.ResponseOutput{}, fmt.Errorf("%d rows for %d", r, n)
	}
	data := make([]float64, 0, r*c)
	for i := range r {
		data = append(data, a.RawRowView(i)...)
	}
	return oip.ResponseOutput{Name: name, Datatype: oip.FP64, Shape: []int64{int64(r), int64(c)}, Data: data}, nil
}

// classesOutput is the label value of each column of probs.
func classesOutput(probs *mat.Dense, f *modelfile.File) (oip.ResponseOutput, error) {
	if probs == nil {
		return oip.ResponseOutput{}, fmt.Errorf("the model gave no probabilities")
	}
	_, k := probs.Dims()
	vals, err := f.ClassValues(k)
	if err != nil {
		return oip.ResponseOutput{}, err
	}
	return oip.ResponseOutput{Name: OutClasses, Datatype: oip.FP64, Shape: []int64{int64(k)}, Data: vals}, nil
}

func covarianceOutput(cov []*mat.SymDense, n int) (oip.ResponseOutput, error) {
	if len(cov) == 0 {
		return oip.ResponseOutput{}, fmt.Errorf("the model gave none")
	}
	data := make([]float64, 0, len(cov)*n*n)
	for _, c := range cov {
		if c.SymmetricDim() != n {
			return oip.ResponseOutput{}, fmt.Errorf("a %d×%d covariance for %d rows", c.SymmetricDim(), c.SymmetricDim(), n)
		}
		for i := range n {
			for j := range n {
				data = append(data, c.At(i, j))
			}
		}
	}
	return oip.ResponseOutput{Name: OutCovariance, Datatype: oip.FP64, Shape: []int64{int64(len(cov)), int64(n), int64(n)}, Data: data}, nil
}

func samplesOutput(draws []*mat.Dense, n int) (oip.ResponseOutput, error) {
	if len(draws) == 0 {
		return oip.ResponseOutput{}, fmt.Errorf("the model gave none")
	}
	_, l := draws[0].Dims()
	data := make([]float64, 0, len(draws)*n*l)
	for _, d := range draws {
		r, c := d.Dims()
		if r != n || c != l {
			return oip.ResponseOutput{}, fmt.Errorf("a draw of [%d,%d] for [%d,%d]", r, c, n, l)
		}
		for i := range r {
			data = append(data, d.RawRowView(i)...)
		}
	}
	return oip.ResponseOutput{Name: OutSamples, Datatype: oip.FP64, Shape: []int64{int64(len(draws)), int64(n), int64(l)}, Data: data}, nil
}

// finite returns a 422 naming the output and row of t's first non-finite value. The row is the index along
// t's row dimension: the first for [N, ...] outputs, the second for [P, N, N] and [S, N, L].
func finite(t oip.ResponseOutput, n int) error {
	for k, v := range t.Data {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			continue
		}
		row, where := 0, ""
		switch len(t.Shape) {
		case 1:
			row = k
		case 2:
			row = k / int(t.Shape[1])
			where = fmt.Sprintf(", column %d", k%int(t.Shape[1]))
		case 3:
			inner := int(t.Shape[1]) * int(t.Shape[2])
			row = k % inner / int(t.Shape[2])
			what := map[string]string{OutCovariance: "output", OutSamples: "sample"}[t.Name]
			where = fmt.Sprintf(" (%s %d, column %d)", what, k/inner, k%int(t.Shape[2]))
		}
		return errorf(http.StatusUnprocessableEntity, "output %q is not finite at row %d%s (%v): the prediction overflows float64 for this input",
			t.Name, row, where, v)
	}
	return nil
}
