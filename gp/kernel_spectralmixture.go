package gp

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// KindSpectralMixture is the Spec kind of the spectral mixture kernel.
const KindSpectralMixture = "kernel/spectralmixture"

// DefaultComponents is the spectral mixture's number of components Q when KernelConfig.Components is 0.
const DefaultComponents = 4

// maxComponents bounds Q (one fused op per component).
const maxComponents = 256

// SpectralMixtureCov is the covariance function of one component of the spectral mixture kernel (see smCov).
var SpectralMixtureCov ops.CovFunc = smCov{}

// SpectralMixture is the spectral mixture kernel of Wilson & Adams (2013, "Gaussian Process Kernels for Pattern
// Discovery and Extrapolation", eq. 12) for D-dimensional inputs, with Q components:
//
//	k(τ) = Σ_q w_q Π_d exp(−2π² τ_d² v_qd) cos(2π τ_d μ_qd),   τ = x − x′,
//
// a mixture of Q Gaussians in the spectral domain (weights w_q, means μ_q [D], diagonal variances v_q [D]).
// The spectral variances are held as length-scales ℓ_qd = 1/(2π √v_qd), so that each component reads
// w_q exp(−½ Σ_d τ_d²/ℓ_qd²) Π_d cos(2π μ_qd τ_d): an SE-ARD kernel (variance w_q, length-scales ℓ_q) times
// cosines; a component at frequency 0 is exactly an SE kernel. Weights and length-scales are positive; the
// frequencies are unconstrained (k is even in each μ_qd; a frequency at exactly 0 has zero gradient and stays
// there, an SE trend term). Each component is one fused op (ops.CovMatrix of SpectralMixtureCov, analytic
// gradients with respect to both inputs and its three hyperparameters); K is their sum.
type SpectralMixture struct {
	dim, q       int
	Weights      *graph.Param // [Q]
	Frequencies  *graph.Param // [Q,D], cycles per input unit
	Lengthscales *graph.Param // [Q,D]
}

// NewSpectralMixture returns a spectral mixture kernel with c.Components components (default
// DefaultComponents). Initial values: weights Variance/Q each (default Variance 1), length-scales from
// c.Lengthscales (none: 1; one value or D values, the same for every component), frequencies μ_qd = q/Q
// (component 0 at 0, an SE term). InitSpectralMixture computes data-driven initial values, which SetInit sets
// (InitFromData does both).
func NewSpectralMixture(c KernelConfig) (*SpectralMixture, error) {
	if c.InputDim <= 0 {
		return nil, configErr("SpectralMixture kernel: InputDim must be positive, got %d", c.InputDim)
	}
	q := c.Components
	if q == 0 {
		q = DefaultComponents
	}
	if q < 0 || q > maxComponents {
		return nil, configErr("SpectralMixture kernel: Components must be in 1..%d, got %d", maxComponents, c.Components)
	}
	d := c.InputDim
	ls := make([]float64, d)
	switch len(c.Lengthscales) {
	case 0:
		for i := range ls {
			ls[i] = DefaultLengthscale
		}
	case 1:
		for i := range ls {
			ls[i] = c.Lengthscales[0]
		}
	case d:
		copy(ls, c.Lengthscales)
	default:
		return nil, configErr("SpectralMixture kernel: %d length-scales for InputDim %d (want 1 or %d)", len(c.Lengthscales), d, d)
	}
	name := c.Name
	if name == "" {
		name = "sm"
	}
	v := orDefault(c.Variance, DefaultVariance)
	w, mu, ell := make([]float64, q), make([]float64, q*d), make([]float64, q*d)
	for i := 0; i < q; i++ {
		w[i] = v / float64(q)
		for k := 0; k < d; k++ {
			mu[i*d+k] = float64(i) / float64(q)
			ell[i*d+k] = ls[k]
		}
	}
	k := &SpectralMixture{dim: d, q: q}
	var err error
	if k.Weights, err = graph.NewParam(name+".weights", w, graph.Positive{}, q); err != nil {
		return nil, err
	}
	if k.Frequencies, err = graph.NewParam(name+".frequencies", mu, graph.Identity{}, q, d); err != nil {
		return nil, err
	}
	if k.Lengthscales, err = graph.NewParam(name+".lengthscales", ell, graph.Positive{}, q, d); err != nil {
		return nil, err
	}
	return k, nil
}

