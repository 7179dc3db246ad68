package gp

import (
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
)

// Jitter policies of K_uu, the inducing-input covariance that SGPR (package models) and the coupled SVGP layer
// (package layers, and the HYBRID and ORTH layers and ADVGP built on it) factorise. A model holds one fixed
// jitter j ≥ 0; its Spec records the policy in the Config field "jitter_policy" beside "jitter".
const (
	// JitterFixed (j > 0) adds j·I to K_uu before every factorisation, whether or not K_uu needs it. It was the
	// only policy before issue 31 (j = 1e-6 by default): a Spec without "jitter_policy" means it, so every model
	// file that stores a jitter loads and predicts exactly as before, and the Spec of such a model omits the
	// field (it is byte for byte the Spec earlier versions wrote).
	JitterFixed = "fixed"
	// JitterOnFailure (j = 0), the default of newly built models, factorises K_uu as it is: the graph's safe
	// Cholesky (ops.JitterPolicy, set by graph.Options.Jitter) adds jitter only when the plain factorisation
	// fails, 1e-8·mean(diag K_uu) first by default, escalating tenfold, and counts every jittered retry
	// (graph.Program.CholeskyStats, train.Result.Cholesky). The collapsed bound and the ELBO are then those of
	// K_uu itself whenever it factorises, as in GPyTorch. Its Spec records "jitter_policy": "on-failure" with
	// "jitter": 0 (a version that predates the policy refuses such a file instead of misreading it).
	JitterOnFailure = "on-failure"
)

// JitterPolicyOf returns the name of the policy of a model's fixed jitter j: JitterFixed when j > 0,
// JitterOnFailure when j is 0.
func JitterPolicyOf(j float64) string {
	if j > 0 {
		return JitterFixed
	}
	return JitterOnFailure
}

// SpecJitterPolicy returns the "jitter_policy" a Spec records for a model's fixed jitter j: "" (the field is
// omitted, which means JitterFixed) when j > 0, JitterOnFailure when j is 0.
func SpecJitterPolicy(j float64) string {
	if j > 0 {
		return ""
	}
	return JitterOnFailure
}

// JitterFromSpec checks the jitter fields of a Spec of kind and returns the fixed jitter the model is built with
// (0: JitterOnFailure). policy "" or JitterFixed needs a finite jitter > 0; JitterOnFailure needs jitter 0. Errors
// wrap ErrConfig.
func JitterFromSpec(kind, policy string, jitter float64) (float64, error) {
	switch policy {
	case "", JitterFixed:
		if !(jitter > 0) || math.IsInf(jitter, 1) {
			return 0, fmt.Errorf("%w: %s: jitter %v not > 0 (jitter policy %q)", ErrConfig, kind, jitter, JitterFixed)
		}
		return jitter, nil
	case JitterOnFailure:
		if jitter != 0 {
			return 0, fmt.Errorf("%w: %s: jitter %v with jitter policy %q (want 0)", ErrConfig, kind, jitter, JitterOnFailure)
		}
		return 0, nil
	}
	return 0, fmt.Errorf("%w: %s: unknown jitter policy %q (want %q or %q)", ErrConfig, kind, policy, JitterFixed, JitterOnFailure)
}

// CheckJitter returns an error wrapping ErrConfig unless j is a valid fixed jitter: 0 (JitterOnFailure) or finite
// and > 0 (JitterFixed). what names the caller in the message.
func CheckJitter(what string, j float64) error {
	if j < 0 || math.IsNaN(j) || math.IsInf(j, 0) {
		return fmt.Errorf("%w: %s: jitter %g (want 0, jitter on failure only, or a finite fixed jitter > 0)", ErrConfig, what, j)
	}
	return nil
}

// CholKuu returns the lower Cholesky factor of kuu [M,M] under the fixed jitter j: chol(kuu + j·I), j a scalar leaf
// named name, when j > 0 (JitterFixed); chol(kuu) itself when j is 0 (JitterOnFailure: the graph's Cholesky adds
// jitter only if the plain factorisation fails, and counts it).
func CholKuu(g *graph.Graph, kuu *graph.Node, j float64, name string) *graph.Node {
	if j > 0 {
		kuu = g.AddDiag(kuu, g.Scalar(name, j))
	}
	return g.Cholesky(kuu)
}
