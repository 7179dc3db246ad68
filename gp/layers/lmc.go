package layers

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindLMC is the kind of the LMC layer's Spec (gp.Spec).
const KindLMC = "layer/lmc"

func init() { gp.RegisterKind(KindLMC, buildLMC) }

// LMCConfig configures a linear model of coregionalisation layer (NewLMC). Zero values mean defaults.
type LMCConfig struct {
	// Name prefixes the mixing matrix's Param, Name+".W" (default "lmc").
	Name string
	// Latents are the blocks of latent processes g (required): layers of the LMC's input width whose outputs are
	// independent a posteriori (not a gp.CorrelatedLayer), each with its own Params. An SVGP block of
	// OutputDim k gives k latents sharing its kernel and Z (GPflow's SharedIndependent); one single-output block
	// per latent gives each its own kernel and Z (SeparateIndependent). L = Σ OutputDim, in block order. Blocks
	// share no Param: not q(u) (the latents would not be independent), and not a kernel either (each block's Spec
	// holds its kernel, so a shared one would come back from a model file as two).
	Latents []gp.Layer
	// W is the initial mixing matrix [P,L] (required unless Identity; GPflow and GPyTorch draw it at random:
	// draw it from a seeded generator). Its rows give P, the output width.
	W *mat.Dense
	// Identity fixes W = I with P = L and no mixing Param: separate-independent outputs, output p being latent p
	// (with each latent its own block: its own kernel and Z, as GPflow's SeparateIndependent).
	Identity bool
	// FixW freezes W.
	FixW bool
	// Mean is an optional mean function of the outputs (P wide), added after the mixing: a deep GP's inner mean
	// function (the latents' own mean functions, if any, are mixed with them).
	Mean gp.MeanFunction
}

// LMC is the linear model of coregionalisation as a layer (Álvarez, Rosasco & Lawrence 2012, §4.2:
// f_d(x) = Σ_q a_{d,q} u_q(x), K(x,x') = Σ_q a_q a_qᵀ k_q(x,x'); the variational form of van der Wilk et al.
// 2020, §4, GPflow's LinearCoregionalization, GPyTorch's LMCVariationalStrategy): L latent processes g with
// independent posteriors q(g_l) (the blocks, typically SVGP layers) are mixed by W [P,L] into P outputs,
//
//	f(x) = W g(x) + μ(x),  mean_p = Σ_l W_pl m_l(x) + μ_p(x),  var_p = Σ_l W_pl² v_l(x),
//	Cov[f_p(x), f_p'(x)] = Σ_l W_pl W_p'l v_l(x),  Cov[f_p(x), f_p(x')] = Σ_l W_pl² C_l(x, x'),
//	KL = Σ_l KL[q(u_l) ‖ p(u_l)]   (W is a hyperparameter: the latents' prior is unchanged).
//
// With Identity (W = I, P = L) the outputs are independent, each its latent: separate-independent outputs.
// The outputs are correlated a posteriori: LMC is a gp.CorrelatedLayer, and a deep GP draws its samples jointly
// over the outputs (through the latents: f = W(m + √v ⊙ ε) + μ, ε ~ N(0, I_L)).
type LMC struct {
	// Latents are the latent blocks, in order.
	Latents []gp.Layer
	// W is the mixing matrix [P,L]; nil with Identity.
	W *graph.Param
	// Mean is the outputs' mean function (nil: zero).
	Mean      gp.MeanFunction
	name      string
	din, dout int
	nlat      int
	offs      []int // offs[b] is block b's first latent
}

var (
	_ gp.Layer           = (*LMC)(nil)
	_ gp.CorrelatedLayer = (*LMC)(nil)
	_ gp.Describer       = (*LMC)(nil)
)

