package gp

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
)

// LikelihoodFamily is a likelihood users choose by name: `gpzoo train --likelihood NAME`, zoo.CustomConfig and
// anything else that lists likelihoods read the families registered with RegisterLikelihood, so a registered
// likelihood is offered everywhere at once.
type LikelihoodFamily struct {
	// Name is the name users give (lower case, no spaces or commas), e.g. "poisson".
	Name string
	// Kind is the Spec kind of the likelihoods New returns, registered with RegisterKind (first: RegisterLikelihood
	// panics otherwise), so that model files rebuild them.
	Kind string
	// Doc is one line for --help: what the targets are and what the family assumes.
	Doc string
	// Classes: the targets are class labels, read as class indices 0..K−1 (LikelihoodOptions.Classes = K).
	Classes bool
	// RawTargets: the targets are modelled in their own units and never standardised (counts, say). Real targets
	// of other families are standardised on the training rows; class labels never are.
	RawTargets bool
	// MissingTargets: the family's expected log density is a sum over the target columns, one latent function
	// each, so a missing target cell (several targets, an empty cell) can be left out of it
	// (likelihoods.Masked); other families refuse missing targets.
	MissingTargets bool
	// CheckTarget, when set, refuses a target value the likelihood cannot model (a negative count, say) with an
	// error saying what it wants; callers add the row and column. Non-finite values are refused before it.
	CheckTarget func(y float64) error
	// New returns a fresh likelihood with its initial parameters.
	New func(o LikelihoodOptions) (Likelihood, error)
}

// LikelihoodOptions are what a caller knows when it builds a likelihood of a family.
type LikelihoodOptions struct {
	// Outputs is P, the number of observed target columns (≥ 1).
	Outputs int
	// Classes is K, the number of classes of a class-label target (Classes families); 0 otherwise.
	Classes int
	// NoiseVariance is the initial noise variance of a Gaussian-noise family (0: the family's default).
	NoiseVariance float64
	// Rand draws the Monte-Carlo numbers of a likelihood that samples (nil: Rng's fixed seed). Such a likelihood
	// implements WithRand(*rand.Rand) (Likelihood, error), so that prediction can use a generator of its own.
	Rand *rand.Rand
}

// Rng returns o.Rand, or a new PCG(1, 2) source when it is nil (as BuildOptions.Rng).
func (o LikelihoodOptions) Rng() *rand.Rand {
	if o.Rand != nil {
		return o.Rand
	}
	return rand.New(rand.NewPCG(1, 2))
}

var (
	likelihoodsMu sync.RWMutex
	likelihoodFam = map[string]LikelihoodFamily{}
)

// RegisterLikelihood registers f under f.Name. Packages call it from init, after registering f.Kind with
// RegisterKind. It panics (a programming error, not a data error) for an empty name, a name that is not lower
// case or holds a space or comma, a name registered twice, a nil New, or a Kind RegisterKind does not know.
func RegisterLikelihood(f LikelihoodFamily) {
	likelihoodsMu.Lock()
	defer likelihoodsMu.Unlock()
	if f.Name == "" || f.New == nil {
		panic("gp: RegisterLikelihood: empty name or nil New")
	}
	if f.Name != strings.ToLower(f.Name) || strings.ContainsAny(f.Name, " \t\n,") {
		panic("gp: RegisterLikelihood: name " + f.Name + " is not lower case without spaces or commas")
	}
	if _, dup := likelihoodFam[f.Name]; dup {
		panic("gp: RegisterLikelihood: likelihood " + f.Name + " registered twice")
	}
	kindsMu.RLock()
	_, known := kinds[f.Kind]
	kindsMu.RUnlock()
	if !known {
		panic("gp: RegisterLikelihood: " + f.Name + "'s kind " + f.Kind + " is not registered (call RegisterKind first)")
	}
	likelihoodFam[f.Name] = f
}

// LikelihoodFamilies returns the registered likelihood families, sorted by name.
func LikelihoodFamilies() []LikelihoodFamily {
	likelihoodsMu.RLock()
	defer likelihoodsMu.RUnlock()
	out := make([]LikelihoodFamily, 0, len(likelihoodFam))
	for _, f := range likelihoodFam {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupLikelihood returns the family registered under name (names are lower case; name is matched exactly).
func LookupLikelihood(name string) (LikelihoodFamily, bool) {
	likelihoodsMu.RLock()
	defer likelihoodsMu.RUnlock()
	f, ok := likelihoodFam[name]
	return f, ok
}
