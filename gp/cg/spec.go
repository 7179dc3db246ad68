package cg

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// Kind is the Spec kind of GPR.
const Kind = "model/gpr-cg"

// spec is GPR's Config in a Spec: the noise floor and every solver, block and prediction setting.
type spec struct {
	NoiseFloor     float64 `json:"noise_floor,omitempty"`
	Tol            float64 `json:"cg_tol"`
	MaxIters       int     `json:"cg_max_iters"`
	MinIters       int     `json:"cg_min_iters"`
	Probes         int     `json:"probes"`
	Probe          string  `json:"probe"`
	Lanczos        int     `json:"lanczos"`
	PrecondRank    int     `json:"precond_rank"`
	PrecondMinRows int     `json:"precond_min_rows"`
	// MaxPrecondRank is ops.CGConfig.MaxPrecondRank when it is not the default (absent: the default, also in files
	// written before it, whose Spec is then saved again unchanged).
	MaxPrecondRank int     `json:"max_precond_rank,omitempty"`
	Seed           uint64  `json:"seed"`
	Strict         bool    `json:"strict,omitempty"`
	Block          int     `json:"block"`
	Memory         int64   `json:"memory"`
	LOVERank       int     `json:"love_rank"`
	LOVEPrecond    int     `json:"love_precond_rank"`
	PredictTol     float64 `json:"predict_tol"`
	ExactVariance  bool    `json:"exact_variance,omitempty"`
	// PredictPrecond is Config.PredictPrecondRank; absent (files written before it, or a negative rank): the
	// rule before it, so those files predict as they did.
	PredictPrecond *int `json:"predict_precond_rank,omitempty"`
	// Replicates are those of collapsed training data (Config.Replicates; absent: none).
	Replicates *gp.Replicates `json:"replicates,omitempty"`
}

func init() {
	gp.RegisterKind(Kind, func(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
		var c spec
		if err := gp.DecodeConfig(Kind, raw, &c); err != nil {
			return nil, err
		}
		if math.IsNaN(c.NoiseFloor) || math.IsInf(c.NoiseFloor, 0) || c.NoiseFloor < 0 {
			return nil, fmt.Errorf("%w: %s: noise floor %v must be finite and ≥ 0", gp.ErrConfig, Kind, c.NoiseFloor)
		}
		if len(children) < 1 || len(children) > 2 {
			return nil, fmt.Errorf("%w: %s needs a kernel and optionally a mean function, got %d children", gp.ErrConfig, Kind, len(children))
		}
		k, err := gp.ChildAs[gp.Kernel](Kind, children, 0)
		if err != nil {
			return nil, err
		}
		cfg := Config{Kernel: k, NoiseFloor: c.NoiseFloor, LOVERank: c.LOVERank, LOVEPrecondRank: c.LOVEPrecond, PredictTol: c.PredictTol, ExactVariance: c.ExactVariance,
			PredictPrecondRank: -1, Replicates: c.Replicates,
			Blocks: BlocksOptions{Block: c.Block, Memory: c.Memory},
			Solver: ops.CGConfig{Tol: c.Tol, MaxIters: c.MaxIters, MinIters: c.MinIters, Probes: c.Probes, Probe: c.Probe, Lanczos: c.Lanczos,
				PrecondRank: c.PrecondRank, PrecondMinRows: c.PrecondMinRows, MaxPrecondRank: c.MaxPrecondRank, Seed: c.Seed, Strict: c.Strict}}
		if c.PredictPrecond != nil {
			if *c.PredictPrecond < 0 {
				return nil, fmt.Errorf("%w: %s: prediction preconditioner rank %d must be ≥ 0 (absent: the LOVE and training ranks)", gp.ErrConfig, Kind, *c.PredictPrecond)
			}
			cfg.PredictPrecondRank = *c.PredictPrecond
		}
		if len(children) == 2 {
			if cfg.Mean, err = gp.ChildAs[gp.MeanFunction](Kind, children, 1); err != nil {
				return nil, err
			}
		}
		return NewGPR(cfg)
	})
}

// Spec describes the model: its settings (Config), then the kernel and, if any, the mean function (children).
// The training data and the prediction cache are not part of a Spec (model files store them).
func (m *GPR) Spec() (gp.Spec, error) {
	if m.Kernel == nil || m.Noise == nil {
		return gp.Spec{}, fmt.Errorf("%w: spec of gp/cg.GPR: nil Kernel or Noise", gp.ErrConfig)
	}
	pos, ok := m.Noise.Transform().(graph.Positive)
	if !ok || m.Noise.Name() != noiseName {
		return gp.Spec{}, fmt.Errorf("%w: spec of gp/cg.GPR: the noise Param %s is not a Positive %q", gp.ErrConfig, m.Noise, noiseName)
	}
	s, b := m.cfg.Solver, m.cfg.Blocks
	c := spec{NoiseFloor: pos.Floor, Tol: s.Tol, MaxIters: s.MaxIters, MinIters: s.MinIters, Probes: s.Probes, Probe: s.Probe, Lanczos: s.Lanczos,
		PrecondRank: s.PrecondRank, PrecondMinRows: s.PrecondMinRows, Seed: s.Seed, Strict: s.Strict, Block: b.Block, Memory: b.Memory,
		LOVERank: m.cfg.LOVERank, LOVEPrecond: m.cfg.LOVEPrecondRank, PredictTol: m.cfg.PredictTol, ExactVariance: m.cfg.ExactVariance,
		Replicates: m.cfg.Replicates}
	if s.MaxPrecondRank != ops.DefaultMaxPrecondRank {
		c.MaxPrecondRank = s.MaxPrecondRank
	}
	if r := m.cfg.PredictPrecondRank; r >= 0 {
		c.PredictPrecond = &r
	}
	children := []any{m.Kernel}
	if m.Mean != nil {
		children = append(children, m.Mean)
	}
	return gp.NewSpec(Kind, c, children...)
}

