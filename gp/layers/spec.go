package layers

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Kinds of the layers' Specs (gp.Spec), registered with gp.RegisterKind.
const (
	KindSVGP         = "layer/svgp"
	KindDecoupled    = "layer/decoupled"
	KindDecoupledGSE = "layer/decoupled-gse"
	KindHybrid       = "layer/hybrid"
	KindOrth         = "layer/orth"
)

func init() {
	gp.RegisterKind(KindSVGP, buildSVGP)
	gp.RegisterKind(KindDecoupled, buildDecoupled)
	gp.RegisterKind(KindDecoupledGSE, buildDecoupledGSE)
	gp.RegisterKind(KindHybrid, func(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
		beta, zg, ag, err := buildBetaGamma(KindHybrid, raw, children)
		if err != nil {
			return nil, err
		}
		return &Hybrid{Beta: beta, Zgamma: zg, Agamma: ag}, nil
	})
	gp.RegisterKind(KindOrth, func(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
		beta, zg, ag, err := buildBetaGamma(KindOrth, raw, children)
		if err != nil {
			return nil, err
		}
		return &Orth{Beta: beta, Zgamma: zg, Agamma: ag}, nil
	})
}

// Compile-time checks that every layer describes itself.
var (
	_ gp.Describer = (*SVGP)(nil)
	_ gp.Describer = (*Decoupled)(nil)
	_ gp.Describer = (*DecoupledGSE)(nil)
	_ gp.Describer = (*Hybrid)(nil)
	_ gp.Describer = (*Orth)(nil)
)

// Configs of the kinds: structure only. Inducing inputs, bases, q(u), weights and factors are Params (only
// their sizes are here); model files restore their values after gp.BuildSpec. Initialisation-only options
// (QSqrtScale, LBScale, SPrior, Weights, CAlpha, CBeta) are not recorded: they only set initial values.

// svgpSpec is the Config of layer/svgp; its children are the kernel and, when HasMean, the mean function.
type svgpSpec struct {
	Name        string  `json:"name"`
	NumInducing int     `json:"num_inducing"`
	InputDim    int     `json:"input_dim"`
	OutputDim   int     `json:"output_dim"`
	Unwhitened  bool    `json:"unwhitened,omitempty"`
	QDiag       bool    `json:"q_diag,omitempty"`
	Jitter      float64 `json:"jitter"`
	// JitterPolicy is gp.JitterOnFailure (with Jitter 0) or empty: a fixed Jitter, as in every file written before
	// the policy existed (gp.SpecJitterPolicy, gp.JitterFromSpec).
	JitterPolicy string `json:"jitter_policy,omitempty"`
	FixZ         bool   `json:"fix_z,omitempty"`
	HasMean      bool   `json:"has_mean,omitempty"`
}

// decoupledSpec is the Config of layer/decoupled (and the base of layer/decoupled-gse); its children are the
// kernel and, when HasMean, the mean function.
type decoupledSpec struct {
	Name           string  `json:"name"`
	NumMeanBases   int     `json:"num_mean_bases"`
	NumCovBases    int     `json:"num_cov_bases"`
	InputDim       int     `json:"input_dim"`
	OutputDim      int     `json:"output_dim"`
	Jitter         float64 `json:"jitter"`
	MeanForm       string  `json:"mean_form"`
	CovForm        string  `json:"cov_form"`
	Jacobi         bool    `json:"jacobi,omitempty"`
	MeanBasisBatch int     `json:"mean_basis_batch,omitempty"`
	FixZalpha      bool    `json:"fix_zalpha,omitempty"`
	FixZbeta       bool    `json:"fix_zbeta,omitempty"`
	HasMean        bool    `json:"has_mean,omitempty"`
}

// decoupledGSESpec is the Config of layer/decoupled-gse.
type decoupledGSESpec struct {
	decoupledSpec
	FixCAlpha bool `json:"fix_calpha,omitempty"`
	FixCBeta  bool `json:"fix_cbeta,omitempty"`
}

// gammaSpec is the Config of layer/hybrid and layer/orth; their one child is the wrapped SVGP β layer.
type gammaSpec struct {
	NumGamma  int  `json:"num_gamma"`
	FixZgamma bool `json:"fix_zgamma,omitempty"`
}

// Spec describes l: its name, sizes, whitening, q's form, jitter and its policy (a fixed jitter's Spec is that of
// earlier versions) and whether Z is frozen; the children are the kernel and the mean function (if any).
func (l *SVGP) Spec() (gp.Spec, error) {
	c := svgpSpec{Name: l.name, NumInducing: l.Q.M(), InputDim: l.din, OutputDim: l.dout, Unwhitened: !l.whiten,
		QDiag: l.Q.Diag, Jitter: l.jitter, JitterPolicy: gp.SpecJitterPolicy(l.jitter), FixZ: !l.Z.Trainable(), HasMean: l.Mean != nil}
	return gp.NewSpec(KindSVGP, c, withMean([]any{l.Kernel}, l.Mean)...)
}

// withMean appends the mean function (if any) to children.
func withMean(children []any, m gp.MeanFunction) []any {
	if m != nil {
		children = append(children, m)
	}
	return children
}

