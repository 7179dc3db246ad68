package gp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Kernel is a covariance function.
type Kernel interface {
	// K returns the covariance matrix [N,M] between x1 [N,D] and x2 [M,D]. Passing the same node twice means
	// K(X, X) (a White kernel adds its variance only then).
	K(x1, x2 *graph.Node) *graph.Node
	// KDiag returns diag K(x, x) [N] for x [N,D].
	KDiag(x *graph.Node) *graph.Node
	// InputDim returns D.
	InputDim() int
	// Params returns the kernel's hyperparameters.
	Params() []*graph.Param
	// String describes the kernel and its current hyperparameters.
	String() string
}

// DefaultVariance and DefaultLengthscale are the initial values used when a config leaves them zero.
const (
	DefaultVariance    = 1.0
	DefaultLengthscale = 1.0
	DefaultAlpha       = 1.0
	DefaultPeriod      = 1.0
)

// ErrConfig is the sentinel of invalid configurations.
var ErrConfig = errors.New("gp: invalid configuration")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
}

// KernelConfig configures the built-in kernels. Zero values mean defaults.
type KernelConfig struct {
	// Name prefixes the hyperparameters' names (default: the family's name).
	Name string
	// InputDim is D (required, > 0).
	InputDim int
	// Variance is the initial signal variance (default DefaultVariance).
	Variance float64
	// Lengthscales: nil means ARD with every length-scale DefaultLengthscale; one value means an isotropic
	// kernel (a single length-scale shared by all dimensions); D values mean ARD with those initial values.
	// (For Linear, these are not used; see Variances.)
	Lengthscales []float64
	// Alpha is the RationalQuadratic shape (default DefaultAlpha).
	Alpha float64
	// Period is the Periodic kernel's period (default DefaultPeriod).
	Period float64
	// Variances are the Linear kernel's per-dimension variances: nil means one shared variance (Variance).
	Variances []float64
	// Components is the spectral mixture's number of components Q (0: its default).
	Components int
}

// Stationary is a kernel computed by one fused op (ops.CovMatrix) from its covariance function, a variance,
// length-scales and at most one more scalar hyperparameter (RationalQuadratic's alpha, Periodic's period). Each
// built-in family (kernel_*.go) is one such covariance function plus its Spec kind.
type Stationary struct {
	cov          ops.CovFunc
	kind         string
	dim          int
	iso          bool
	Variance     *graph.Param // scalar
	Lengthscales *graph.Param // [D], or a scalar when isotropic
	Extra        *graph.Param // alpha (RationalQuadratic), period (Periodic), else nil
	// dataInit sets the initial hyperparameters from the training data for the kinds that start from it (the
	// periodic kernel's period), else nil: InitFromData.
	dataInit func(k *Stationary, x, y *mat.Dense, rng *rand.Rand) error
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// NewStationaryKernel returns a kernel of the covariance function cov (hyperparameters: variance, lengthscales
// [D], then at most one extra scalar, initialised to extraInit) whose Spec has the given kind: the constructor of
// the built-in stationary families, and of a user's own (whose kind is registered with RegisterStationaryKind).
func NewStationaryKernel(kind string, cov ops.CovFunc, c KernelConfig, extraInit float64) (*Stationary, error) {
	f := cov.Name()
	if c.InputDim <= 0 {
		return nil, configErr("%v kernel: InputDim must be positive, got %d", f, c.InputDim)
	}
	hs := cov.Hypers()
	if len(hs) < 2 || len(hs) > 3 || hs[0].Vec || !hs[1].Vec || len(hs) == 3 && hs[2].Vec {
		return nil, configErr("%v kernel: hyperparameters %v are not (variance, lengthscales[, one scalar])", f, ops.CovHyperNames(cov))
	}
	name := c.Name
	if name == "" {
		name = strings.ToLower(f)
	}
	ls := c.Lengthscales
	switch len(ls) {
	case 0:
		ls = make([]float64, c.InputDim)
		for i := range ls {
			ls[i] = DefaultLengthscale
		}
	case 1, c.InputDim:
	default:
		return nil, configErr("%v kernel: %d length-scales for InputDim %d (want 1 or %d)", f, len(ls), c.InputDim, c.InputDim)
	}
	k := &Stationary{cov: cov, kind: kind, dim: c.InputDim, iso: len(ls) == 1 && c.InputDim > 1}
	var err error
	if k.Variance, err = graph.NewParam(name+".variance", []float64{orDefault(c.Variance, DefaultVariance)}, graph.Positive{}); err != nil {
		return nil, err
	}
	lshape := []int{len(ls)}
	if k.iso {
		lshape = nil // one shared length-scale: a scalar, broadcast over the D dimensions
	}
	if k.Lengthscales, err = graph.NewParam(name+".lengthscales", ls, graph.Positive{}, lshape...); err != nil {
		return nil, err
	}
	if len(hs) == 3 {
		if k.Extra, err = graph.NewParam(name+"."+hs[2].Name, []float64{extraInit}, graph.Positive{}); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *Stationary) hyper(g *graph.Graph) []*graph.Node {
	ls := g.Param(k.Lengthscales)
	if k.iso {
		ls = g.Mul(g.Fill(k.Lengthscales.Name()+".ones", 1, k.dim), ls)
	}
	h := []*graph.Node{g.Param(k.Variance), ls}
	if k.Extra != nil {
		h = append(h, g.Param(k.Extra))
	}
	return h
}

// K returns the covariance matrix [N,M].
func (k *Stationary) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.CovMatrix(k.cov, x1, x2, k.hyper(g)...)
}

// KDiag returns the diagonal [N].
func (k *Stationary) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(k.cov, x, k.hyper(g)...)
}

