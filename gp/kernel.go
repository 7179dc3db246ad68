package gp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
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
}

// Stationary is a kernel computed by one fused op (ops.CovMatrix) from its family, a variance, length-scales
// and, for RationalQuadratic and Periodic, one more hyperparameter.
type Stationary struct {
	family       ops.CovFamily
	dim          int
	iso          bool
	Variance     *graph.Param // scalar
	Lengthscales *graph.Param // [D], or a scalar when isotropic
	Extra        *graph.Param // alpha (RationalQuadratic), period (Periodic), else nil
}

// NewSquaredExp returns the squared-exponential (RBF) kernel σ² exp(−r²/2), r² = Σ_d (x_d − x'_d)²/ℓ_d².
func NewSquaredExp(c KernelConfig) (*Stationary, error) { return newStationary(ops.SquaredExp, c) }

// NewMatern12 returns the Matérn-1/2 (exponential) kernel σ² exp(−r).
func NewMatern12(c KernelConfig) (*Stationary, error) { return newStationary(ops.Matern12, c) }

// NewMatern32 returns the Matérn-3/2 kernel σ²(1 + √3 r) exp(−√3 r).
func NewMatern32(c KernelConfig) (*Stationary, error) { return newStationary(ops.Matern32, c) }

// NewMatern52 returns the Matérn-5/2 kernel σ²(1 + √5 r + 5r²/3) exp(−√5 r).
func NewMatern52(c KernelConfig) (*Stationary, error) { return newStationary(ops.Matern52, c) }

// NewRationalQuadratic returns σ²(1 + r²/(2α))^(−α).
func NewRationalQuadratic(c KernelConfig) (*Stationary, error) {
	return newStationary(ops.RationalQuadratic, c)
}

// NewPeriodic returns the periodic kernel (MacKay 1998) with period p; see ops.CovMatrix for its exact form.
func NewPeriodic(c KernelConfig) (*Stationary, error) { return newStationary(ops.Periodic, c) }

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func newStationary(f ops.CovFamily, c KernelConfig) (*Stationary, error) {
	if c.InputDim <= 0 {
		return nil, configErr("%v kernel: InputDim must be positive, got %d", f, c.InputDim)
	}
	name := c.Name
	if name == "" {
		name = strings.ToLower(f.String())
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
	k := &Stationary{family: f, dim: c.InputDim, iso: len(ls) == 1 && c.InputDim > 1}
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
	switch f {
	case ops.RationalQuadratic:
		k.Extra, err = graph.NewParam(name+".alpha", []float64{orDefault(c.Alpha, DefaultAlpha)}, graph.Positive{})
	case ops.Periodic:
		k.Extra, err = graph.NewParam(name+".period", []float64{orDefault(c.Period, DefaultPeriod)}, graph.Positive{})
	}
	if err != nil {
		return nil, err
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
	return g.CovMatrix(k.family, x1, x2, k.hyper(g)...)
}

// KDiag returns the diagonal [N].
func (k *Stationary) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(k.family, x, k.hyper(g)...)
}

// InputDim returns D.
func (k *Stationary) InputDim() int { return k.dim }

// Family returns the kernel's covariance family.
func (k *Stationary) Family() ops.CovFamily { return k.family }

// Params returns the variance, the length-scales and the extra hyperparameter if any.
func (k *Stationary) Params() []*graph.Param {
	ps := []*graph.Param{k.Variance, k.Lengthscales}
	if k.Extra != nil {
		ps = append(ps, k.Extra)
	}
	return ps
}

func (k *Stationary) String() string {
	s := fmt.Sprintf("%v(variance=%.4g, lengthscales=%.4g", k.family, k.Variance.Value()[0], k.Lengthscales.Value())
	if k.Extra != nil {
		s += fmt.Sprintf(", %s=%.4g", k.Extra.Name(), k.Extra.Value()[0])
	}
	return s + ")"
}
