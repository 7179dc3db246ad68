package vbks

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// polish maximises the candidate's collapsed bound (Titsias 2009, MATH.md §2) on (x, y) over its kernel
// hyperparameters, inducing inputs and noise variance with c.PolishIters L-BFGS iterations (none if not
// positive). The collapsed bound is max over q(u) of the local ELBO ℒ_i, so this is ℒ_i's own maximisation with
// q(u) solved in closed form; it finishes what the minibatch steps start, whose noise leaves the
// hyperparameters short of a stationary point (Adam needed ~10⁴ steps to move RQ's α by 10²). A failure is
// counted in PolishErrors and returned; the Params are then as before (train.TrainLBFGS's contract).
func (cd *Candidate) polish(x, y *mat.Dense, c LocalConfig) error {
	if c.PolishIters <= 0 {
		return nil
	}
	l := cd.layer()
	s, err := models.NewSGPRShared(l.Kernel, l.Z, cd.noise(), l.Mean, l.Jitter())
	if err == nil {
		_, err = train.TrainLBFGS(s, x, y, train.LBFGSConfig{Iters: c.PolishIters, Graph: c.Graph})
	}
	if err != nil {
		cd.PolishErrors++
	}
	return err
}

// settle takes one whole-data natural-gradient step with γ = 1 on q(u), which for a Gaussian likelihood sets
// q(u) to its optimum given the hyperparameters (train/natgrad.go): the ELBO read afterwards is Titsias'
// collapsed bound, max_q ℒ_i(q, θ).
func (cd *Candidate) settle(x, y *mat.Dense, rng *rand.Rand, c LocalConfig) error {
	exact, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{cd.layer().Q}, Gamma: 1})
	if err != nil {
		return err
	}
	_, err = train.Train(cd.Model, x, y, rng, train.Config{Iters: 1, Optimizer: frozen{}, Hooks: []train.Hook{exact}, Graph: c.Graph})
	return err
}

// frozen is an Optimizer that changes nothing (the exact q(u) step updates q through its hook alone).
type frozen struct{}

func (frozen) Step(int, []*graph.Param, [][]float64) error { return nil }

// layer is the candidate's SVGP layer (NewCandidates builds one).
func (cd *Candidate) layer() *layers.SVGP { return cd.Model.Layer.(*layers.SVGP) }

// noise is the Param of its Gaussian likelihood's variance.
func (cd *Candidate) noise() *graph.Param { return cd.Model.Likelihood.Params()[0] }