// Names of the prediction cache's entries (gp.Cached).
const (
	cacheKey   = "params" // the raw parameter values the cache belongs to
	cacheAlpha = "alpha"  // α [N,P]
	cacheLOVE  = "love"   // Rᵀ [N,c]
	cacheSolve = "solve"  // [iterations, relative residual] of α's solve
	// cacheDirect marks a direct cache: [why (1: α's CG solve missed, 2: LOVE's check failed), jitter]. The file
	// holds α but not K̂'s factor (N² values): SetPredictionCache factorises K̂ again.
	cacheDirect = "direct"
	cacheCheck  = "love_check" // [rows checked, rows exceeded] of LOVE's check (GPR.LOVECheck)
)

// directCodes are the file's codes of predCache.direct.
var directCodes = map[string]float64{directCGMissed: 1, directLOVEExceeds: 2}

// PredictionCache returns α, the LOVE cache and the parameters they belong to, computing them first if they are
// not current (gp.Cached: model files store them, so that a loaded model predicts without solving).
func (m *GPR) PredictionCache() (map[string][]float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.prepareLocked(); err != nil {
		return nil, err
	}
	c := m.cache
	out := map[string][]float64{cacheKey: slices.Clone(c.key), cacheAlpha: slices.Clone(c.alpha), cacheSolve: {float64(c.iters), c.resid}}
	if c.love != nil {
		out[cacheLOVE] = slices.Clone(c.love)
	}
	if c.direct != "" {
		out[cacheDirect] = []float64{directCodes[c.direct], c.jitter}
	}
	if c.loveChecked > 0 {
		out[cacheCheck] = []float64{float64(c.loveChecked), float64(c.loveExceeded)}
	}
	return out, nil
}

// SetPredictionCache restores what PredictionCache returned, after the parameters and the training data: it must
// belong to the current parameters (bit for bit), fit the data's shape and be finite. A direct cache's factor is
// computed again (n³/3 flops) where it fits the memory budget; where it does not, the LOVE cache is built instead
// and counted as a warning (PredictWarnings), as Prepare would.
func (m *GPR) SetPredictionCache(c map[string][]float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, y := m.data.Data()
	if x == nil {
		return fmt.Errorf("gp/cg: a prediction cache without training data")
	}
	n, p := y.Dims()
	for name := range c {
		switch name {
		case cacheKey, cacheAlpha, cacheLOVE, cacheSolve, cacheDirect, cacheCheck:
		default:
			return fmt.Errorf("gp/cg: unknown prediction cache entry %q", name)
		}
	}
	if !slices.Equal(c[cacheKey], m.key()) {
		return fmt.Errorf("gp/cg: the prediction cache belongs to other parameter values")
	}
	alpha, love, solve := c[cacheAlpha], c[cacheLOVE], c[cacheSolve]
	if len(alpha) != n*p {
		return fmt.Errorf("gp/cg: prediction cache α has %d values, the data %d×%d", len(alpha), n, p)
	}
	direct, check := c[cacheDirect], c[cacheCheck]
	why := ""
	if direct != nil {
		for w, code := range directCodes {
			if len(direct) == 2 && direct[0] == code {
				why = w
			}
		}
		if why == "" {
			return fmt.Errorf("gp/cg: prediction cache's direct entry %v (want [1 or 2, jitter])", direct)
		}
	}
	rank := len(love) / n
	if len(love)%n != 0 || rank > n || (love == nil) != (m.cfg.ExactVariance || why != "") || len(solve) != 2 || check != nil && len(check) != 2 {
		return fmt.Errorf("gp/cg: prediction cache with %d LOVE values for %d rows (exact variances: %t, direct: %t), %d solve statistics and %d of LOVE's check",
			len(love), n, m.cfg.ExactVariance, why != "", len(solve), len(check))
	}
	for name, v := range c {
		if err := ops.CheckFinite("gp/cg prediction cache "+name, v, 1); err != nil {
			return err
		}
	}
	pc := &predCache{key: slices.Clone(c[cacheKey]), alpha: slices.Clone(alpha), love: slices.Clone(love), rank: rank,
		iters: int(solve[0]), resid: solve[1]}
	if check != nil {
		pc.loveChecked, pc.loveExceeded = int(check[0]), int(check[1])
	}
	if why != "" {
		if err := m.restoreDirect(pc, why); err != nil {
			return err
		}
	}
	m.cache = pc
	return nil
}

// restoreDirect completes a direct cache read from a file: K̂'s factor again where it fits the memory budget
// (α stays the file's), else the LOVE cache, counted as a warning.
func (m *GPR) restoreDirect(pc *predCache, why string) error {
	_, y := m.data.Data()
	n, p := y.Dims()
	pr := m.problem()
	if !m.directFits(n) {
		m.warns.Add(1)
		if err := m.blocks.Bind(pr.X, pr.N, pr.D, pr.Hyper); err != nil {
			return err
		}
		if m.cfg.ExactVariance {
			return nil
		}
		return m.buildLOVE(pc, pr)
	}
	r, err := m.centredTargets()
	if err != nil {
		return err
	}
	alpha, resid := pc.alpha, pc.resid
	if err := m.directCache(pc, pr, r, p, why); err != nil {
		return fmt.Errorf("gp/cg: the prediction cache's factorisation: %w", err)
	}
	pc.alpha, pc.resid = alpha, resid
	return nil
}
