package client

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// The request parameters and output names of gpzoo serve.
const (
	ParamLatent    = "latent"
	ParamFullCov   = "full_cov"
	ParamSamples   = "samples"
	ParamSeed      = "seed"
	ParamRowOffset = "row_offset"

	OutMean          = "mean"
	OutVariance      = "variance"
	OutStd           = "std"
	OutProbabilities = "probabilities"
	OutLabel         = "label"
	OutCovariance    = "covariance"
	OutSamples       = "samples"
	OutClasses       = "classes"
)

// InputTensor is the name of the one [N, D] input tensor Infer sends without Params.Features.
const InputTensor = "input"

// Params are the options of one Infer call.
type Params struct {
	// Version selects the model's version ("": the server's default).
	Version string
	// Latent asks for the latent functions f instead of y (parameter latent).
	Latent bool
	// FullCov asks for the N×N covariance of each output across the rows (parameter full_cov).
	FullCov bool
	// Samples asks for that many draws of f at the rows (parameter samples).
	Samples int
	// Seed seeds the server's Monte-Carlo numbers (parameter seed; 0: the server's default, 1 for gpzoo serve).
	Seed uint64
	// RowOffset, when > 0, is the index of x's first row in a larger table (parameter row_offset): gpzoo serve
	// gives row i the Monte-Carlo numbers of row RowOffset + i, so that the rows of a table sent in several
	// requests get the numbers of one request.
	RowOffset int
	// Features, when set, names x's columns: the rows go as one FP64 tensor [N] per feature, named so, instead
	// of one FP64 tensor [N, D] named "input".
	Features []string
	// Outputs, when set, are the outputs to ask for (the model's default outputs otherwise).
	Outputs []string
}

// Result is a prediction read from the server's answer. The fields of outputs the answer lacks are nil.
type Result struct {
	// Mean and Var are the outputs "mean" and "variance" [N, P]; Std is "std" [N, P] when the server gives it.
	Mean, Var, Std *mat.Dense
	// Probs are a classifier's "probabilities" [N, C]; Labels its "label" [N], the most probable class;
	// Classes, when the server gives "classes" [C], the label value of each column of Probs.
	Probs   *mat.Dense
	Labels  []float64
	Classes []float64
	// Cov holds, with Params.FullCov, output "covariance" [P, N, N]: the covariance across the rows of each
	// output.
	Cov []*mat.SymDense
	// Samples holds, with Params.Samples, output "samples" [S, N, L]: S draws [N, L].
	Samples []*mat.Dense
	// ModelName and ModelVersion are the model and version that answered.
	ModelName, ModelVersion string
	// Outputs are every output of the answer, by name.
	Outputs map[string]*oip.ResponseOutput
}

// Infer predicts at the rows of x with the model (Params.Version: its version). Errors: an *oip.Error with
// status 400 for an empty x or Features not naming x's columns; an *oip.Error the server answered (400 for
// bad input, 401 for a missing or wrong token, 404 for an unknown model or version, 413 beyond the server's
// limits, 422 for a prediction that overflows, 503 when the server cannot serve); an *oip.Error with status
// 502 for an answer whose outputs do not have the shapes of x's rows; a *TransportError when no answer came.
func (c *Client) Infer(ctx context.Context, model string, x *mat.Dense, p Params) (*Result, error) {
	req, n, err := request(x, p)
	if err != nil {
		return nil, err
	}
	res, err := c.InferRequest(ctx, model, p.Version, req)
	if err != nil {
		return nil, err
	}
	return result(res, n)
}

// request builds the inference request of x and p, and returns x's row count.
func request(x *mat.Dense, p Params) (*oip.InferRequest, int, error) {
	if x == nil || x.IsEmpty() {
		return nil, 0, oip.BadRequest("no rows to predict")
	}
	n, d := x.Dims()
	if p.Samples < 0 || p.RowOffset < 0 {
		return nil, 0, oip.BadRequest("Params.Samples %d and Params.RowOffset %d must be ≥ 0", p.Samples, p.RowOffset)
	}
	req := &oip.InferRequest{Parameters: oip.Parameters{}}
	if p.Latent {
		req.Parameters[ParamLatent] = true
	}
	if p.FullCov {
		req.Parameters[ParamFullCov] = true
	}
	if p.Samples > 0 {
		req.Parameters[ParamSamples] = int64(p.Samples)
	}
	if p.Seed != 0 {
		req.Parameters[ParamSeed] = p.Seed
	}
	if p.RowOffset > 0 {
		req.Parameters[ParamRowOffset] = int64(p.RowOffset)
	}
	if len(req.Parameters) == 0 {
		req.Parameters = nil
	}
	for _, name := range p.Outputs {
		req.Outputs = append(req.Outputs, oip.RequestOutput{Name: name})
	}
	if len(p.Features) == 0 {
		data := make([]float64, 0, n*d)
		for i := range n {
			data = append(data, x.RawRowView(i)...)
		}
		req.Inputs = []oip.RequestInput{{Name: InputTensor, Shape: []int64{int64(n), int64(d)}, Datatype: oip.FP64, Data: data}}
		return req, n, nil
	}
	if len(p.Features) != d {
		return nil, 0, oip.BadRequest("%d feature names for %d columns", len(p.Features), d)
	}
	seen := make(map[string]bool, d)
	for j, name := range p.Features {
		if name == "" || seen[name] {
			return nil, 0, oip.BadRequest("feature %d: the names must be distinct and non-empty (%q)", j, name)
		}
		seen[name] = true
		col := make([]float64, n)
		mat.Col(col, j, x)
		req.Inputs = append(req.Inputs, oip.RequestInput{Name: name, Shape: []int64{int64(n)}, Datatype: oip.FP64, Data: col})
	}
	return req, n, nil
}

