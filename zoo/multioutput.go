package zoo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"gonum.org/v1/gonum/mat"
)

// Several targets (gpzoo train --targets a,b,c): a data set with P target columns trains a model with P outputs,
// each column standardised on its own (datasets.FitStandardizer). By default the outputs are independent latent
// GPs sharing the layer's kernel and Z (the multi-output layers' default); CustomConfig.LMC = L mixes L latent GPs
// into the P outputs by a learnt W [P,L] (layers.LMC, a linear model of coregionalisation). Missing targets (empty
// cells, datasets.Dataset.Observed) are left out of the likelihood (likelihoods.Masked: the model trains on
// [y | mask], so the minibatch gathers the mask with the targets) and out of the test metrics, which are over the
// observed cells.

// MissingTargetsError is the error of a configuration that cannot leave missing target cells out: the exact and
// collapsed families (gpr, sgpr: their closed forms need every cell), or a likelihood whose expected log density
// is not a sum over the target columns (gp.LikelihoodFamily.MissingTargets). It wraps ErrBadCustom.
type MissingTargetsError struct {
	Family, Likelihood string
	Missing, Cells     int      // missing and total target cells
	Supported          []string // the likelihoods that handle missing targets
}

// Error implements error.
func (e *MissingTargetsError) Error() string {
	what := fmt.Sprintf("%d of %d target cells are empty (missing targets)", e.Missing, e.Cells)
	if e.Family == "gpr" || e.Family == "sgpr" {
		return fmt.Sprintf("%v: %s: %s has no likelihood term per cell to leave them out of: use svgp (or another variational family)", ErrBadCustom, what, e.Family)
	}
	return fmt.Sprintf("%v: %s: likelihood %s cannot leave them out; missing targets need %s", ErrBadCustom, what, e.Likelihood, strings.Join(e.Supported, " or "))
}

// Unwrap returns ErrBadCustom.
func (e *MissingTargetsError) Unwrap() error { return ErrBadCustom }

// checkOutputs refuses what c cannot do with d's targets: missing cells with gpr, sgpr or a likelihood without
// MissingTargets (a *MissingTargetsError), and an LMC (c.LMC > 0) in a family without one (gpr, sgpr).
func checkOutputs(d *datasets.Dataset, c CustomConfig, fam gp.LikelihoodFamily) error {
	if c.LMC > 0 && (c.Family == "gpr" || c.Family == "sgpr") {
		return fmt.Errorf("%w: an LMC of %d latent GPs applies to svgp, decoupled, hybrid, orth, orthnat and dgp (its last layer), not %s", ErrBadCustom, c.LMC, c.Family)
	}
	missing := d.MissingTargets()
	if missing == 0 {
		return nil
	}
	if c.Family == "gpr" || c.Family == "sgpr" || !fam.MissingTargets {
		var ok []string
		for _, f := range gp.LikelihoodFamilies() {
			if f.MissingTargets {
				ok = append(ok, f.Name)
			}
		}
		return &MissingTargetsError{Family: c.Family, Likelihood: fam.Name, Missing: missing, Cells: d.N() * d.P(), Supported: ok}
	}
	return nil
}

// trainTargets returns what the model trains on: tr.Y, or [y | mask] when tr has missing targets (the model's
// likelihood is then masked: maskMissing).
func trainTargets(tr *datasets.Dataset) *mat.Dense {
	if tr.Observed == nil {
		return tr.Y
	}
	return datasets.PackObserved(tr.Y, tr.Observed)
}

// maskMissing wraps lik in likelihoods.Masked when tr has missing targets (checkOutputs allowed them).
func maskMissing(lik gp.Likelihood, tr *datasets.Dataset) (gp.Likelihood, error) {
	if tr.Observed == nil {
		return lik, nil
	}
	m, err := likelihoods.NewMasked(lik)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCustom, err)
	}
	return m, nil
}

// blockOutputs is the width of the layer built for p outputs: c.LMC latents with an LMC, else p.
func blockOutputs(c CustomConfig, p int) int {
	if c.LMC > 0 {
		return c.LMC
	}
	return p
}

// mixOutputs returns block itself, or with c.LMC > 0 an LMC mixing its c.LMC latent outputs into p by a learnt
// W [p, L] started from the training targets tr (standardised; initMixing), or, where they cannot give one, drawn
// from N(0, 1/L) by rng: each output's prior variance is then about the kernel's, as for independent outputs on
// standardised targets.
func mixOutputs(block gp.Layer, c CustomConfig, p int, tr *datasets.Dataset, rng *rand.Rand) (gp.Layer, error) {
	if c.LMC <= 0 {
		return block, nil
	}
	l := c.LMC
	w, ok := initMixing(tr, l)
	if !ok || w.RawMatrix().Rows != p {
		w = mat.NewDense(p, l, nil)
		for i := range p {
			for j := range l {
				w.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(l)))
			}
		}
	}
	lmc, err := layers.NewLMC(layers.LMCConfig{Latents: []gp.Layer{block}, W: w})
	if err != nil {
		return nil, fmt.Errorf("%w: LMC: %w", ErrBadCustom, err)
	}
	return lmc, nil
}

