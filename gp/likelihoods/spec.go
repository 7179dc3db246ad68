package likelihoods

import (
	"encoding/json"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
)

// Helpers shared by the likelihoods' files. Each likelihood's file holds its Spec kind, its Config struct (the
// structure only: trained values are Params, which model files restore after gp.BuildSpec), its Spec method and
// Builder, and one init registering the kind (gp.RegisterKind) and the family users choose by name
// (gp.RegisterLikelihood).

// decodeLeaf decodes the Config of a likelihood (which has no children); a missing Config is an error.
func decodeLeaf(kind string, raw json.RawMessage, children []any, dst any) error {
	if len(children) != 0 {
		return likConfigErr("%s takes no children, got %d", kind, len(children))
	}
	if len(raw) == 0 {
		return likConfigErr("%s: missing config", kind)
	}
	return gp.DecodeConfig(kind, raw, dst)
}

// positiveFloor returns the Floor field of p's Positive transform (0 if p has another transform).
func positiveFloor(p *graph.Param) float64 {
	if t, ok := p.Transform().(graph.Positive); ok {
		return t.Floor
	}
	return 0
}

// placeholderAbove returns a value strictly above floor for a Param whose real value the model file restores.
func placeholderAbove(floor float64) float64 { return 2*floor + 1 }

// asLikelihood returns l as a gp.Likelihood for a family's New, and a nil interface (not a typed nil) with err.
func asLikelihood[L gp.Likelihood](l L, err error) (gp.Likelihood, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
