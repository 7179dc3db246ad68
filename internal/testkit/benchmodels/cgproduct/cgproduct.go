// Package cgproduct is the kernel-product benchmark of the CG exact GP (gp/cg), for go test -bench in gp/cg and
// for gpzoo bench. It sits apart from internal/benchmodels so that the step benchmarks of gp do not link gp/cg
// (and register its model kind in gp's tests).
package cgproduct

import (
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"gonum.org/v1/gonum/mat"
)

// ProductDim and ProductCols are the input dimension and the number of right-hand sides of the kernel-product
// benchmark: kin40k's 8 inputs, and one target column with GPyTorch's 10 probes (a CG iteration's block).
const (
	ProductDim  = 8
	ProductCols = 11
)

// KernelProduct is one product K·V of the CG exact GP (gp/cg.Blocks: SE-ARD, D = ProductDim, V [N, ProductCols]):
// with K kept whole (keep; computed once, before the first Run) or recomputed by blocks, the upper triangle
// only, at every Run.
type KernelProduct struct {
	b    *cg.Blocks
	v, w []float64
	// Flops counts one Run: 2N²c for the products (K_ij·V_j and K_ijᵀ·V_i of every block of the upper triangle,
	// or K·V when kept) plus, recomputed, the kernel's evaluation on the upper triangle, CovFlops(N, N, D)/2.
	Flops float64
}

// NewKernelProduct returns the product on n standard-normal rows.
func New(n int, keep bool) (*KernelProduct, error) {
	rng := rand.New(rand.NewPCG(2, uint64(n)))
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: ProductDim})
	if err != nil {
		return nil, err
	}
	mem := int64(-1)
	if keep {
		mem = int64(n) * int64(n) * 8
	}
	b, err := cg.NewBlocks(k, cg.BlocksOptions{Memory: mem})
	if err != nil {
		return nil, err
	}
	x := normals(rng, n, ProductDim).RawMatrix().Data
	hyper := make([][]float64, len(k.Params()))
	for i, p := range k.Params() {
		hyper[i] = p.Raw()
	}
	if err := b.Bind(x, n, ProductDim, hyper); err != nil {
		return nil, err
	}
	p := &KernelProduct{b: b, v: normals(rng, n, ProductCols).RawMatrix().Data, w: make([]float64, n*ProductCols)}
	nf := float64(n)
	p.Flops = 2 * nf * nf * ProductCols
	if keep {
		if err := p.Run(); err != nil { // forms K
			return nil, err
		}
	} else {
		p.Flops += benchmodels.CovFlops(nf, nf, ProductDim) / 2
	}
	return p, nil
}

// Run computes K·V once.
func (p *KernelProduct) Run() error { return p.b.Mul(p.v, ProductCols, p.w) }

// normals returns n×d standard-normal values.
func normals(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = rng.NormFloat64()
	}
	return x
}