// hyper returns component q's hyperparameter nodes (weight [1], frequencies [D], length-scales [D]), built once
// per graph.
func (k *SpectralMixture) hyper(g *graph.Graph, q int) []*graph.Node {
	type key struct {
		k *SpectralMixture
		q int
	}
	return []*graph.Node{
		g.Memo(key{k, 3 * q}, func() *graph.Node { return g.SliceRows(g.Param(k.Weights), q, q+1) }),
		g.Memo(key{k, 3*q + 1}, func() *graph.Node { return g.Reshape(g.SliceRows(g.Param(k.Frequencies), q, q+1), k.dim) }),
		g.Memo(key{k, 3*q + 2}, func() *graph.Node { return g.Reshape(g.SliceRows(g.Param(k.Lengthscales), q, q+1), k.dim) }),
	}
}

// K returns Σ_q K_q(x1, x2) [N,M].
func (k *SpectralMixture) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	var sum *graph.Node
	for q := 0; q < k.q; q++ {
		kq := g.CovMatrix(SpectralMixtureCov, x1, x2, k.hyper(g, q)...)
		if sum == nil {
			sum = kq
		} else {
			sum = g.Add(sum, kq)
		}
	}
	return sum
}

// KDiag returns Σ_q w_q for every row [N].
func (k *SpectralMixture) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	var sum *graph.Node
	for q := 0; q < k.q; q++ {
		kq := g.CovDiag(SpectralMixtureCov, x, k.hyper(g, q)...)
		if sum == nil {
			sum = kq
		} else {
			sum = g.Add(sum, kq)
		}
	}
	return sum
}

// InputDim returns D.
func (k *SpectralMixture) InputDim() int { return k.dim }

// Components returns Q.
func (k *SpectralMixture) Components() int { return k.q }

// Cov returns the covariance function of each component (SpectralMixtureCov).
func (k *SpectralMixture) Cov() ops.CovFunc { return SpectralMixtureCov }

// Params returns the weights, the frequencies and the length-scales.
func (k *SpectralMixture) Params() []*graph.Param {
	return []*graph.Param{k.Weights, k.Frequencies, k.Lengthscales}
}

func (k *SpectralMixture) String() string {
	return fmt.Sprintf("SpectralMixture(Q=%d, weights=%.4g, frequencies=%.4g, lengthscales=%.4g)", k.q,
		k.Weights.Value(), k.Frequencies.Value(), k.Lengthscales.Value())
}

// smSpec is the Config of SpectralMixture: the Params' name prefix, D and Q.
type smSpec struct {
	Name       string `json:"name"`
	InputDim   int    `json:"input_dim"`
	Components int    `json:"components"`
}

// Spec describes the kernel: the Params' name prefix, D and Q.
func (k *SpectralMixture) Spec() (Spec, error) {
	name, err := paramPrefix(k.Weights, ".weights")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindSpectralMixture, smSpec{Name: name, InputDim: k.dim, Components: k.q})
}

func init() {
	RegisterKind(KindSpectralMixture, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c smSpec
		if err := decodeLeaf(KindSpectralMixture, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindSpectralMixture, c.InputDim, c.Components); err != nil {
			return nil, err
		}
		return NewSpectralMixture(KernelConfig{Name: c.Name, InputDim: c.InputDim, Components: c.Components})
	})
	// The family users name: sm (DefaultComponents) and smQ for Q components (sm10, the larger mixture long
	// extrapolations want).
	RegisterKernel(KernelFamily{Name: "sm", Kind: KindSpectralMixture,
		Doc: fmt.Sprintf("spectral mixture Σ_q w_q Π_d exp(−2π²τ_d²v_qd) cos(2πτ_dμ_qd), Q = %d, ARD (sm7, sm10, …: that many components); initialised from the targets' periodogram", DefaultComponents),
		New: func(o KernelOptions) (Kernel, error) {
			return NewSpectralMixture(KernelConfig{Name: o.Name, InputDim: o.InputDim})
		},
		Sized: func(q int, o KernelOptions) (Kernel, error) {
			return NewSpectralMixture(KernelConfig{Name: o.Name, InputDim: o.InputDim, Components: q})
		}})
}

