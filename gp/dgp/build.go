package dgp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// Initialisation defaults of Salimbeni & Deisenroth (2017, Sec. 4 and their code; MATH.md §9).
const (
	// InnerQScale is the factor of an inner layer's initial q(u) square root (S = 1e-10·I: the inner layers
	// start almost deterministic, so the DGP starts close to the composition of the mean functions).
	InnerQScale = 1e-5
	// InnerWhite is the variance of the white-noise kernel added to inner layers' kernels.
	InnerWhite = 1e-5
	// InnerKernelVariance is the initial variance of inner layers' kernels when the caller sets none (issue 39).
	// An inner layer's samples carry noise of variance k_xx − k_xZ K_ZZ⁻¹ k_Zx at least (the Nyström residual,
	// whatever q(u)): with the kernel variance 1 of Salimbeni & Deisenroth's code and 100 inducing inputs in 8–10
	// dimensions that is a standard deviation of 0.6–0.9 on standardised inputs, so a deep GP does not start near
	// the composition of its mean functions, as the near-deterministic q (InnerQScale) intends, but with inputs
	// its last layer cannot read. At 0.01 the inner layers start as near-identity maps (noise sd ≈ 0.06) and grow
	// their variance where the data pay for it; measured on kin8nm with decoupled layers (issue 39's closing
	// note), this raises the ELBO and test LL of every depth and lets the deeper models' depth pay.
	InnerKernelVariance = 0.01
	// DefaultKMeansIters bounds the Lloyd iterations of the inducing-input k-means.
	DefaultKMeansIters = 30
)

// LayerSpec is what Build knows about one layer when it asks a LayerFactory for it.
type LayerSpec struct {
	// Index is the layer's position (0 = input layer); Inner is false for the last layer only.
	Index int
	Inner bool
	// InputDim and OutputDim are the layer's widths.
	InputDim, OutputDim int
	// Mean is the inner layer's fixed mean function (identity, PCA projection or zero padding); nil (zero) for
	// the last layer.
	Mean gp.MeanFunction
	// Inputs are the training inputs pushed through the previous layers' mean functions [N,InputDim].
	Inputs *mat.Dense

	centres func(k int) (*mat.Dense, error)
}

// Inducing returns k inducing inputs for this layer: the k-means centres of the training inputs (computed once
// per k and shared by all layers), pushed through the previous layers' mean functions (MATH.md §9).
func (s LayerSpec) Inducing(k int) (*mat.Dense, error) { return s.centres(k) }

// LayerFactory builds the layer s describes. It must honour s.InputDim, s.OutputDim and s.Mean, and should
// initialise inner layers' q with InnerQScale, their kernels' variance with InnerKernelVariance, and add
// InnerWhite noise to their kernels (InnerKernel).
type LayerFactory func(s LayerSpec) (gp.Layer, error)

// BuildConfig configures Build.
type BuildConfig struct {
	// Widths are the hidden layers' widths (empty: a single layer, the SVGP).
	Widths []int
	// OutputDim is the last layer's width (the likelihood's latent dimension; default 1).
	OutputDim int
	// NewLayer builds each layer (required).
	NewLayer LayerFactory
	// KMeansIters bounds the k-means iterations (default DefaultKMeansIters).
	KMeansIters int
	// Rand seeds the k-means (required).
	Rand *rand.Rand
}

// Build returns the layers of a deep GP on inputs x [N,D]: for each hidden width, the inner mean function of
// Salimbeni & Deisenroth (identity when the width is kept, the projection on the top principal directions of
// the layer's inputs when it shrinks, identity with zero padding when it grows), then NewLayer for every layer
// in order, with the inputs and inducing inputs pushed through the mean functions so far.
func Build(x *mat.Dense, c BuildConfig) ([]gp.Layer, error) {
	if x == nil || c.NewLayer == nil || c.Rand == nil {
		return nil, fmt.Errorf("%w: Build needs inputs, a NewLayer factory and a Rand", ErrConfig)
	}
	n, d := x.Dims()
	if err := ops.CheckFinite("dgp.Build inputs", x.RawMatrix().Data, d); err != nil {
		return nil, err
	}
	out := c.OutputDim
	if out == 0 {
		out = 1
	}
	if out < 0 {
		return nil, fmt.Errorf("%w: OutputDim %d", ErrConfig, c.OutputDim)
	}
	for i, w := range c.Widths {
		if w <= 0 {
			return nil, fmt.Errorf("%w: hidden layer %d has width %d", ErrConfig, i, w)
		}
	}
	iters := c.KMeansIters
	if iters == 0 {
		iters = DefaultKMeansIters
	}
	widths := append(append([]int{d}, c.Widths...), out)
	// means[ℓ] maps layer ℓ's inputs to its mean; the data pushed through them gives the next layer's inputs.
	var means []gp.MeanFunction
	inputs := []*mat.Dense{mat.DenseCopyOf(x)}
	for l := range c.Widths {
		m, err := InnerMean(inputs[l], widths[l+1])
		if err != nil {
			return nil, fmt.Errorf("dgp: layer %d mean function: %w", l, err)
		}
		means = append(means, m)
		next, err := applyMean(m, inputs[l])
		if err != nil {
			return nil, fmt.Errorf("dgp: layer %d: %w", l, err)
		}
		inputs = append(inputs, next)
	}
	cache := map[int]*mat.Dense{}
	layers := make([]gp.Layer, len(widths)-1)
	for l := range layers {
		spec := LayerSpec{Index: l, Inner: l < len(layers)-1, InputDim: widths[l], OutputDim: widths[l+1], Inputs: inputs[l]}
		if spec.Inner {
			spec.Mean = means[l]
		}
		spec.centres = func(k int) (*mat.Dense, error) {
			z, ok := cache[k]
			if !ok {
				var err error
				if z, err = gp.KMeans(x, min(k, n), iters, c.Rand); err != nil {
					return nil, err
				}
				cache[k] = z
			}
			z = mat.DenseCopyOf(z)
			for _, m := range means[:l] {
				var err error
				if z, err = applyMean(m, z); err != nil {
					return nil, err
				}
			}
			return z, nil
		}
		layer, err := c.NewLayer(spec)
		if err != nil {
			return nil, fmt.Errorf("dgp: layer %d: %w", l, err)
		}
		if layer.InputDim() != spec.InputDim || layer.OutputDim() != spec.OutputDim {
			return nil, &ops.ShapeError{Op: "dgp.Build", Want: fmt.Sprintf("layer %d of widths %d→%d", l, spec.InputDim, spec.OutputDim), Got: fmt.Sprintf("%d→%d", layer.InputDim(), layer.OutputDim())}
		}
		layers[l] = layer
	}
	return layers, nil
}

