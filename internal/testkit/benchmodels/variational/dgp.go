package variational

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// The deep-GP benchmark's layer families.
const (
	DGPCoupled   = "coupled-M200"          // coupled SVGP layers, M = 200 (the configuration)
	DGPDecoupled = "decoupled-Ma500-Mb100" // decoupled layers (μ_GPcent, S-form), Ma = 500, Mb = 100 (Havasi et al.)
)

// DGPFamilies are the layer families DGP builds, in the benchmark's order.
var DGPFamilies = []string{DGPCoupled, DGPDecoupled}

// The minibatch deep-GP benchmark's shape (DGP): input dimension, hidden width, minibatch, samples; the inducing
// inputs of the coupled layers and the mean and covariance bases of the decoupled ones (every DGPShape's).
const (
	dgpDim, dgpWidth, dgpBatch, dgpSamples = 8, 8, 1024, 1
	dgpM, dgpMa, dgpMb                     = 200, 500, 100
)

// DGPShape is the shape of a deep-GP benchmark step: the layer family (DGPFamilies), L hidden layers of width
// Width (L+1 GP layers), N rows in the batch and D input columns; S = 1 sample per row.
type DGPShape struct {
	Family        string
	Hidden, Width int
	Rows, Dim     int
}

// MinibatchDGP is DGP(family)'s shape: one hidden layer of width 8, a minibatch of 1024 rows of 8 inputs.
func MinibatchDGP(family string) DGPShape {
	return DGPShape{Family: family, Hidden: 1, Width: dgpWidth, Rows: dgpBatch, Dim: dgpDim}
}

// Full-batch sizes of Havasi et al.'s tables (seed 003, Tables 4–5: minibatch min(N, 10000), width 10): kin8nm's
// 80 % training part (6,553 rows of 8 inputs) and protein's minibatch of 10,000 rows of 9 inputs.
const (
	FullBatchKin8nmRows, FullBatchKin8nmDim   = 6553, 8
	FullBatchProteinRows, FullBatchProteinDim = 10000, 9
	FullBatchWidth                            = 10
)

// FullBatchDGPs are the full-batch deep-GP steps of Havasi et al.'s tables that the benchmarks time: each family
// with L = 1 and L = 3 hidden layers on kin8nm's full batch and L = 4 on protein's 10,000-row batches.
var FullBatchDGPs = func() []DGPShape {
	var s []DGPShape
	for _, c := range []struct{ l, n, d int }{
		{1, FullBatchKin8nmRows, FullBatchKin8nmDim}, {3, FullBatchKin8nmRows, FullBatchKin8nmDim},
		{4, FullBatchProteinRows, FullBatchProteinDim},
	} {
		for _, f := range DGPFamilies {
			s = append(s, DGPShape{Family: f, Hidden: c.l, Width: FullBatchWidth, Rows: c.n, Dim: c.d})
		}
	}
	return s
}()

// Name returns the shape's benchmark name below DGPStep: the family alone for the minibatch shape (DGP's),
// else the family followed by L, N, D and W ("decoupled-Ma500-Mb100,L=3,N=6553,D=8,W=10").
func (s DGPShape) Name() string {
	if s == MinibatchDGP(s.Family) {
		return s.Family
	}
	return fmt.Sprintf("%s,L=%d,N=%d,D=%d,W=%d", s.Family, s.Hidden, s.Rows, s.Dim, s.Width)
}

// DGP returns the minibatch deep-GP step of the given family, DGPAt(MinibatchDGP(family)).
func DGP(family string) (*benchmodels.Step, error) { return DGPAt(MinibatchDGP(family)) }

// DGPAt returns one training step (sampled forward pass, backward pass, Adam) of a deep GP of shape s on
// ToyRegression data: s.Hidden hidden layers of width s.Width, S = 1, inner layers with a white-noise kernel term
// and dgp.Build's mean functions and k-means inducing inputs, layers of s.Family (DGPFamilies); the data set is
// the batch (full batch) or, for the minibatch shape, 10 batches long. Its Flops are DGPShapeFlops(s).
func DGPAt(s DGPShape) (*benchmodels.Step, error) {
	family := s.Family
	if family != DGPCoupled && family != DGPDecoupled {
		return nil, fmt.Errorf("variational: unknown deep-GP family %q (want %s or %s)", family, DGPCoupled, DGPDecoupled)
	}
	if s.Hidden < 0 || s.Width < 1 || s.Rows < 1 || s.Dim < 1 {
		return nil, fmt.Errorf("variational: deep-GP shape %+v: want L ≥ 0 and positive width, rows and inputs", s)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	x, y := benchmodels.ToyRegression(rng, s.Rows, s.Dim, 1)
	widths := make([]int, s.Hidden)
	for i := range widths {
		widths[i] = s.Width
	}
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: widths, Rand: rng, KMeansIters: 3,
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			k, err := benchmodels.ARDKernel(s.InputDim)
			if err != nil {
				return nil, err
			}
			if s.Inner {
				if k, err = dgp.InnerKernel(k, fmt.Sprint("white", s.Index)); err != nil {
					return nil, err
				}
			}
			name := fmt.Sprint("layer", s.Index)
			if family == DGPCoupled {
				z, err := s.Inducing(dgpM)
				if err != nil {
					return nil, err
				}
				return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
			}
			za, err := s.Inducing(dgpMa)
			if err != nil {
				return nil, err
			}
			zb, err := s.Inducing(dgpMb)
			if err != nil {
				return nil, err
			}
			return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: za, Zbeta: zb,
				OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS})
		}})
	if err != nil {
		return nil, err
	}
	lik, err := gaussian()
	if err != nil {
		return nil, err
	}
	numData := s.Rows // full batch
	if s == MinibatchDGP(family) {
		numData = 10 * s.Rows // the minibatch of a data set 10 batches long
	}
	m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: numData, Samples: dgpSamples, Rand: rand.New(rand.NewPCG(3, 3))})
	if err != nil {
		return nil, err
	}
	st, err := adamStep(m, x, y)
	if err != nil {
		return nil, err
	}
	st.Flops = DGPShapeFlops(s)
	return st, nil
}