// ---------------------------------------------------------------------------------------------------------------
// Data-driven initialisation.

// SpectralMixtureInit holds initial hyperparameters of a spectral mixture: Weights [Q], Frequencies and
// Lengthscales [Q,D] row-major.
type SpectralMixtureInit struct {
	Weights, Frequencies, Lengthscales []float64
}

// InitSpectralMixture returns initial hyperparameters of a Q-component spectral mixture for inputs x [N,D] and
// targets y [N,P] (column 0), from the empirical spectral density of the standardised targets, the
// initialisation Wilson & Adams (2013) suggest for the SM kernel:
//
//  1. the linear trend: least squares of y on [1, x]; when it explains at least smTrendR2 of var(y) (and Q ≥ 2),
//     component 0 is the trend: frequency 0 and length-scale the record's length in every dimension, weight
//     R²·var(y); the periodograms read the residuals;
//  2. for each input dimension d, the Lomb–Scargle periodogram (Lomb 1976; Scargle 1982, eq. 10: unevenly spaced
//     inputs) of the residuals against x_d on the grid f = j·Δf, Δf = 1/(4T) (T the range of x_d: 4×
//     oversampled), up to the Nyquist frequency 1/(2·median spacing of the sorted distinct x_d) (at most
//     periodogramMaxFreqs frequencies; beyond, the top frequency is lowered);
//  3. its local maxima, largest first, without the side lobes of stronger ones (within 3/T); the remaining
//     components take them in order (fewer peaks than components: they repeat at 2, 3, … times their width);
//  4. μ_qd = the peak's frequency, its spectral standard deviation s = the peak's half width at half maximum
//     / √(2 ln 2) (at least Δf), ℓ_qd = 1/(2π s); the peaks' weights share the rest of var(y) in proportion to
//     their powers (averaged over the dimensions).
//
// For D > 1 the per-dimension spectra are marginal ones (as GPyTorch's empirical-spectrum initialisation reads
// each dimension apart): component q pairs the q-th peaks of the dimensions. Every weight is at least
// 10⁻³·var(y)/Q. At most periodogramMaxRows rows are read, a random subset drawn from rng beyond (rng is not used
// otherwise; nil: the first rows). Errors: shapes, non-finite values, q outside 1..maxComponents, fewer than
// 2 rows.
func InitSpectralMixture(x, y *mat.Dense, q int, rng *rand.Rand) (SpectralMixtureInit, error) {
	if x == nil || y == nil {
		return SpectralMixtureInit{}, configErr("InitSpectralMixture needs inputs and targets")
	}
	n, d := x.Dims()
	ny, py := y.Dims()
	if ny != n || py < 1 || n < 2 {
		return SpectralMixtureInit{}, &ops.ShapeError{Op: "gp.InitSpectralMixture", Want: "x [N,D] and y [N,P] with N ≥ 2", Got: fmt.Sprintf("x %dx%d, y %dx%d", n, d, ny, py)}
	}
	if q < 1 || q > maxComponents {
		return SpectralMixtureInit{}, configErr("InitSpectralMixture: q must be in 1..%d, got %d", maxComponents, q)
	}
	if err := ops.CheckFinite("InitSpectralMixture inputs", mat.DenseCopyOf(x).RawMatrix().Data, d); err != nil {
		return SpectralMixtureInit{}, err
	}
	if err := ops.CheckFinite("InitSpectralMixture targets", mat.DenseCopyOf(y).RawMatrix().Data, py); err != nil {
		return SpectralMixtureInit{}, err
	}
	rows, ys, vy := periodogramTargets(x, y, rng)
	if math.IsInf(vy, 0) {
		return SpectralMixtureInit{}, configErr("InitSpectralMixture: the targets' variance overflows")
	}
	// The linear trend and the residuals the periodograms read.
	r2, res := linearDetrend(x, rows, ys)
	first := 0 // the first component set from a peak
	if q >= 2 && r2 >= smTrendR2 {
		first = 1
	}
	out := SpectralMixtureInit{Weights: make([]float64, q), Frequencies: make([]float64, q*d), Lengthscales: make([]float64, q*d)}
	power := make([]float64, q)
	xs := make([]float64, len(rows))
	for k := 0; k < d; k++ {
		for i, r := range rows {
			xs[i] = x.At(r, k)
		}
		if first == 1 { // component 0: the trend, frequency 0 and the record's length
			lo, hi := slices.Min(xs), slices.Max(xs)
			out.Lengthscales[k] = hi - lo
			if !(hi > lo) {
				out.Lengthscales[k] = DefaultLengthscale
			}
		}
		peaks := periodogramPeaks(xs, res)
		for c := first; c < q; c++ {
			i := c - first
			p := peaks[i%len(peaks)]
			widen := float64(1 + i/len(peaks))
			out.Frequencies[c*d+k] = p.freq
			out.Lengthscales[c*d+k] = 1 / (2 * math.Pi * p.sd * widen)
			power[c] += p.power / widen
		}
	}
	if vy == 0 {
		vy = 1
	}
	share := vy // what the peaks share
	if first == 1 {
		out.Weights[0] = vy * r2
		share = vy * (1 - r2)
	}
	total := 0.0
	for _, p := range power[first:] {
		total += p
	}
	for c := first; c < q; c++ {
		if total > 0 {
			out.Weights[c] = share * power[c] / total
		} else {
			out.Weights[c] = share / float64(q-first)
		}
	}
	for c := range out.Weights {
		out.Weights[c] = math.Max(out.Weights[c], 1e-3*vy/float64(q)) // keep every component trainable
	}
	return out, nil
}

