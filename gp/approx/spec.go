package approx

import (
	"encoding/json"
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
)

// KindGP is the Spec kind of an approximated exact GP (GP.Spec).
const KindGP = "model/approx-gp"

// gpSpec is the Config of KindGP: the inference and its options (Stats aside); zero options are the defaults.
type gpSpec struct {
	Inference      string  `json:"inference"`
	LaplaceTol     float64 `json:"laplace_tol,omitempty"`
	LaplaceMaxIter int     `json:"laplace_max_iter,omitempty"`
	LaplaceCold    bool    `json:"laplace_cold,omitempty"`
	EPTol          float64 `json:"ep_tol,omitempty"`
	EPMaxSweeps    int     `json:"ep_max_sweeps,omitempty"`
	EPDamping      float64 `json:"ep_damping,omitempty"`
	EPSequential   bool    `json:"ep_sequential,omitempty"`
	EPQuadPoints   int     `json:"ep_quad_points,omitempty"`
	EPCold         bool    `json:"ep_cold,omitempty"`
}

func init() {
	gp.RegisterKind(KindGP, buildGP)
}

// Spec describes the model: its inference and options (Config), then the kernel, the likelihood and, if any,
// the mean function (children). The training data are not part of a Spec (model files store them).
func (m *GP) Spec() (gp.Spec, error) {
	if m.Kernel == nil || m.Likelihood == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of approx.GP: nil kernel or likelihood", gp.ErrConfig)
	}
	c := gpSpec{Inference: string(m.Inference), LaplaceTol: m.laplace.Tol, LaplaceMaxIter: m.laplace.MaxIter, LaplaceCold: m.laplace.Cold,
		EPTol: m.ep.Tol, EPMaxSweeps: m.ep.MaxSweeps, EPDamping: m.ep.Damping, EPSequential: m.ep.Sequential,
		EPQuadPoints: m.ep.QuadPoints, EPCold: m.ep.Cold}
	children := []any{m.Kernel, m.Likelihood}
	if m.Mean != nil {
		children = append(children, m.Mean)
	}
	return gp.NewSpec(KindGP, c, children...)
}

func buildGP(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c gpSpec
	if err := gp.DecodeConfig(KindGP, raw, &c); err != nil {
		return nil, err
	}
	inf, err := ParseInference(c.Inference)
	if err != nil {
		return nil, err
	}
	if len(children) < 2 || len(children) > 3 {
		return nil, fmt.Errorf("%w: %s needs a kernel, a likelihood and optionally a mean function, got %d children", gp.ErrConfig, KindGP, len(children))
	}
	k, err := gp.ChildAs[gp.Kernel](KindGP, children, 0)
	if err != nil {
		return nil, err
	}
	lik, err := gp.ChildAs[gp.Likelihood](KindGP, children, 1)
	if err != nil {
		return nil, err
	}
	cfg := Config{Kernel: k, Likelihood: lik, Inference: inf,
		Laplace: ops.LaplaceOptions{Tol: c.LaplaceTol, MaxIter: c.LaplaceMaxIter, Cold: c.LaplaceCold},
		EP: ops.EPOptions{Tol: c.EPTol, MaxSweeps: c.EPMaxSweeps, Damping: c.EPDamping, Sequential: c.EPSequential,
			QuadPoints: c.EPQuadPoints, Cold: c.EPCold}}
	if len(children) == 3 {
		if cfg.Mean, err = gp.ChildAs[gp.MeanFunction](KindGP, children, 2); err != nil {
			return nil, err
		}
	}
	return New(cfg)
}
