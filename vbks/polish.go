package vbks

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// polish maximises the candidate's collapsed bound (Titsias 2009, MATH.md §2) on (x, y) over its kernel
// hyperparameters, inducing inputs and noise variance with c.PolishIters L-BFGS iterations (none if 0). The
// collapsed bound is max over q(u) of the local ELBO ℒ_i, so this is ℒ_i's own maximisation with q(u) solved
// in closed form; it finishes what the minibatch steps start, whose noise leaves the hyperparameters short of
// a stationary point (Adam needed ~10⁴ steps to move RQ's α by 10²). If L-BFGS fails, the Params are as
// before and the error is returned.
func (cd *Candidate) polish(x, y *mat.Dense, c LocalConfig) error {
	if c.PolishIters <= 0 {
		return nil
	}
	l := cd.Model.Layer.(*layers.SVGP)
	noise := cd.Model.Likelihood.(*likelihoods.Gaussian).Params()[0]
	s, err := models.NewSGPRShared(l.Kernel, l.Z, noise, l.Mean, l.Jitter())
	if err != nil {
		return err
	}
	ps := cd.Model.Params()
	before := snapshot(ps)
	if _, err := train.TrainLBFGS(s, x, y, train.LBFGSConfig{Iters: c.PolishIters, Graph: c.Graph}); err != nil {
		restore(ps, before)
		return err
	}
	return nil
}

// settle takes one whole-data natural-gradient step with γ = 1 on q(u), which for a Gaussian likelihood sets
// q(u) to its optimum given the hyperparameters (train/natgrad.go): the ELBO read afterwards is Titsias'
// collapsed bound, max_q ℒ_i(q, θ).
func (cd *Candidate) settle(x, y *mat.Dense, rng *rand.Rand, c LocalConfig) error {
	q := cd.Model.Layer.(*layers.SVGP).Q
	exact, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 1})
	if err != nil {
		return err
	}
	_, err = train.Train(cd.Model, x, y, rng, train.Config{Iters: 1, Optimizer: frozen{}, Hooks: []train.Hook{exact}, Graph: c.Graph})
	return err
}

// frozen is an Optimizer that changes nothing (the exact q(u) step updates q through its hook alone).
type frozen struct{}

func (frozen) Step(int, []*graph.Param, [][]float64) error { return nil }

func snapshot(ps []*graph.Param) [][]float64 {
	s := make([][]float64, len(ps))
	for i, p := range ps {
		s[i] = append([]float64(nil), p.Raw()...)
	}
	return s
}

func restore(ps []*graph.Param, s [][]float64) {
	for i, p := range ps {
		copy(p.Raw(), s[i])
	}
}