// smTrendR2 is the share of the targets' variance a linear trend must explain for InitSpectralMixture to give
// it a component of its own.
const smTrendR2 = 0.1

// SetInit sets the kernel's hyperparameters to in (sizes Q and Q·D; positive weights and length-scales).
func (k *SpectralMixture) SetInit(in SpectralMixtureInit) error {
	if len(in.Weights) != k.q || len(in.Frequencies) != k.q*k.dim || len(in.Lengthscales) != k.q*k.dim {
		return &ops.ShapeError{Op: "gp.SpectralMixture.SetInit", Want: fmt.Sprintf("Q = %d weights and Q·D = %d frequencies and length-scales", k.q, k.q*k.dim),
			Got: fmt.Sprintf("%d, %d, %d", len(in.Weights), len(in.Frequencies), len(in.Lengthscales))}
	}
	for _, s := range []struct {
		p *graph.Param
		v []float64
	}{{k.Weights, in.Weights}, {k.Frequencies, in.Frequencies}, {k.Lengthscales, in.Lengthscales}} {
		if err := s.p.Set(s.v); err != nil {
			return err
		}
	}
	return nil
}

// InitFromData sets the kernel's hyperparameters from the data (InitSpectralMixture with its Q, then SetInit).
func (k *SpectralMixture) InitFromData(x, y *mat.Dense, rng *rand.Rand) error {
	if x != nil {
		if _, d := x.Dims(); d != k.dim {
			return &ops.ShapeError{Op: "gp.SpectralMixture.InitFromData", Want: fmt.Sprintf("inputs with %d columns", k.dim), Got: fmt.Sprint(d)}
		}
	}
	in, err := InitSpectralMixture(x, y, k.q, rng)
	if err != nil {
		return err
	}
	return k.SetInit(in)
}

// ---------------------------------------------------------------------------------------------------------------
// One component: k = w exp(E) P, E = −½ Σ_d τ_d²/ℓ_d², P = Π_d C_d, C_d = cos(2π μ_d τ_d), S_d = sin(2π μ_d τ_d),
// τ = x1_i − x2_j. With the features c = cos(2π μ_d x̃), s = sin(2π μ_d x̃) of the centred inputs (x̃ = x − x̄1,
// ops.CovCentred), C_d = c1 c2 + s1 s2 and S_d = s1 c2 − c1 s2: no trigonometric call per pair. Per pair, with
// P₋d = Π_{e≠d} C_e (prefix and suffix products: no division by a cosine that may vanish),
//
//	∂k/∂τ_d = w exp(E) (−(τ_d/ℓ_d²) P − 2π μ_d S_d P₋d),   ∂k/∂μ_d = −2π w exp(E) τ_d S_d P₋d,
//	∂k/∂ℓ_d = k τ_d²/ℓ_d³,   ∂k/∂w = k/w,
//
// and dX1_i = Σ_j G_ij ∂k/∂τ, dX2_j = −Σ_i G_ij ∂k/∂τ, the hyperparameters' gradients Σ_ij G_ij ∂k/∂θ.

