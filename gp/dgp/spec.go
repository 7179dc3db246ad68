package dgp

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
)

// KindDGP is the kind of a deep GP's Spec (gp.Spec).
const KindDGP = "model/dgp"

func init() { gp.RegisterKind(KindDGP, buildDGP) }

var _ gp.Describer = (*DGP)(nil)

// dgpSpec is the Config of model/dgp; its children are the layers, input first, then the likelihood.
type dgpSpec struct {
	NumLayers int `json:"num_layers"`
	NumData   int `json:"num_data"`
	Samples   int `json:"samples"`
}

// Spec describes d: the number of layers, NumData and the training samples S (Config), then the layers, input
// first, and the likelihood (children). The noise source is not part of the Spec: the rebuilt deep GP draws
// its row-keyed training noise with NoiseSeed taken from o.Rng() of the gp.BuildOptions (a custom Config.Noise,
// such as FixedNoise, is not saved).
func (d *DGP) Spec() (gp.Spec, error) {
	if len(d.Layers) == 0 || d.Likelihood == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of a deep GP without layers or likelihood", ErrConfig)
	}
	children := make([]any, 0, len(d.Layers)+1)
	for _, l := range d.Layers {
		children = append(children, l)
	}
	children = append(children, d.Likelihood)
	return gp.NewSpec(KindDGP, dgpSpec{NumLayers: len(d.Layers), NumData: d.NumData, Samples: d.samples}, children...)
}

func buildDGP(raw json.RawMessage, children []any, o gp.BuildOptions) (any, error) {
	var c dgpSpec
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: %s: missing config", ErrConfig, KindDGP)
	}
	if err := gp.DecodeConfig(KindDGP, raw, &c); err != nil {
		return nil, err
	}
	if c.NumLayers < 1 || len(children) != c.NumLayers+1 {
		return nil, fmt.Errorf("%w: %s: %d children for %d layers, want the layers and a likelihood", ErrConfig, KindDGP, len(children), c.NumLayers)
	}
	if c.Samples < 1 {
		return nil, fmt.Errorf("%w: %s: %d training samples", ErrConfig, KindDGP, c.Samples)
	}
	layers := make([]gp.Layer, c.NumLayers)
	for i := range layers {
		l, err := gp.ChildAs[gp.Layer](KindDGP, children, i)
		if err != nil {
			return nil, err
		}
		layers[i] = l
	}
	lik, err := gp.ChildAs[gp.Likelihood](KindDGP, children, c.NumLayers)
	if err != nil {
		return nil, err
	}
	return New(Config{Layers: layers, Likelihood: lik, NumData: c.NumData, Samples: c.Samples, Rand: o.Rng()})
}