// initMixing returns an LMC's starting W [P, l] from d's targets (standardised): the first l principal directions of
// their covariance C (pairwise complete: entry (i, j) over the rows observing both targets, so that missing cells
// are left out), each scaled by the square root of its eigenvalue, W = V_l Λ_l^½, so that W Wᵀ is the best rank-l
// approximation of C (Eckart–Young). Under the LMC f = W g with unit-variance latents, Cov[f(x)] = Σ_q w_q w_qᵀ
// (Álvarez, Rosasco & Lawrence 2012, Kernels for vector-valued functions: a review, §4.2: B_q = a_q a_qᵀ; there
// K(x, x') = Σ_q B_q k_q(x, x')), so W starts where the outputs' correlations already are, as geostatistics fits the
// coregionalisation matrices to the data's experimental covariances (Goovaerts 1997, Geostatistics for natural
// resources evaluation, ch. 4, the linear model of coregionalization) — instead of at random, which is what GPflow's
// and GPyTorch's examples do (GPflow's multi-output notebook: W = randn(P, L)), and which left the LMC behind
// independent outputs after a few hundred steps. Eigenvalues below 1e-3 of the mean variance (a rank below l, or an
// indefinite pairwise-complete C) are raised to it, so that every latent has a nonzero column. Each column's sign is
// fixed (its largest entry positive), so the start is deterministic. ok is false, and the caller draws W at random,
// when l > P, when a target has fewer than 2 observed rows, or when C is not finite.
func initMixing(d *datasets.Dataset, l int) (w *mat.Dense, ok bool) {
	if d == nil || d.Y == nil || l < 1 {
		return nil, false
	}
	n, p := d.Y.Dims()
	if l > p {
		return nil, false
	}
	c := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			var cnt int
			var mi, mj float64
			for r := range n {
				if d.IsObserved(r, i) && d.IsObserved(r, j) {
					cnt++
					mi += d.Y.At(r, i)
					mj += d.Y.At(r, j)
				}
			}
			if i == j && cnt < 2 {
				return nil, false
			}
			if cnt < 2 {
				continue // no pair observed together: no evidence of a correlation
			}
			mi, mj = mi/float64(cnt), mj/float64(cnt)
			var s float64
			for r := range n {
				if d.IsObserved(r, i) && d.IsObserved(r, j) {
					s += (d.Y.At(r, i) - mi) * (d.Y.At(r, j) - mj)
				}
			}
			v := s / float64(cnt-1)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, false
			}
			c.SetSym(i, j, v)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		return nil, false
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	floor := 1e-3 * mat.Trace(c) / float64(p)
	if !(floor > 0) {
		return nil, false
	}
	w = mat.NewDense(p, l, nil)
	for q := range l {
		k := p - 1 - q // the q-th largest eigenvalue
		s := math.Sqrt(max(vals[k], floor))
		big := 0
		for i := range p {
			if math.Abs(vecs.At(i, k)) > math.Abs(vecs.At(big, k)) {
				big = i
			}
		}
		if vecs.At(big, k) < 0 {
			s = -s
		}
		for i := range p {
			w.Set(i, q, s*vecs.At(i, k))
		}
	}
	return w, true
}

// severalOutputs reports whether te's targets are scored cell by cell (scoreRegression): several columns, or
// missing cells.
func severalOutputs(te *datasets.Dataset) bool {
	return te != nil && (te.P() > 1 || te.Observed != nil)
}

// scoreRegression fills res's regression metrics from the predictive means and standard deviations [n,P] (original
// units) at te's rows, over te's observed target cells only: RMSE of the means over those cells (and per output
// with several), and the mean per cell of the log density of the Gaussian with that mean and deviation (exact for
// a Gaussian likelihood and a single-layer model; the moment-matched approximation otherwise). One target
// without missing cells gives today's per-row metrics. Both are computed from the standard deviation and scaled
// residuals, so that they stay finite for any finite data.
func scoreRegression(res *Result, mean, sd *mat.Dense, te *datasets.Dataset) error {
	n, p := te.N(), te.P()
	if r, c := mean.Dims(); r != n || c != p {
		return fmt.Errorf("zoo: scoring: predictions [%d,%d] for targets [%d,%d]", r, c, n, p)
	}
	var resid []float64
	perOut := make([][]float64, p)
	ll := 0.0
	for i := range n {
		for j := range p {
			if !te.IsObserved(i, j) {
				continue
			}
			r := te.Y.At(i, j) - mean.At(i, j)
			z := r / sd.At(i, j)
			ll += -0.5*(math.Log(2*math.Pi)+z*z) - math.Log(sd.At(i, j))
			resid, perOut[j] = append(resid, r), append(perOut[j], r)
		}
	}
	if len(resid) == 0 {
		return fmt.Errorf("zoo: scoring: the %d test rows have no observed target", n)
	}
	rmse := rootMeanSquare(resid)
	res.TestRMSE, res.TestLL = &rmse, ll/float64(len(resid))
	if severalOutputs(te) {
		res.TestCells, res.Outputs = len(resid), p
		res.TestRMSEPerOutput, res.TestCellsPerOutput = make([]float64, p), make([]int, p)
		for j, r := range perOut {
			res.TestRMSEPerOutput[j], res.TestCellsPerOutput[j] = rootMeanSquare(r), len(r)
		}
	}
	return nil
}

// outputsLine is the Summary's line on the scored cells of a multi-output run ("" otherwise).
func (r *Result) outputsLine() string {
	if r.Outputs == 0 {
		return ""
	}
	per := make([]string, len(r.TestRMSEPerOutput))
	for j, v := range r.TestRMSEPerOutput {
		per[j] = fmt.Sprintf("%.5g", v)
		if j < len(r.TestCellsPerOutput) && r.TestCellsPerOutput[j] == 0 {
			per[j] = "— (no scored cell)"
		}
	}
	outs := fmt.Sprintf("%d outputs", r.Outputs)
	if r.Outputs == 1 {
		outs = "1 output"
	}
	s := fmt.Sprintf("  %s: test metrics over the %d observed target cells of the %d test rows (empty cells are not scored; LL per cell)", outs, r.TestCells, r.NTest)
	if len(per) > 0 && !slices.Contains(per, "") {
		s += "; RMSE per output " + strings.Join(per, ", ")
	}
	return s + "\n"
}