// smCov is the covariance function of one spectral-mixture component: hyperparameters weight w (scalar),
// frequencies μ [D], lengthscales ℓ [D]; k = w exp(−½ Σ_d τ_d²/ℓ_d²) Π_d cos(2π μ_d τ_d) (Wilson & Adams 2013,
// eq. 12 with v_d = 1/(4π² ℓ_d²)).
type smCov struct{}

// Name returns "SpectralMixture".
func (smCov) Name() string { return "SpectralMixture" }

// Hypers returns weight, frequencies [D], lengthscales [D].
func (smCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "weight"}, {Name: "frequencies", Vec: true}, {Name: "lengthscales", Vec: true}}
}

// smFeatures returns the row-major [n,d] features cos(2π μ_k x̃_ik) and sin(2π μ_k x̃_ik) of the transposed
// centred inputs xt [d,n] (pooled: give them back with ops.CovRelease).
func smFeatures(xt []float64, n, d int, mu []float64) (cs, sn []float64) {
	cs, sn = ops.CovScratch(n*d), ops.CovScratch(n*d)
	for k := 0; k < d; k++ {
		f := 2 * math.Pi * mu[k]
		for i, x := range xt[k*n : (k+1)*n] {
			sn[i*d+k], cs[i*d+k] = math.Sincos(f * x)
		}
	}
	return cs, sn
}

// smSetup holds what both passes need: the features and 1/ℓ².
type smSetup struct {
	n, m, d        int
	c1, s1, c2, s2 []float64
	inv2           []float64
}

func newSMSetup(x1, x2 ops.CovInput, h []ops.CovInput) smSetup {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	at, bt := ops.CovCentred(x1, x2)
	defer ops.CovRelease(at, bt)
	s := smSetup{n: n, m: m, d: d, inv2: ops.CovScratch(d)}
	s.c1, s.s1 = smFeatures(at, n, d, h[1].Data)
	s.c2, s.s2 = smFeatures(bt, m, d, h[1].Data)
	for k, l := range h[2].Data {
		s.inv2[k] = 1 / (l * l)
	}
	return s
}

func (s smSetup) release() { ops.CovRelease(s.c1, s.s1, s.c2, s.s2, s.inv2) }

// exps writes exp(−½ Σ_d τ_d²/ℓ_d²) of row i of xa against every row of xb into e (one per row of xb).
func (s smSetup) exps(xa, xb []float64, i int, e []float64) {
	d := s.d
	xi := xa[i*d : (i+1)*d]
	for j := range e {
		xj := xb[j*d : (j+1)*d]
		r := 0.0
		for k, v := range xi {
			t := v - xj[k]
			r += t * t * s.inv2[k]
		}
		e[j] = -0.5 * r
	}
	ops.VecExp(e, e)
}

func (c smCov) eval(x1, x2 ops.CovInput, h []ops.CovInput, w float64, out []float64) {
	s := newSMSetup(x1, x2, h)
	defer s.release()
	n, m, d := s.n, s.m, s.d
	ops.CovForRows(ops.CovChunks(n, m), n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			row := out[i*m : (i+1)*m]
			s.exps(x1.Data, x2.Data, i, row)
			ci, si := s.c1[i*d:(i+1)*d], s.s1[i*d:(i+1)*d]
			for j := range row {
				cj, sj := s.c2[j*d:(j+1)*d], s.s2[j*d:(j+1)*d]
				p := 1.0
				for k, v := range ci {
					p *= v*cj[k] + si[k]*sj[k]
				}
				row[j] = w * row[j] * p
			}
		}
	})
}

func (c smCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	c.eval(x1, x2, h, h[0].Scalar(), out)
}

// smBlock is the number of rows of x1 whose hyperparameter gradients are summed together before the blocks are
// added in order: the same bits for every GOMAXPROCS.
const smBlock = 16

// smRow is one goroutine's scratch for the pairs of one fixed row with its np partners: τ, C, S and the suffix
// products Π_{e>k} C_e [d,np]; the weights gw = G w exp(E), P and the running prefix product [np].
type smRow struct {
	tau, c, s, suf []float64
	gw, p, pre     []float64
}

