package vbks

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

var _ gp.Predictor = (*Result)(nil)

// Predict returns the Bayesian model average (eqs. 14–15) at x [N,D] over the pruned candidates with weights
// Pruned.Probs (gp.Predictor): one Component per kernel (Weight q*(k), Label its expression, its SVGP's
// marginals of f and predictive of y, noise included), FMean, FVar, YMean and YVar the mixture's moments
// (Mixture). o.Full adds the mixture's covariance of f, Σ_i w_i (C_i + (μ_i − μ)(μ_i − μ)ᵀ); o.Draws draws each
// sample's kernel by its weight (from o.Rand, all kernels first) and the sample from that kernel's Gaussian.
// The single most probable kernel's prediction (VBKS-s) is Candidates[Best()].Model's.
func (r *Result) Predict(x *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if r == nil || r.Pruned == nil {
		return nil, errors.New("vbks: Predict before a finished Run")
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	rng := o.Rng()
	w := r.Pruned.Probs
	draws := make([]int, len(r.Top)) // samples per kernel
	for range o.Draws {
		u, i := rng.Float64(), 0
		for acc := w[0]; u >= acc && i < len(w)-1; acc += w[i] {
			i++
		}
		draws[i]++
	}
	cs := make([]gp.Component, len(r.Top))
	var fcov, ocov [][]*mat.SymDense
	var samples []*mat.Dense
	for j, i := range r.Top {
		cd := r.Candidates[i]
		co := o
		co.Rand, co.Draws = rng, draws[j]
		p, err := cd.Model.Predict(x, co)
		if err != nil {
			return nil, fmt.Errorf("vbks: predicting with %s: %w", cd.Expr, err)
		}
		cs[j] = gp.Component{Weight: w[j], Label: cd.Expr.String(), FMean: p.FMean, FVar: p.FVar, YMean: p.YMean, YVar: p.YVar}
		fcov = append(fcov, p.FCov)
		ocov = append(ocov, p.OutputCov)
		samples = append(samples, p.Draws...)
	}
	out := Mixture(cs)
	if o.Full {
		out.FCov = mixtureCov(cs, fcov, out.FMean)
	}
	if o.OutputCov { // the law of total covariance over the kernels, row by row; its diagonal is FVar's
		ws, ms := make([]float64, len(cs)), make([]*mat.Dense, len(cs))
		for j, c := range cs {
			ws[j], ms[j] = c.Weight, c.FMean
		}
		out.OutputCov = gp.MixtureOutputCov(ws, ms, ocov, out.FMean)
		for i, c := range out.OutputCov {
			for j := 0; j < c.SymmetricDim(); j++ {
				c.SetSym(j, j, out.FVar.At(i, j))
			}
		}
	}
	out.Draws = samples
	return out, nil
}

// InputDim returns the candidates' input width D (0 before a Run).
func (r *Result) InputDim() int {
	if r == nil || len(r.Candidates) == 0 || r.Candidates[0].Model == nil {
		return 0
	}
	return r.Candidates[0].Model.InputDim()
}

// OutputDim returns 1: VBKS models one target column.
func (r *Result) OutputDim() int {
	if r == nil || len(r.Candidates) == 0 || r.Candidates[0].Model == nil {
		return 0
	}
	return r.Candidates[0].Model.OutputDim()
}

// PredictiveDim returns the candidates' width of YMean and YVar (0 before a Run).
func (r *Result) PredictiveDim() int {
	if r == nil || len(r.Candidates) == 0 || r.Candidates[0].Model == nil {
		return 0
	}
	return r.Candidates[0].Model.PredictiveDim()
}

// Mixture returns the predictive distribution of the mixture of Gaussian components cs (weights summing to 1,
// every component's matrices of the same shape) as a gp.Prediction holding them: eq. 15 entry by entry, the
// mean μ = Σ_i w_i μ_i and the variance σ² = Σ_i w_i(σ_i² + μ_i²) − μ² (computed as Σ_i w_i(σ_i² + (μ_i − μ)²),
// which is the same and cannot go negative), of f (FMean, FVar) and of y (YMean, YVar).
func Mixture(cs []gp.Component) *gp.Prediction {
	out := &gp.Prediction{Components: cs}
	if len(cs) == 0 {
		return out
	}
	of := func(pick func(c gp.Component) (m, v *mat.Dense)) (mean, variance *mat.Dense) {
		ms, vs := make([][]float64, len(cs)), make([][]float64, len(cs))
		for i, c := range cs {
			m, v := pick(c)
			if m == nil || v == nil {
				return nil, nil
			}
			ms[i], vs[i] = mat.DenseCopyOf(m).RawMatrix().Data, mat.DenseCopyOf(v).RawMatrix().Data
		}
		m0, _ := pick(cs[0])
		n, l := m0.Dims()
		mu, s2 := moments(cs, ms, vs)
		return mat.NewDense(n, l, mu), mat.NewDense(n, l, s2)
	}
	out.FMean, out.FVar = of(func(c gp.Component) (m, v *mat.Dense) { return c.FMean, c.FVar })
	out.YMean, out.YVar = of(func(c gp.Component) (m, v *mat.Dense) { return c.YMean, c.YVar })
	return out
}

// moments returns eq. 15 for the components' flattened means ms and variances vs.
func moments(cs []gp.Component, ms, vs [][]float64) (mean, variance []float64) {
	n := len(ms[0])
	mean, variance = make([]float64, n), make([]float64, n)
	for i, c := range cs {
		for j, m := range ms[i] {
			mean[j] += c.Weight * m
		}
	}
	for i, c := range cs {
		for j, m := range ms[i] {
			d := m - mean[j]
			variance[j] += c.Weight * (vs[i][j] + d*d)
		}
	}
	return mean, variance
}

// mixtureCov returns, for each latent output l, Σ_i w_i (C_il + (μ_il − μ_l)(μ_il − μ_l)ᵀ) from the components'
// covariances covs[i][l] and the mixture mean.
func mixtureCov(cs []gp.Component, covs [][]*mat.SymDense, mean *mat.Dense) []*mat.SymDense {
	n, l := mean.Dims()
	out := make([]*mat.SymDense, l)
	d := make([]float64, n)
	for p := range out {
		out[p] = mat.NewSymDense(n, nil)
		for i, c := range cs {
			for r := range d {
				d[r] = c.FMean.At(r, p) - mean.At(r, p)
			}
			for a := 0; a < n; a++ {
				for b := a; b < n; b++ {
					out[p].SetSym(a, b, out[p].At(a, b)+c.Weight*(covs[i][p].At(a, b)+d[a]*d[b]))
				}
			}
		}
	}
	return out
}

// LogDensity returns log Σ_i w_i N(y_n; μ_i, σ_i²) for every n: the exact log predictive density of the
// mixture p.Components (Predict's), or of the single Gaussian N(YMean, YVar) of a prediction without components
// (a single kernel's, VBKS-s). y holds the N targets of one output column.
func LogDensity(p *gp.Prediction, y []float64) ([]float64, error) {
	cs := p.Components
	if len(cs) == 0 {
		cs = []gp.Component{{Weight: 1, YMean: p.YMean, YVar: p.YVar}}
	}
	means, vars := make([][]float64, len(cs)), make([][]float64, len(cs))
	for i, c := range cs {
		if c.YMean == nil || c.YVar == nil {
			return nil, errors.New("vbks: LogDensity of a prediction without y's moments")
		}
		means[i], vars[i] = mat.DenseCopyOf(c.YMean).RawMatrix().Data, mat.DenseCopyOf(c.YVar).RawMatrix().Data
	}
	if len(y) != len(means[0]) {
		return nil, &ops.ShapeError{Op: "vbks.LogDensity", Want: fmt.Sprintf("%d targets", len(means[0])), Got: fmt.Sprint(len(y))}
	}
	out := make([]float64, len(y))
	terms := make([]float64, len(cs))
	for n, yn := range y {
		for i, c := range cs {
			v := vars[i][n]
			d := yn - means[i][n]
			terms[i] = math.Log(c.Weight) - 0.5*(math.Log(2*math.Pi*v)+d*d/v)
		}
		out[n] = ops.LogSumExp(terms)
	}
	return out, nil
}