// kernelAndMean returns the children of a layer: the kernel of input width din and, when hasMean, a mean
// function of output width dout.
func kernelAndMean(kind string, children []any, hasMean bool, din, dout int) (gp.Kernel, gp.MeanFunction, error) {
	want := 1
	if hasMean {
		want = 2
	}
	if len(children) != want {
		return nil, nil, fmt.Errorf("%w: %s has %d children, want %d (kernel, mean function if has_mean)", ErrConfig, kind, len(children), want)
	}
	k, err := gp.ChildAs[gp.Kernel](kind, children, 0)
	if err != nil {
		return nil, nil, err
	}
	if k.InputDim() != din {
		return nil, nil, fmt.Errorf("%w: %s: kernel of input width %d, layer %d", ErrConfig, kind, k.InputDim(), din)
	}
	if !hasMean {
		return k, nil, nil
	}
	m, err := gp.ChildAs[gp.MeanFunction](kind, children, 1)
	if err != nil {
		return nil, nil, err
	}
	return k, m, nil
}

// decodeConfig decodes a layer's Config; a missing Config is an error.
func decodeConfig(kind string, raw json.RawMessage, dst any) error {
	if len(raw) == 0 {
		return fmt.Errorf("%w: %s: missing config", ErrConfig, kind)
	}
	return gp.DecodeConfig(kind, raw, dst)
}

func buildSVGP(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c svgpSpec
	if err := decodeConfig(KindSVGP, raw, &c); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindSVGP, c.NumInducing, c.InputDim); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindSVGP, c.NumInducing, c.NumInducing, c.OutputDim); err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, fmt.Errorf("%w: %s: empty name", ErrConfig, KindSVGP)
	}
	jitter, err := gp.JitterFromSpec(KindSVGP, c.JitterPolicy, c.Jitter)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	k, m, err := kernelAndMean(KindSVGP, children, c.HasMean, c.InputDim, c.OutputDim)
	if err != nil {
		return nil, err
	}
	return NewSVGP(SVGPConfig{Name: c.Name, Kernel: k, Z: mat.NewDense(c.NumInducing, c.InputDim, nil), OutputDim: c.OutputDim,
		Mean: m, Unwhitened: c.Unwhitened, QDiag: c.QDiag, Jitter: jitter, FixZ: c.FixZ})
}

// spec returns the Config of l.
func (l *Decoupled) spec() decoupledSpec {
	return decoupledSpec{Name: l.name, NumMeanBases: l.ma, NumCovBases: l.mb, InputDim: l.din, OutputDim: l.dout,
		Jitter: l.jitter, MeanForm: l.meanForm.String(), CovForm: l.covForm.String(), Jacobi: l.jacobi,
		MeanBasisBatch: l.batch, FixZalpha: !l.Zalpha.Trainable(), FixZbeta: !l.Zbeta.Trainable(), HasMean: l.Mean != nil}
}

// Spec describes l: its name, basis counts, widths, jitter, mean and covariance forms, Jacobi, the mean-basis
// batch and frozen bases; the children are the kernel and the mean function (if any). The generator of the
// mean-basis subsets is not part of the Spec: the rebuilt layer draws from gp.BuildOptions.Rng().
func (l *Decoupled) Spec() (gp.Spec, error) {
	return gp.NewSpec(KindDecoupled, l.spec(), withMean([]any{l.Kernel}, l.Mean)...)
}

// parseForms returns the MeanForm and CovForm named by their String forms.
func parseForms(kind, mf, cf string) (MeanForm, CovForm, error) {
	var m MeanForm
	var c CovForm
	switch mf {
	case MeanCB.String():
		m = MeanCB
	case MeanGP.String():
		m = MeanGP
	case MeanGPCentred.String():
		m = MeanGPCentred
	default:
		return 0, 0, fmt.Errorf("%w: %s: unknown mean form %q", ErrConfig, kind, mf)
	}
	switch cf {
	case CovB.String():
		c = CovB
	case CovS.String():
		c = CovS
	case CovSWhitened.String():
		c = CovSWhitened
	default:
		return 0, 0, fmt.Errorf("%w: %s: unknown covariance form %q", ErrConfig, kind, cf)
	}
	return m, c, nil
}

