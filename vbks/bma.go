package vbks

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Predictive is a weighted set of Gaussian predictive distributions of y at the same inputs: Bayesian model
// averaging over kernels (eqs. 14–15) when there are several, one kernel's prediction when there is one.
type Predictive struct {
	Kernels []string    // the candidates' expressions
	Weights []float64   // q*(k_i), summing to 1
	Means   [][]float64 // Means[i][n]: candidate i's predictive mean of y_n
	Vars    [][]float64 // Vars[i][n]: its predictive variance of y_n (noise included)
}

// Predict returns the BMA predictive of y at x [N,D] over the pruned candidates with weights Pruned.Probs.
func (r *Result) Predict(x *mat.Dense, o models.PredictOptions) (*Predictive, error) {
	return r.predictive(x, r.Top, r.Pruned.Probs, o)
}

// PredictBest returns the predictive of the single most probable kernel (VBKS-s).
func (r *Result) PredictBest(x *mat.Dense, o models.PredictOptions) (*Predictive, error) {
	return r.predictive(x, []int{r.Best()}, []float64{1}, o)
}

func (r *Result) predictive(x *mat.Dense, idx []int, w []float64, o models.PredictOptions) (*Predictive, error) {
	if r == nil || r.Pruned == nil {
		return nil, errors.New("vbks: Predict before a finished Run")
	}
	p := &Predictive{Weights: append([]float64(nil), w...)}
	for _, i := range idx {
		cd := r.Candidates[i]
		mu, v, err := cd.Model.PredictY(x, o)
		if err != nil {
			return nil, fmt.Errorf("vbks: predicting with %s: %w", cd.Expr, err)
		}
		p.Kernels = append(p.Kernels, cd.Expr.String())
		p.Means = append(p.Means, mu.RawMatrix().Data)
		p.Vars = append(p.Vars, v.RawMatrix().Data)
	}
	return p, nil
}

// Moments returns the mixture's mean and variance (eq. 15): μ = Σ_i w_i μ_i, σ² = Σ_i w_i(σ_i² + μ_i²) − μ²
// (computed as Σ_i w_i(σ_i² + (μ_i − μ)²), which is the same and cannot go negative).
func (p *Predictive) Moments() (mean, variance []float64) {
	n := len(p.Means[0])
	mean, variance = make([]float64, n), make([]float64, n)
	for i, w := range p.Weights {
		for j, m := range p.Means[i] {
			mean[j] += w * m
		}
	}
	for i, w := range p.Weights {
		for j, m := range p.Means[i] {
			d := m - mean[j]
			variance[j] += w * (p.Vars[i][j] + d*d)
		}
	}
	return mean, variance
}

// LogDensity returns log Σ_i w_i N(y_n; μ_i, σ_i²) for every n: the mixture's exact log predictive density.
func (p *Predictive) LogDensity(y []float64) ([]float64, error) {
	if len(y) != len(p.Means[0]) {
		return nil, &ops.ShapeError{Op: "vbks.Predictive.LogDensity", Want: fmt.Sprintf("%d targets", len(p.Means[0])), Got: fmt.Sprint(len(y))}
	}
	out := make([]float64, len(y))
	terms := make([]float64, len(p.Weights))
	for n, yn := range y {
		for i, w := range p.Weights {
			v := p.Vars[i][n]
			d := yn - p.Means[i][n]
			terms[i] = math.Log(w) - 0.5*(math.Log(2*math.Pi*v)+d*d/v)
		}
		out[n] = ops.LogSumExp(terms)
	}
	return out, nil
}