// InputDim returns D.
func (k *Stationary) InputDim() int { return k.dim }

// Cov returns the kernel's covariance function.
func (k *Stationary) Cov() ops.CovFunc { return k.cov }

// Kind returns the kernel's Spec kind.
func (k *Stationary) Kind() string { return k.kind }

// Params returns the variance, the length-scales and the extra hyperparameter if any.
func (k *Stationary) Params() []*graph.Param {
	ps := []*graph.Param{k.Variance, k.Lengthscales}
	if k.Extra != nil {
		ps = append(ps, k.Extra)
	}
	return ps
}

func (k *Stationary) String() string {
	s := fmt.Sprintf("%v(variance=%.4g, lengthscales=%.4g", k.cov.Name(), k.Variance.Value()[0], k.Lengthscales.Value())
	if k.Extra != nil {
		s += fmt.Sprintf(", %s=%.4g", k.Extra.Name(), k.Extra.Value()[0])
	}
	return s + ")"
}

// covExpChunk is the block over which the stationary profiles vectorise their exponentials (the buffer stays in
// the L1 cache).
const covExpChunk = 256

// expBufs recycles expBlocks' buffers: a buffer handed to pre and post (func values) escapes, and the profiles
// run once per group of rows, so a buffer of its own would be one allocation per group.
var expBufs = sync.Pool{New: func() any { return new([covExpChunk]float64) }}

// expBlocks runs a stationary profile over v in blocks of covExpChunk: pre(c, e) writes the exponents of the
// block c into e, one ops.VecExp over e, then post(c, e) combines (each may keep per-entry state in c).
func expBlocks(v []float64, pre, post func(c, e []float64)) {
	buf := expBufs.Get().(*[covExpChunk]float64)
	defer expBufs.Put(buf)
	for len(v) > 0 {
		c := v[:min(len(v), covExpChunk)]
		v = v[len(c):]
		e := buf[:len(c)]
		pre(c, e)
		ops.VecExp(e, e)
		post(c, e)
	}
}

// floorR2 returns max(r2, ops.CovR2Floor) (NaN propagates); inlined, unlike math.Max.
func floorR2(r2 float64) float64 {
	if r2 < ops.CovR2Floor {
		return ops.CovR2Floor
	}
	return r2
}
