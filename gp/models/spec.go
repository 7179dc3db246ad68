package models

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Kinds of the models' Specs (gp.Spec), registered with gp.RegisterKind.
const (
	KindSVGP = "model/svgp"
	KindSGPR = "model/sgpr"
)

// sgprNoiseName and sgprZName are the names of SGPR's Params (NewSGPR).
const (
	sgprNoiseName = "likelihood.variance"
	sgprZName     = "sgpr.Z"
)

func init() {
	gp.RegisterKind(KindSVGP, buildSVGP)
	gp.RegisterKind(KindSGPR, buildSGPR)
}

// Compile-time checks that the models describe themselves.
var (
	_ gp.Describer = (*SVGP)(nil)
	_ gp.Describer = (*SGPR)(nil)
)

// svgpSpec is the Config of model/svgp; its children are the layer and the likelihood.
type svgpSpec struct {
	NumData int `json:"num_data"`
}

// sgprSpec is the Config of model/sgpr; its children are the kernel and, when HasMean, the mean function. Z
// and the noise variance are Params: only Z's size is here.
type sgprSpec struct {
	NumInducing int     `json:"num_inducing"`
	InputDim    int     `json:"input_dim"`
	Jitter      float64 `json:"jitter"`
	// JitterPolicy is gp.JitterOnFailure (with Jitter 0) or empty: a fixed Jitter, as in every file written before
	// the policy existed (gp.SpecJitterPolicy, gp.JitterFromSpec).
	JitterPolicy string `json:"jitter_policy,omitempty"`
	FixZ         bool   `json:"fix_z,omitempty"`
	HasMean      bool   `json:"has_mean,omitempty"`
}

// decodeConfig decodes a model's Config; a missing Config is an error.
func decodeConfig(kind string, raw json.RawMessage, dst any) error {
	if len(raw) == 0 {
		return fmt.Errorf("models: %w: %s: missing config", gp.ErrConfig, kind)
	}
	return gp.DecodeConfig(kind, raw, dst)
}

// Spec describes m: NumData (Config), then the layer and the likelihood (children).
func (m *SVGP) Spec() (gp.Spec, error) {
	if m.Layer == nil || m.Likelihood == nil {
		return gp.Spec{}, fmt.Errorf("models: %w: spec of SVGP: nil Layer or Likelihood", gp.ErrConfig)
	}
	return gp.NewSpec(KindSVGP, svgpSpec{NumData: m.NumData}, m.Layer, m.Likelihood)
}

func buildSVGP(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c svgpSpec
	if err := decodeConfig(KindSVGP, raw, &c); err != nil {
		return nil, err
	}
	if len(children) != 2 {
		return nil, fmt.Errorf("models: %w: %s has %d children, want 2 (layer, likelihood)", gp.ErrConfig, KindSVGP, len(children))
	}
	l, err := gp.ChildAs[gp.Layer](KindSVGP, children, 0)
	if err != nil {
		return nil, err
	}
	lik, err := gp.ChildAs[gp.Likelihood](KindSVGP, children, 1)
	if err != nil {
		return nil, err
	}
	if latent, err := lik.LatentDim(1); err == nil && latent > 1 && !fitsLatents(lik, latent, l.OutputDim()) {
		// Multiclass likelihoods: K latent functions for one label column; several latents per target column (the
		// heteroscedastic Gaussian: 2 per target) for P target columns.
		return nil, fmt.Errorf("models: %w: %s: layer has %d outputs, the likelihood needs %d (per target column)", gp.ErrConfig, KindSVGP, l.OutputDim(), latent)
	}
	return NewSVGP(SVGPConfig{Layer: l, Likelihood: lik, NumData: c.NumData})
}

// Spec describes s: Z's size, the jitter and its policy (a fixed jitter's Config is that of earlier versions)
// and whether Z is frozen (Config), then the kernel and the mean function if any (children). The training data
// are not part of a Spec (model files store them).
func (s *SGPR) Spec() (gp.Spec, error) {
	if s.Kernel == nil || s.Z == nil || s.Noise == nil {
		return gp.Spec{}, fmt.Errorf("models: %w: spec of SGPR: nil Kernel, Z or Noise", gp.ErrConfig)
	}
	if s.Z.Name() != sgprZName || s.Noise.Name() != sgprNoiseName || s.Noise.Transform() != (graph.Positive{}) {
		return gp.Spec{}, fmt.Errorf("models: %w: spec of SGPR: Params %v and %v are not NewSGPR's", gp.ErrConfig, s.Z, s.Noise)
	}
	sh := s.Z.Shape()
	c := sgprSpec{NumInducing: sh[0], InputDim: sh[1], Jitter: s.jitter, JitterPolicy: gp.SpecJitterPolicy(s.jitter),
		FixZ: !s.Z.Trainable(), HasMean: s.Mean != nil}
	children := []any{s.Kernel}
	if s.Mean != nil {
		children = append(children, s.Mean)
	}
	return gp.NewSpec(KindSGPR, c, children...)
}

func buildSGPR(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c sgprSpec
	if err := decodeConfig(KindSGPR, raw, &c); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindSGPR, c.NumInducing, c.InputDim); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindSGPR, c.NumInducing, c.NumInducing); err != nil {
		return nil, err
	}
	jitter, err := gp.JitterFromSpec(KindSGPR, c.JitterPolicy, c.Jitter)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	want := 1
	if c.HasMean {
		want = 2
	}
	if len(children) != want {
		return nil, fmt.Errorf("models: %w: %s has %d children, want %d (kernel, mean function if has_mean)", gp.ErrConfig, KindSGPR, len(children), want)
	}
	k, err := gp.ChildAs[gp.Kernel](KindSGPR, children, 0)
	if err != nil {
		return nil, err
	}
	sc := SGPRConfig{Kernel: k, Z: mat.NewDense(c.NumInducing, c.InputDim, nil), Jitter: jitter, FixZ: c.FixZ}
	if c.HasMean {
		if sc.Mean, err = gp.ChildAs[gp.MeanFunction](KindSGPR, children, 1); err != nil {
			return nil, err
		}
	}
	return NewSGPR(sc)
}

// fitsLatents reports whether lik, with latent > 1 latent functions for one target column, takes out latent
// functions for some number P ≥ 1 of target columns (LatentDim(P) = out).
func fitsLatents(lik gp.Likelihood, latent, out int) bool {
	for p := 1; p*latent <= out; p++ {
		if q, err := lik.LatentDim(p); err == nil && q == out {
			return true
		}
	}
	return false
}
