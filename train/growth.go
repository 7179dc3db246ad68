package train

import (
	"errors"
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// DefaultGrowthNDelta is BasisGrowthConfig.NDelta's default: the paper's N_Δ = 128 new bases per minibatch.
const DefaultGrowthNDelta = 128

// inactiveRaw is the raw diagonal of an inactive row of L_B: softplus(−750) underflows to exactly 0, so the
// constrained diagonal is exactly the LowerTriangular floor (and its softplus derivative is 0 as well).
const inactiveRaw = -750

// BasisGrowthConfig configures a BasisGrowth hook. Zero values mean defaults.
type BasisGrowthConfig struct {
	// Zalpha [Mα,D] and Zbeta [Mβ,D] are the layer's basis Params (required, Identity transform).
	Zalpha, Zbeta *graph.Param
	// A are the mean weights [Mα,Dout] (a, or a₀ with Jacobi). Inactive rows are set to 0 by NewBasisGrowth
	// and kept there. nil leaves the weights alone (inactive mean bases then contribute through their weights).
	A *graph.Param
	// LB are the per-output factors of B [Mβ,Mβ] (LowerTriangular transform). Inactive rows and columns are set
	// to the floor (strictly lower part 0, diagonal the transform's floor) and restored to their construction
	// values when their basis activates. nil leaves them alone.
	LB []*graph.Param
	// Start is the number of bases of each set active at step 0 (default NDelta; values above Mα or Mβ clamp).
	// They keep the values they have at construction (initialise them, e.g. on data, before training).
	Start int
	// NDelta is the number of new bases of each set per step (default DefaultGrowthNDelta, the paper's N_Δ).
	NDelta int
}

// BasisGrowth is a Hook that grows the decoupled bases online (Cheng & Boots 2017, Algorithm 1: N_Δ new bases
// per minibatch until Mα and Mβ) with static shapes: the layer keeps all Mα mean and Mβ covariance bases, but
// after t steps only the first k_α(t) = min(Mα, Start + t·NDelta) (and k_β(t), likewise) are active.
//
// Inactive bases contribute nothing (mean) or O(floor²) (covariance) to q(f): their rows of a are 0, so a mean
// basis adds k_xα_i·0 = 0 to μ and 0 to aᵀK_α a; their rows of L_B are floor·e_iᵀ (floor = the LowerTriangular
// floor, 1e-6 by default), so B = blockdiag(B_active, floor²·I). With floor → 0 this is exactly the layer
// restricted to its active covariance bases (L_B = blockdiag(L_active, 0) gives H = blockdiag(H_active, I));
// with the floor, σ² and KL differ from that by O(floor²) (default floor 1e-6: measured Δσ² = 0, ΔKL ≈ 5e-14, see
// TestBasisGrowthInactiveCovBasesNegligible). The positions of inactive Zbeta rows still enter chol(K_β) (so
// keep them distinct, e.g. the initial bases of the layer), not the model.
//
// At every step the hook, after the backward pass and before the optimizer,
//  1. places the bases that activate at this step (indices k(t−1) … k(t)−1) on rows of the step's minibatch:
//     the j-th new mean basis and the j-th new covariance basis both on batch row j (App. A.2: mean and
//     covariance bases initialised on the same samples), wrapping around if the batch has fewer rows than
//     NDelta; their L_B rows get back their construction values (their a rows stay 0);
//  2. zeroes, in the Program's gradient storage, the entries of every basis that was not active in this step's
//     forward pass (rows ≥ k(t−1) of Zalpha, Zbeta, A; rows and columns ≥ k_β(t−1) of each L_B). The bases
//     placed in (1) are included: their gradients were computed at their old positions, so they start training
//     at step t+1 (the paper adds the bases before the gradient of the same minibatch; our hooks run after it).
//
// The optimizer therefore never moves an inactive basis. BasisGrowth claims no Params. With Start ≥ Mα and
// Start ≥ Mβ it never writes anything: training is bit-for-bit that without the hook.
//
// The hook counts its own steps (one per AfterBackward), so a BasisGrowth continues growing when reused in a
// second Train call. It is not safe for concurrent use.
type BasisGrowth struct {
	za, zb *graph.Param
	a      *graph.Param
	lb     []*graph.Param
	lbInit [][]float64 // construction raw values of each L_B
	ma, mb int
	d      int
	start  int
	delta  int
	t      int // steps seen
	ka, kb int // active counts (in the last forward pass)
}

var _ Hook = (*BasisGrowth)(nil)

// ErrGrowthConfig reports an invalid BasisGrowthConfig.
var ErrGrowthConfig = errors.New("train: invalid BasisGrowth configuration")

// NewBasisGrowth validates c and puts the inactive bases in their inactive state: rows ≥ Start of A set to 0,
// rows and columns ≥ Start of every L_B set to the floor (L_B's construction values are remembered).
func NewBasisGrowth(c BasisGrowthConfig) (*BasisGrowth, error) {
	if c.Zalpha == nil || c.Zbeta == nil {
		return nil, fmt.Errorf("%w: nil Zalpha or Zbeta", ErrGrowthConfig)
	}
	sa, sb := c.Zalpha.Shape(), c.Zbeta.Shape()
	if len(sa) != 2 || len(sb) != 2 || sa[1] != sb[1] {
		return nil, &ops.ShapeError{Op: "train.NewBasisGrowth", Want: "Zalpha [Mα,D] and Zbeta [Mβ,D]", Got: fmt.Sprintf("%v and %v", sa, sb)}
	}
	for _, z := range []*graph.Param{c.Zalpha, c.Zbeta} {
		if _, ok := z.Transform().(graph.Identity); !ok {
			return nil, fmt.Errorf("%w: bases %s have transform %v, want Identity", ErrGrowthConfig, z.Name(), z.Transform())
		}
	}
	h := &BasisGrowth{za: c.Zalpha, zb: c.Zbeta, a: c.A, ma: sa[0], mb: sb[0], d: sa[1], start: c.Start, delta: c.NDelta}
	if h.delta == 0 {
		h.delta = DefaultGrowthNDelta
	}
	if h.delta < 0 {
		return nil, fmt.Errorf("%w: NDelta %d", ErrGrowthConfig, c.NDelta)
	}
	if h.start == 0 {
		h.start = h.delta
	}
	if h.start < 0 {
		return nil, fmt.Errorf("%w: Start %d", ErrGrowthConfig, c.Start)
	}
	if c.A != nil {
		if s := c.A.Shape(); len(s) != 2 || s[0] != h.ma {
			return nil, &ops.ShapeError{Op: "train.NewBasisGrowth", Want: fmt.Sprintf("A with %d rows (Mα)", h.ma), Got: fmt.Sprint(s)}
		}
		if _, ok := c.A.Transform().(graph.Identity); !ok {
			return nil, fmt.Errorf("%w: weights %s have transform %v, want Identity", ErrGrowthConfig, c.A.Name(), c.A.Transform())
		}
	}
	for _, lb := range c.LB {
		if lb == nil {
			return nil, fmt.Errorf("%w: nil LB", ErrGrowthConfig)
		}
		if s := lb.Shape(); len(s) != 2 || s[0] != h.mb || s[1] != h.mb {
			return nil, &ops.ShapeError{Op: "train.NewBasisGrowth", Want: fmt.Sprintf("LB [%d,%d] (Mβ)", h.mb, h.mb), Got: fmt.Sprint(s)}
		}
		if _, ok := lb.Transform().(graph.LowerTriangular); !ok {
			return nil, fmt.Errorf("%w: factor %s has transform %v, want LowerTriangular", ErrGrowthConfig, lb.Name(), lb.Transform())
		}
	}
	h.ka, h.kb = min(h.ma, h.start), min(h.mb, h.start)
	h.lb = append([]*graph.Param(nil), c.LB...)
	if c.A != nil {
		cols := c.A.Shape()[1]
		clear(c.A.Raw()[h.ka*cols:])
	}
	for _, lb := range h.lb {
		h.lbInit = append(h.lbInit, append([]float64(nil), lb.Raw()...))
		raw, n := lb.Raw(), h.mb
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if max(i, j) < h.kb {
					continue
				}
				if i == j {
					raw[i*n+j] = inactiveRaw
				} else {
					raw[i*n+j] = 0
				}
			}
		}
	}
	return h, nil
}