// NewLMC returns an LMC layer. Errors wrap ErrConfig (no blocks, a nil or correlated block, blocks sharing
// Params, W missing, set with Identity, or not finite, a mean of the wrong width); a *ops.ShapeError for blocks
// of different input widths or a W that is not L columns wide.
func NewLMC(c LMCConfig) (*LMC, error) {
	if len(c.Latents) == 0 {
		return nil, fmt.Errorf("%w: LMC: no latent blocks", ErrConfig)
	}
	name := c.Name
	if name == "" {
		name = "lmc"
	}
	l := &LMC{Latents: append([]gp.Layer(nil), c.Latents...), Mean: c.Mean, name: name}
	seen := map[*graph.Param]bool{}
	for b, blk := range c.Latents {
		if blk == nil {
			return nil, fmt.Errorf("%w: LMC: latent block %d is nil", ErrConfig, b)
		}
		if _, ok := blk.(gp.CorrelatedLayer); ok {
			return nil, fmt.Errorf("%w: LMC: latent block %d (%T) has correlated outputs; the latents must be independent", ErrConfig, b, blk)
		}
		if b == 0 {
			l.din = blk.InputDim()
		} else if blk.InputDim() != l.din {
			return nil, &ops.ShapeError{Op: "layers.NewLMC", Want: fmt.Sprintf("latent block %d of input width %d (block 0's)", b, l.din), Got: fmt.Sprint(blk.InputDim())}
		}
		if blk.OutputDim() <= 0 {
			return nil, fmt.Errorf("%w: LMC: latent block %d has %d outputs", ErrConfig, b, blk.OutputDim())
		}
		for _, p := range blk.Params() {
			if seen[p] {
				return nil, fmt.Errorf("%w: LMC: latent block %d shares Param %s with an earlier block", ErrConfig, b, p.Name())
			}
			seen[p] = true
		}
		l.offs = append(l.offs, l.nlat)
		l.nlat += blk.OutputDim()
	}
	switch {
	case c.Identity && c.W != nil:
		return nil, fmt.Errorf("%w: LMC: W set with Identity", ErrConfig)
	case c.Identity:
		l.dout = l.nlat
	case c.W == nil:
		return nil, fmt.Errorf("%w: LMC: nil mixing matrix W (or Identity for separate-independent outputs)", ErrConfig)
	default:
		p, q := c.W.Dims()
		if q != l.nlat {
			return nil, &ops.ShapeError{Op: "layers.NewLMC", Want: fmt.Sprintf("W with %d columns (the latents)", l.nlat), Got: fmt.Sprintf("[%d,%d]", p, q)}
		}
		w := mat.DenseCopyOf(c.W).RawMatrix().Data
		for i, v := range w {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: LMC: W[%d,%d] = %v", ErrConfig, i/q, i%q, v)
			}
		}
		var err error
		if l.W, err = graph.NewParam(name+".W", w, graph.Identity{}, p, q); err != nil {
			return nil, fmt.Errorf("layers: LMC mixing matrix: %w", err)
		}
		l.W.SetTrainable(!c.FixW)
		l.dout = p
	}
	if c.Mean != nil && c.Mean.OutputDim() != l.dout {
		return nil, fmt.Errorf("%w: LMC: mean function has %d outputs, layer %d", ErrConfig, c.Mean.OutputDim(), l.dout)
	}
	return l, nil
}

// NumLatents returns L.
func (l *LMC) NumLatents() int { return l.nlat }

// Identity reports whether W is fixed to the identity (separate-independent outputs).
func (l *LMC) Identity() bool { return l.W == nil }

// InputDim returns Din.
func (l *LMC) InputDim() int { return l.din }

// OutputDim returns P.
func (l *LMC) OutputDim() int { return l.dout }

// NoiseDim returns L: Sample and SampleJoint draw the latents.
func (l *LMC) NoiseDim() int { return l.nlat }

// Params returns the blocks' Params in order, then W (unless Identity) and the mean function's.
func (l *LMC) Params() []*graph.Param {
	ps := make([][]*graph.Param, 0, len(l.Latents)+2)
	for _, b := range l.Latents {
		ps = append(ps, b.Params())
	}
	if l.W != nil {
		ps = append(ps, []*graph.Param{l.W})
	}
	if l.Mean != nil {
		ps = append(ps, l.Mean.Params())
	}
	return gp.UniqueParams(ps...)
}

type lmcKey struct {
	l    *LMC
	what string
	b    int
}