func newSMRow(d, np int) smRow {
	return smRow{ops.CovScratch(d * np), ops.CovScratch(d * np), ops.CovScratch(d * np), ops.CovScratch(d * np),
		ops.CovScratch(np), ops.CovScratch(np), ops.CovScratch(np)}
}

func (r smRow) release() { ops.CovRelease(r.tau, r.c, r.s, r.suf, r.gw, r.p, r.pre) }

// rowGrad adds to out [d] the sum over the partners p of r.gw[p] ∂k/∂(operand wrt: x1, x2 or the frequencies) for
// the pairs of one fixed row: row fixed of x1 against every row of x2 (x1, frequencies), or row fixed of x2
// against every row of x1 (x2: the negated τ derivative). Each sum runs over the partners in order.
func (s smSetup) rowGrad(wrt int, x1, x2, mu []float64, fixed int, r smRow, out []float64) {
	d := s.d
	np := len(r.gw)
	for k := 0; k < d; k++ {
		tau, cd, sd := r.tau[k*np:(k+1)*np], r.c[k*np:(k+1)*np], r.s[k*np:(k+1)*np]
		if wrt == ops.CovWrtX2 { // fixed row j of x2, partners i over x1
			xj, cj, sj := x2[fixed*d+k], s.c2[fixed*d+k], s.s2[fixed*d+k]
			for i := range tau {
				ci, si := s.c1[i*d+k], s.s1[i*d+k]
				tau[i] = x1[i*d+k] - xj
				cd[i] = ci*cj + si*sj
				sd[i] = si*cj - ci*sj
			}
		} else { // fixed row i of x1, partners j over x2
			xi, ci, si := x1[fixed*d+k], s.c1[fixed*d+k], s.s1[fixed*d+k]
			for j := range tau {
				cj, sj := s.c2[j*d+k], s.s2[j*d+k]
				tau[j] = xi - x2[j*d+k]
				cd[j] = ci*cj + si*sj
				sd[j] = si*cj - ci*sj
			}
		}
	}
	// suffix products suf_k = Π_{e>k} C_e, P = Π C
	sufLast := r.suf[(d-1)*np : d*np]
	for p := range sufLast {
		sufLast[p] = 1
	}
	for k := d - 2; k >= 0; k-- {
		next, cn, cur := r.suf[(k+1)*np:(k+2)*np], r.c[(k+1)*np:(k+2)*np], r.suf[k*np:(k+1)*np]
		for p := range cur {
			cur[p] = next[p] * cn[p]
		}
	}
	pp, c0, s0 := r.p[:np], r.c[:np], r.suf[:np]
	for p := range pp {
		pp[p] = c0[p] * s0[p]
	}
	pre := r.pre[:np]
	for p := range pre {
		pre[p] = 1
	}
	gw := r.gw[:np]
	for k := 0; k < d; k++ {
		tau, cd, sd, suf := r.tau[k*np:(k+1)*np], r.c[k*np:(k+1)*np], r.s[k*np:(k+1)*np], r.suf[k*np:(k+1)*np]
		tau, cd, sd, suf = tau[:np], cd[:np], sd[:np], suf[:np]
		sum := 0.0
		if wrt == ops.CovWrtH0+1 { // frequencies: −2π τ S P₋k
			for p, g := range gw {
				sum += g * tau[p] * sd[p] * pre[p] * suf[p]
			}
			out[k] -= 2 * math.Pi * sum
		} else { // τ: −τ/ℓ² P − 2π μ S P₋k
			a, b := s.inv2[k], 2*math.Pi*mu[k]
			for p, g := range gw {
				sum += g * (-tau[p]*a*pp[p] - b*sd[p]*pre[p]*suf[p])
			}
			if wrt == ops.CovWrtX2 {
				out[k] -= sum
			} else {
				out[k] += sum
			}
		}
		for p := range pre {
			pre[p] *= cd[p]
		}
	}
}