// result reads the answer's outputs for n rows.
func result(res *oip.InferResponse, n int) (*Result, error) {
	r := &Result{ModelName: res.ModelName, ModelVersion: res.ModelVersion, Outputs: make(map[string]*oip.ResponseOutput, len(res.Outputs))}
	for i := range res.Outputs {
		o := &res.Outputs[i]
		if _, dup := r.Outputs[o.Name]; dup {
			return nil, badAnswer("output %q is given twice", o.Name)
		}
		r.Outputs[o.Name] = o
		if err := checkSize(o); err != nil {
			return nil, err
		}
		var err error
		switch o.Name {
		case OutMean:
			r.Mean, err = matrix(o, n)
		case OutVariance:
			r.Var, err = matrix(o, n)
		case OutStd:
			r.Std, err = matrix(o, n)
		case OutProbabilities:
			r.Probs, err = matrix(o, n)
		case OutLabel:
			if len(o.Data) != n || !(len(o.Shape) == 1 || len(o.Shape) == 2 && o.Shape[1] == 1) {
				err = badAnswer("output %q has shape %v for %d rows", o.Name, o.Shape, n)
			} else {
				r.Labels = append([]float64(nil), o.Data...)
			}
		case OutClasses:
			if len(o.Shape) != 1 {
				err = badAnswer("output %q has shape %v (want [C])", o.Name, o.Shape)
			} else {
				r.Classes = append([]float64(nil), o.Data...)
			}
		case OutCovariance:
			r.Cov, err = covariances(o, n)
		case OutSamples:
			r.Samples, err = samples(o, n)
		}
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func badAnswer(format string, args ...any) *oip.Error {
	return &oip.Error{Status: http.StatusBadGateway, Msg: "the server's answer: " + fmt.Sprintf(format, args...)}
}

// checkSize checks that the output's shape holds its elements.
func checkSize(o *oip.ResponseOutput) error {
	size := int64(1)
	for _, d := range o.Shape {
		if d < 0 || (d > 0 && size > (1<<62)/d) {
			return badAnswer("output %q has shape %v", o.Name, o.Shape)
		}
		size *= d
	}
	if size != int64(len(o.Data)) {
		return badAnswer("output %q has shape %v and %d elements", o.Name, o.Shape, len(o.Data))
	}
	return nil
}

// matrix reads an [N, K] output (or [N], as [N, 1]).
func matrix(o *oip.ResponseOutput, n int) (*mat.Dense, error) {
	k := int64(1)
	switch {
	case len(o.Shape) == 2 && o.Shape[0] == int64(n) && o.Shape[1] > 0:
		k = o.Shape[1]
	case len(o.Shape) == 1 && o.Shape[0] == int64(n):
	default:
		return nil, badAnswer("output %q has shape %v for %d rows", o.Name, o.Shape, n)
	}
	return mat.NewDense(n, int(k), append([]float64(nil), o.Data...)), nil
}

// covariances reads a [P, N, N] output.
func covariances(o *oip.ResponseOutput, n int) ([]*mat.SymDense, error) {
	if len(o.Shape) != 3 || o.Shape[1] != int64(n) || o.Shape[2] != int64(n) {
		return nil, badAnswer("output %q has shape %v for %d rows (want [P, %d, %d])", o.Name, o.Shape, n, n, n)
	}
	out := make([]*mat.SymDense, o.Shape[0])
	for p := range out {
		out[p] = mat.NewSymDense(n, append([]float64(nil), o.Data[p*n*n:(p+1)*n*n]...))
	}
	return out, nil
}

// samples reads an [S, N, L] output.
func samples(o *oip.ResponseOutput, n int) ([]*mat.Dense, error) {
	if len(o.Shape) != 3 || o.Shape[1] != int64(n) || o.Shape[2] <= 0 {
		return nil, badAnswer("output %q has shape %v for %d rows (want [S, %d, L])", o.Name, o.Shape, n, n)
	}
	l := int(o.Shape[2])
	out := make([]*mat.Dense, o.Shape[0])
	for s := range out {
		out[s] = mat.NewDense(n, l, append([]float64(nil), o.Data[s*n*l:(s+1)*n*l]...))
	}
	return out, nil
}