// checkInputs records a shape error in x's graph unless x is [N,Din].
func (l *LMC) checkInputs(x *graph.Node) {
	if s := x.Shape(); len(s) != 2 || s[1] != l.din {
		x.Graph().Fail(&ops.ShapeError{Op: "LMC layer " + l.name, Want: fmt.Sprintf("inputs [N,%d]", l.din), Got: fmt.Sprint(s)})
	}
}

// concat returns the blocks' [N,k_b] matrices side by side [N,L] (as Σ_b X_b S_bᵀ with S_b [L,k_b] the
// constant selection of block b's columns).
func (l *LMC) concat(g *graph.Graph, xs []*graph.Node) *graph.Node {
	if len(xs) == 1 {
		return xs[0]
	}
	var out *graph.Node
	for b, x := range xs {
		t := g.MatMul(x, l.selection(g, b), false, true)
		if out == nil {
			out = t
		} else {
			out = g.Add(out, t)
		}
	}
	return out
}

// selection returns S_b [L,k_b]: the identity's columns of block b's latents (memoised per graph).
func (l *LMC) selection(g *graph.Graph, b int) *graph.Node {
	return g.Memo(lmcKey{l, "sel", b}, func() *graph.Node {
		k := l.Latents[b].OutputDim()
		s := make([]float64, l.nlat*k)
		for j := 0; j < k; j++ {
			s[(l.offs[b]+j)*k+j] = 1
		}
		return g.Const(fmt.Sprintf("%s.sel%d", l.name, b), s, l.nlat, k)
	})
}

// mix returns G Wᵀ [N,P] for latent values G [N,L] (G itself with Identity).
func (l *LMC) mix(g *graph.Graph, gl *graph.Node) *graph.Node {
	if l.W == nil {
		return gl
	}
	return g.MatMul(gl, g.Param(l.W), false, true)
}

// mixVar returns V (W⊙W)ᵀ [N,P] for latent variances V [N,L] (V itself with Identity).
func (l *LMC) mixVar(g *graph.Graph, v *graph.Node) *graph.Node {
	if l.W == nil {
		return v
	}
	return g.MatMul(v, l.wSquared(g), false, true)
}

// wSquared returns W⊙W [P,L] (memoised per graph).
func (l *LMC) wSquared(g *graph.Graph) *graph.Node {
	return g.Memo(lmcKey{l, "W2", 0}, func() *graph.Node {
		w := g.Param(l.W)
		return g.Mul(w, w)
	})
}

// addMean adds the outputs' mean function at x to f.
func (l *LMC) addMean(x, f *graph.Node) *graph.Node {
	if l.Mean == nil {
		return f
	}
	return x.Graph().Add(f, l.Mean.Mean(x))
}

// latents returns the latents' marginal means and variances [N,L].
func (l *LMC) latents(x *graph.Node) (mean, variance *graph.Node) {
	g := x.Graph()
	l.checkInputs(x)
	ms, vs := make([]*graph.Node, len(l.Latents)), make([]*graph.Node, len(l.Latents))
	for b, blk := range l.Latents {
		ms[b], vs[b] = blk.Predict(x)
	}
	return l.concat(g, ms), l.concat(g, vs)
}

// Predict returns the outputs' marginal means Σ_l W_pl m_l + μ_p and variances Σ_l W_pl² v_l [N,P].
func (l *LMC) Predict(x *graph.Node) (mean, variance *graph.Node) {
	g := x.Graph()
	m, v := l.latents(x)
	return l.addMean(x, l.mix(g, m)), l.mixVar(g, v)
}

// PredictFull returns the means [N,P] and, per output p, its covariance across the rows Σ_l W_pl² C_l [N,N]
// (C_l the latent's, from its block's PredictFull).
func (l *LMC) PredictFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	g := x.Graph()
	m, covs := l.latentsFull(x)
	mean := l.addMean(x, l.mix(g, m))
	if l.W == nil {
		return mean, covs
	}
	n := rowsOf(x)
	vecs := make([]*graph.Node, len(covs))
	for j, c := range covs {
		vecs[j] = g.Reshape(c, n*n)
	}
	// Column p of [vec C_1 … vec C_L] (W⊙W)ᵀ [N²,P] is vec Σ_l W_pl² C_l.
	all := g.MatMul(g.StackCols(vecs...), l.wSquared(g), false, true)
	out := make([]*graph.Node, l.dout)
	for p := range out {
		out[p] = g.Reshape(g.Col(all, p), n, n)
	}
	return mean, out
}