func (c smCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, k, g []float64, dst []float64) {
	w := h[0].Scalar()
	if wrt == ops.CovWrtH0 {
		dst[0] = ops.CovVarianceGrad(g, k, w, func(u []float64) { c.eval(x1, x2, h, 1, u) })
		return
	}
	if wrt == ops.CovWrtH0+2 { // length-scales: ∂k/∂ℓ_d = k τ_d²/ℓ_d³ reads K alone
		c.ellGrad(x1, x2, h[2].Data, k, g, dst)
		return
	}
	s := newSMSetup(x1, x2, h)
	defer s.release()
	n, m, d := s.n, s.m, s.d
	mu := h[1].Data
	switch wrt {
	case ops.CovWrtX1: // row i of dX1 sums over j, in order
		ops.CovForRows(ops.CovChunks(n, m), n, func(_, lo, hi int) {
			r := newSMRow(d, m)
			defer r.release()
			for i := lo; i < hi; i++ {
				out := dst[i*d : (i+1)*d]
				clear(out)
				s.exps(x1.Data, x2.Data, i, r.gw)
				for j, ev := range r.gw {
					r.gw[j] = g[i*m+j] * w * ev
				}
				s.rowGrad(wrt, x1.Data, x2.Data, mu, i, r, out)
			}
		})
	case ops.CovWrtX2: // row j of dX2 sums over i, in order
		ops.CovForRows(ops.CovChunks(m, n), m, func(_, lo, hi int) {
			r := newSMRow(d, n)
			defer r.release()
			for j := lo; j < hi; j++ {
				out := dst[j*d : (j+1)*d]
				clear(out)
				s.exps(x2.Data, x1.Data, j, r.gw)
				for i, ev := range r.gw {
					r.gw[i] = g[i*m+j] * w * ev
				}
				s.rowGrad(wrt, x1.Data, x2.Data, mu, j, r, out)
			}
		})
	default: // frequencies: per block of smBlock rows, the blocks summed in order
		nb := (n + smBlock - 1) / smBlock
		acc := ops.CovScratch(nb * d)
		defer ops.CovRelease(acc)
		clear(acc)
		ops.CovForRows(min(ops.CovChunks(n, m), nb), nb, func(_, lo, hi int) {
			r := newSMRow(d, m)
			defer r.release()
			for b := lo; b < hi; b++ {
				out := acc[b*d : (b+1)*d]
				for i := b * smBlock; i < min(n, (b+1)*smBlock); i++ {
					s.exps(x1.Data, x2.Data, i, r.gw)
					for j, ev := range r.gw {
						r.gw[j] = g[i*m+j] * w * ev
					}
					s.rowGrad(wrt, x1.Data, x2.Data, mu, i, r, out)
				}
			}
		})
		copy(dst, acc[:d])
		for b := 1; b < nb; b++ {
			for k, v := range acc[b*d : (b+1)*d] {
				dst[k] += v
			}
		}
	}
}

// ellGrad writes Σ_ij G_ij K_ij τ_d²/ℓ_d³ into dst [D], summed per block of smBlock rows, the blocks in order.
func (smCov) ellGrad(x1, x2 ops.CovInput, ell, k, g, dst []float64) {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	nb := (n + smBlock - 1) / smBlock
	acc := ops.CovScratch(nb * d)
	defer ops.CovRelease(acc)
	clear(acc)
	ops.CovForRows(min(ops.CovChunks(n, m), nb), nb, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			out := acc[b*d : (b+1)*d]
			for i := b * smBlock; i < min(n, (b+1)*smBlock); i++ {
				xi := x1.Data[i*d : (i+1)*d]
				for j := 0; j < m; j++ {
					gk := g[i*m+j] * k[i*m+j]
					if gk == 0 {
						continue
					}
					xj := x2.Data[j*d : (j+1)*d]
					for kk, v := range xi {
						t := v - xj[kk]
						out[kk] += gk * t * t
					}
				}
			}
		}
	})
	for kk := 0; kk < d; kk++ {
		sum := 0.0
		for b := 0; b < nb; b++ {
			sum += acc[b*d+kk]
		}
		dst[kk] = sum / (ell[kk] * ell[kk] * ell[kk])
	}
}

func (smCov) Diag(_ ops.CovInput, h []ops.CovInput, out []float64) {
	w := h[0].Scalar()
	for i := range out {
		out[i] = w
	}
}

func (smCov) DiagGrad(wrt int, _ ops.CovInput, _ []ops.CovInput, _, g []float64, dst []float64) {
	ops.CovConstDiagGrad(wrt, g, dst)
}