// InnerMean returns the fixed mean function of an inner layer from width D (the columns of x) to q: the identity
// for q = D; for q < D the projection x·W on the top-q right singular vectors of x (the principal directions of
// the uncentred inputs, as Salimbeni & Deisenroth's code does, from the eigenvectors of xᵀx); for q > D the identity with zero padding.
func InnerMean(x *mat.Dense, q int) (gp.MeanFunction, error) {
	_, d := x.Dims()
	switch {
	case q <= 0:
		return nil, fmt.Errorf("%w: width %d", ErrConfig, q)
	case q == d:
		return gp.IdentityMean{D: d}, nil
	case q > d:
		w := make([]float64, d*q)
		for i := 0; i < d; i++ {
			w[i*q+i] = 1
		}
		return gp.NewProjectionMean(d, q, w)
	}
	// The right singular vectors of x are the eigenvectors of xᵀx [D,D]: O(N·D²) instead of an SVD of x.
	var xtx mat.SymDense
	xtx.SymOuterK(1, x.T())
	var eig mat.EigenSym
	if !eig.Factorize(&xtx, true) {
		return nil, fmt.Errorf("dgp: eigendecomposition of the layer inputs' Gram matrix failed")
	}
	var v mat.Dense
	eig.VectorsTo(&v) // columns in ascending order of eigenvalue
	w := make([]float64, d*q)
	for j := 0; j < q; j++ {
		col := d - 1 - j
		// Fix the sign (eigenvectors are defined up to it): the largest entry in magnitude is positive.
		big := 0
		for i := 1; i < d; i++ {
			if math.Abs(v.At(i, col)) > math.Abs(v.At(big, col)) {
				big = i
			}
		}
		sign := 1.0
		if v.At(big, col) < 0 {
			sign = -1
		}
		for i := 0; i < d; i++ {
			w[i*q+j] = sign * v.At(i, col)
		}
	}
	return gp.NewProjectionMean(d, q, w)
}

// applyMean evaluates the fixed mean functions InnerMean returns on plain data (gp.DataMean).
func applyMean(m gp.MeanFunction, x *mat.Dense) (*mat.Dense, error) {
	dm, ok := m.(gp.DataMean)
	if !ok {
		return nil, fmt.Errorf("%w: an inner mean function %T that cannot be evaluated on data (gp.DataMean)", ErrConfig, m)
	}
	return dm.MeanOf(x), nil
}

// InnerKernel returns k + White(InnerWhite), the kernel of an inner layer; name prefixes the white kernel's
// variance. The white kernel is built through the kernel registry (family "white"): an error if it is not
// registered.
func InnerKernel(k gp.Kernel, name string) (gp.Kernel, error) {
	f, ok := gp.LookupKernel("white")
	if !ok {
		return nil, fmt.Errorf("%w: an inner layer's kernel adds a white kernel, and no kernel family \"white\" is registered", ErrConfig)
	}
	w, err := f.New(gp.KernelOptions{Name: name, InputDim: k.InputDim()})
	if err != nil {
		return nil, err
	}
	ps := w.Params()
	if len(ps) != 1 {
		return nil, fmt.Errorf("%w: the white kernel has %d Params, want its variance only", ErrConfig, len(ps))
	}
	if err := ps[0].Set([]float64{InnerWhite}); err != nil {
		return nil, err
	}
	return gp.NewSum(k, w)
}