// Claims returns nil: the hook only places bases and masks gradients.
func (h *BasisGrowth) Claims() []*graph.Param { return nil }

// Active returns the numbers of mean and covariance bases active in the next forward pass: k_α(n) and k_β(n)
// after n calls of AfterBackward (Start, clamped to Mα and Mβ, before the first).
func (h *BasisGrowth) Active() (ka, kb int) { return h.ka, h.kb }

// AfterBackward places this step's new bases on the minibatch and masks the gradients of the bases that were
// inactive in its forward pass.
func (h *BasisGrowth) AfterBackward(s *Step) error {
	t := h.t // this step (0-based)
	h.t++
	// k(t), active after this step, and k(t−1) (Start at t = 0), active in this step's forward pass.
	ka, kb := min(h.ma, h.start+t*h.delta), min(h.mb, h.start+t*h.delta)
	fa, fb := h.ka, h.kb
	if fa >= h.ma && fb >= h.mb {
		return nil
	}
	if ka > fa || kb > fb {
		x := s.Program.InputData("x")
		if len(x) == 0 || len(x)%h.d != 0 {
			return fmt.Errorf("train: BasisGrowth: the program has no minibatch input \"x\" with %d columns", h.d)
		}
		rows := len(x) / h.d
		place := func(z *graph.Param, from, to int) {
			raw := z.Raw()
			for i := from; i < to; i++ {
				r := (i - from) % rows
				copy(raw[i*h.d:(i+1)*h.d], x[r*h.d:(r+1)*h.d])
			}
		}
		place(h.za, fa, ka)
		place(h.zb, fb, kb)
		for p, lb := range h.lb {
			raw, init, n := lb.Raw(), h.lbInit[p], h.mb
			for i := fb; i < kb; i++ {
				copy(raw[i*n:i*n+i+1], init[i*n:i*n+i+1]) // row i up to the diagonal: columns < kb
			}
		}
	}
	maskRows := func(p *graph.Param, k int) {
		if p == nil {
			return
		}
		g := s.Grads.Grad(p)
		if g == nil {
			return
		}
		cols := p.Shape()[1]
		clear(g[k*cols:])
	}
	maskRows(h.za, fa)
	maskRows(h.zb, fb)
	maskRows(h.a, fa)
	for _, lb := range h.lb {
		g := s.Grads.Grad(lb)
		if g == nil {
			continue
		}
		n := h.mb
		for i := 0; i < n; i++ {
			if i >= fb {
				clear(g[i*n : (i+1)*n])
				continue
			}
			clear(g[i*n+fb : (i+1)*n])
		}
	}
	h.ka, h.kb = ka, kb
	return nil
}