// decoupledConfig validates c and returns the DecoupledConfig that rebuilds the layer it describes.
func decoupledConfig(kind string, c decoupledSpec, children []any, o gp.BuildOptions) (DecoupledConfig, error) {
	if err := gp.CheckSpecDims(kind, c.NumMeanBases, c.InputDim); err != nil {
		return DecoupledConfig{}, err
	}
	if err := gp.CheckSpecDims(kind, c.NumCovBases, c.NumCovBases, c.OutputDim); err != nil {
		return DecoupledConfig{}, err
	}
	if err := gp.CheckSpecDims(kind, c.NumMeanBases, c.OutputDim); err != nil {
		return DecoupledConfig{}, err
	}
	if c.Name == "" || !(c.Jitter > 0) {
		return DecoupledConfig{}, fmt.Errorf("%w: %s: empty name or jitter %v not > 0", ErrConfig, kind, c.Jitter)
	}
	mf, cf, err := parseForms(kind, c.MeanForm, c.CovForm)
	if err != nil {
		return DecoupledConfig{}, err
	}
	k, m, err := kernelAndMean(kind, children, c.HasMean, c.InputDim, c.OutputDim)
	if err != nil {
		return DecoupledConfig{}, err
	}
	dc := DecoupledConfig{Name: c.Name, Kernel: k, Zalpha: mat.NewDense(c.NumMeanBases, c.InputDim, nil),
		Zbeta: mat.NewDense(c.NumCovBases, c.InputDim, nil), OutputDim: c.OutputDim, Mean: m, Jitter: c.Jitter,
		FixZalpha: c.FixZalpha, FixZbeta: c.FixZbeta, MeanForm: mf, CovForm: cf, Jacobi: c.Jacobi, MeanBasisBatch: c.MeanBasisBatch}
	if c.MeanBasisBatch > 0 {
		dc.Rand = o.Rng()
	}
	return dc, nil
}

func buildDecoupled(raw json.RawMessage, children []any, o gp.BuildOptions) (any, error) {
	var c decoupledSpec
	if err := decodeConfig(KindDecoupled, raw, &c); err != nil {
		return nil, err
	}
	dc, err := decoupledConfig(KindDecoupled, c, children, o)
	if err != nil {
		return nil, err
	}
	return NewDecoupled(dc)
}

// Spec describes l like Decoupled.Spec, plus whether the basis length-scale factors are frozen (their values
// are Params).
func (l *DecoupledGSE) Spec() (gp.Spec, error) {
	c := decoupledGSESpec{decoupledSpec: l.Decoupled.spec(), FixCAlpha: !l.CAlpha.Trainable(), FixCBeta: !l.CBeta.Trainable()}
	return gp.NewSpec(KindDecoupledGSE, c, withMean([]any{l.Kernel}, l.Mean)...)
}

func buildDecoupledGSE(raw json.RawMessage, children []any, o gp.BuildOptions) (any, error) {
	var c decoupledGSESpec
	if err := decodeConfig(KindDecoupledGSE, raw, &c); err != nil {
		return nil, err
	}
	dc, err := decoupledConfig(KindDecoupledGSE, c.decoupledSpec, children, o)
	if err != nil {
		return nil, err
	}
	return NewDecoupledGSE(DecoupledGSEConfig{DecoupledConfig: dc, FixCAlpha: c.FixCAlpha, FixCBeta: c.FixCBeta})
}

// Spec describes h: the number of γ bases and whether they are frozen; its one child is the wrapped SVGP β
// layer.
func (h *Hybrid) Spec() (gp.Spec, error) {
	return gammaLayerSpec(KindHybrid, h.Beta, h.Zgamma)
}

// Spec describes o: the number of γ bases and whether they are frozen; its one child is the wrapped SVGP β
// layer.
func (o *Orth) Spec() (gp.Spec, error) {
	return gammaLayerSpec(KindOrth, o.Beta, o.Zgamma)
}

func gammaLayerSpec(kind string, beta *SVGP, zg *graph.Param) (gp.Spec, error) {
	if beta == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of %s: nil β layer", ErrConfig, kind)
	}
	c := gammaSpec{NumGamma: gammaRows(zg)}
	if zg != nil {
		c.FixZgamma = !zg.Trainable()
	}
	return gp.NewSpec(kind, c, beta)
}

// buildBetaGamma returns the β layer (the one child) and new γ Params named and shaped as newBetaGamma makes
// them (nil when there are no γ bases).
func buildBetaGamma(kind string, raw json.RawMessage, children []any) (*SVGP, *graph.Param, *graph.Param, error) {
	var c gammaSpec
	if err := decodeConfig(kind, raw, &c); err != nil {
		return nil, nil, nil, err
	}
	if len(children) != 1 {
		return nil, nil, nil, fmt.Errorf("%w: %s has %d children, want 1 (the SVGP β layer)", ErrConfig, kind, len(children))
	}
	beta, err := gp.ChildAs[*SVGP](kind, children, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	if c.NumGamma < 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s: %d γ bases", ErrConfig, kind, c.NumGamma)
	}
	if c.NumGamma == 0 {
		return beta, nil, nil, nil
	}
	if err := gp.CheckSpecDims(kind, c.NumGamma, beta.InputDim()); err != nil {
		return nil, nil, nil, err
	}
	if err := gp.CheckSpecDims(kind, c.NumGamma, beta.OutputDim()); err != nil {
		return nil, nil, nil, err
	}
	zg, err := graph.NewParam(beta.name+".Zgamma", make([]float64, c.NumGamma*beta.InputDim()), graph.Identity{}, c.NumGamma, beta.InputDim())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s γ bases: %w", ErrConfig, kind, err)
	}
	zg.SetTrainable(!c.FixZgamma)
	ag, err := graph.NewParam(beta.name+".Agamma", make([]float64, c.NumGamma*beta.OutputDim()), graph.Identity{}, c.NumGamma, beta.OutputDim())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s γ weights: %w", ErrConfig, kind, err)
	}
	return beta, zg, ag, nil
}