// latentsFull returns the latents' means [N,L] and their L covariances [N,N] across the rows.
func (l *LMC) latentsFull(x *graph.Node) (*graph.Node, []*graph.Node) {
	g := x.Graph()
	l.checkInputs(x)
	ms := make([]*graph.Node, len(l.Latents))
	var covs []*graph.Node
	for b, blk := range l.Latents {
		var cs []*graph.Node
		ms[b], cs = blk.PredictFull(x)
		covs = append(covs, cs...)
	}
	return l.concat(g, ms), covs
}

// PredictOutputCov returns the marginal means [N,P] and the covariance between the outputs at each row,
// Σ_n = W diag(v_n) Wᵀ, row-major [N, P·P]: V K with K [L,P²], K_l = w_l ⊗ w_l (w_l W's column l).
func (l *LMC) PredictOutputCov(x *graph.Node) (mean, cov *graph.Node) {
	g := x.Graph()
	m, v := l.latents(x)
	mean = l.addMean(x, l.mix(g, m))
	p := l.dout
	var k *graph.Node
	if l.W == nil {
		kk := make([]float64, l.nlat*p*p)
		for j := 0; j < l.nlat; j++ {
			kk[j*p*p+j*p+j] = 1
		}
		k = g.Const(l.name+".kron", kk, l.nlat, p*p)
	} else {
		// E1 [P,P²] repeats each row p P times (columns p·P … p·P+P−1), E2 [P,P²] tiles the identity: WᵀE1 and
		// WᵀE2 hold W_pl and W_p'l at column p·P+p'.
		e1, e2 := make([]float64, p*p*p), make([]float64, p*p*p)
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				e1[i*p*p+i*p+j] = 1
				e2[j*p*p+i*p+j] = 1
			}
		}
		w := g.Param(l.W)
		a := g.MatMul(w, g.Const(l.name+".rep", e1, p, p*p), true, false)
		b := g.MatMul(w, g.Const(l.name+".tile", e2, p, p*p), true, false)
		k = g.Mul(a, b)
	}
	return mean, g.MatMul(v, k, false, false)
}

// Sample returns W(m + √v ⊙ ε) + μ [N,P] with ε = eps [N,L]: a draw from q's joint over the outputs at each
// row (the latents are independent given the row).
func (l *LMC) Sample(x, eps *graph.Node) *graph.Node {
	g := x.Graph()
	if s := eps.Shape(); len(s) != 2 || s[0] != rowsOf(x) || s[1] != l.nlat {
		return g.Fail(&ops.ShapeError{Op: "LMC layer " + l.name + " Sample", Want: fmt.Sprintf("noise [%d,%d]", rowsOf(x), l.nlat), Got: fmt.Sprint(s)})
	}
	m, v := l.latents(x)
	// The clamp keeps √· defined where round-off leaves a variance just below zero.
	draw := g.Add(m, g.Mul(g.Sqrt(g.ClampMin(v, 0)), eps))
	return l.addMean(x, l.mix(g, draw))
}

// SampleJoint returns W(m + [C_1 ε_1 … C_L ε_L]) + μ [N,P] with ε_l column l of eps [N,L] and C_l the lower
// Cholesky factor of latent l's covariance across the rows (the graph's jitter policy): a joint draw across the
// rows and the outputs.
func (l *LMC) SampleJoint(x, eps *graph.Node) *graph.Node {
	g := x.Graph()
	n := rowsOf(x)
	if s := eps.Shape(); len(s) != 2 || s[0] != n || s[1] != l.nlat {
		return g.Fail(&ops.ShapeError{Op: "LMC layer " + l.name + " SampleJoint", Want: fmt.Sprintf("noise [%d,%d]", n, l.nlat), Got: fmt.Sprint(s)})
	}
	m, covs := l.latentsFull(x)
	cols := make([]*graph.Node, len(covs))
	for j, c := range covs {
		cols[j] = g.Reshape(g.MatMul(g.Cholesky(c), g.Reshape(g.Col(eps, j), n, 1), false, false), n)
	}
	return l.addMean(x, l.mix(g, g.Add(m, g.StackCols(cols...))))
}

// KL returns Σ_b KL_b, the blocks' KL divergences (W does not enter: it is a hyperparameter).
func (l *LMC) KL(g *graph.Graph) *graph.Node {
	kl := l.Latents[0].KL(g)
	for _, b := range l.Latents[1:] {
		kl = g.Add(kl, b.KL(g))
	}
	return kl
}

// lmcSpec is the Config of layer/lmc; its children are the latent blocks, in order, then the mean function when
// HasMean. W's values are a Param (model files restore them).
type lmcSpec struct {
	Name       string `json:"name"`
	InputDim   int    `json:"input_dim"`
	OutputDim  int    `json:"output_dim"`
	NumLatents int    `json:"num_latents"`
	NumBlocks  int    `json:"num_blocks"`
	Identity   bool   `json:"identity,omitempty"`
	FixW       bool   `json:"fix_w,omitempty"`
	HasMean    bool   `json:"has_mean,omitempty"`
}

// Spec describes l: its name, widths, the number of latents and blocks, whether W is the identity or frozen;
// the children are the blocks, then the mean function (if any).
func (l *LMC) Spec() (gp.Spec, error) {
	c := lmcSpec{Name: l.name, InputDim: l.din, OutputDim: l.dout, NumLatents: l.nlat, NumBlocks: len(l.Latents),
		Identity: l.W == nil, FixW: l.W != nil && !l.W.Trainable(), HasMean: l.Mean != nil}
	children := make([]any, 0, len(l.Latents)+1)
	for _, b := range l.Latents {
		children = append(children, b)
	}
	return gp.NewSpec(KindLMC, c, withMean(children, l.Mean)...)
}

func buildLMC(raw json.RawMessage, children []any, _ gp.BuildOptions) (any, error) {
	var c lmcSpec
	if err := decodeConfig(KindLMC, raw, &c); err != nil {
		return nil, err
	}
	if err := gp.CheckSpecDims(KindLMC, c.InputDim, c.OutputDim, c.NumLatents, c.NumBlocks); err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, fmt.Errorf("%w: %s: empty name", ErrConfig, KindLMC)
	}
	want := c.NumBlocks
	if c.HasMean {
		want++
	}
	if len(children) != want {
		return nil, fmt.Errorf("%w: %s has %d children, want %d (the latent blocks, the mean function if has_mean)", ErrConfig, KindLMC, len(children), want)
	}
	blocks := make([]gp.Layer, c.NumBlocks)
	lat := 0
	for b := range blocks {
		blk, err := gp.ChildAs[gp.Layer](KindLMC, children, b)
		if err != nil {
			return nil, err
		}
		blocks[b] = blk
		lat += blk.OutputDim()
	}
	if lat != c.NumLatents || (c.Identity && c.OutputDim != lat) {
		return nil, fmt.Errorf("%w: %s: blocks of %d latents for num_latents %d, output_dim %d (identity %v)", ErrConfig, KindLMC, lat, c.NumLatents, c.OutputDim, c.Identity)
	}
	lc := LMCConfig{Name: c.Name, Latents: blocks, Identity: c.Identity, FixW: c.FixW}
	if !c.Identity {
		if err := gp.CheckSpecDims(KindLMC, c.OutputDim, c.NumLatents); err != nil {
			return nil, err
		}
		lc.W = mat.NewDense(c.OutputDim, c.NumLatents, nil)
	}
	if c.HasMean {
		m, err := gp.ChildAs[gp.MeanFunction](KindLMC, children, c.NumBlocks)
		if err != nil {
			return nil, err
		}
		lc.Mean = m
	}
	l, err := NewLMC(lc)
	if err != nil {
		return nil, err
	}
	if l.din != c.InputDim {
		return nil, fmt.Errorf("%w: %s: blocks of input width %d, input_dim %d", ErrConfig, KindLMC, l.din, c.InputDim)
	}
	return l, nil
}
