package zoo

import (
	"cmp"
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/grammar"
	"github.com/gpzoo/gpzoo/gp/layers"
	"gonum.org/v1/gonum/stat"
)

// The deep-GP entries (issue 5): Havasi, Hernández-Lobato & Murillo-Fuentes (2018, seed 003) Tables 4–5, coupled
// against decoupled deep GPs with 0–4 hidden layers of width 10, and the notebooks of Salimbeni & Deisenroth's
// Doubly-Stochastic-DGP repository (kin8nm DGP-2 and DGP-3, MNIST DGP-2).
//
// Every layer has an SE-ARD kernel (length-scales 1 on standardised inputs; variance 1 on the last layer and
// dgp.InnerKernelVariance = 0.01 on inner layers, so that they start near the identity; the MNIST entry uses the
// notebook's SE(ℓ=2, σ²=2) on raw pixels in every layer); inner layers add White(1e-5), start with q scaled by
// 1e-5 and have the fixed mean functions of dgp.Build; the Gaussian noise variance starts at 0.01. The decoupled
// layers are Havasi et al.'s μ_GPcent mean with their S-form covariance (MATH.md §10) in whitened coordinates
// (layers.CovSWhitened: the same variational family), with Ma mean and Mb covariance bases, each from its own
// k-means. Training uses S samples per point, prediction 100 (MNIST: 20); the reported test LL is the mixture's,
// and the moment-matched Gaussian's is reported beside it.

// dgpSpec configures one deep-GP entry.
type dgpSpec struct {
	data, model string
	family      string // "coupled" or "decoupled"
	hidden      int    // number of hidden layers
	width       int    // hidden width
	m           int    // coupled inducing inputs per layer
	ma, mb      int    // decoupled mean and covariance bases per layer
	samples     int    // S in training
	testSamples int
	batch       int // minibatch size (at most N)
	iters       int
	lr          float64
	kernelVar   float64       // initial kernel variance (0: 1)
	kernelLS    float64       // initial length-scale (0: 1)
	kernel      *grammar.Expr // every layer's kernel before the inner layers' White (nil: SE-ARD)
	noStdX      bool          // keep raw inputs (MNIST)
	kmeansIter  int
	// lastMix, when set, wraps the last layer, built with lastWidth outputs, into the outputs (an LMC: mixOutputs).
	lastMix   func(block gp.Layer) (gp.Layer, error)
	lastWidth int
	summary   string
	reference string
	published string
}

// Budgets of the deep-GP entries, cut to fit 2 cores (the entries' summaries say so). Havasi et al. train 5000
// epochs with minibatches of min(N, 10000) on a GPU (5000 full-batch steps on kin8nm, 25000 steps on protein); a
// full-batch kin8nm step of a 2-layer DGP takes ≈0.7 s here, so the Havasi entries take minibatches of 1024
// instead, which reach the published accuracy within the budgets below (see the issue-5 closing note).
const (
	// HavasiIters is the kin8nm budget of the Havasi entries (minibatch HavasiBatch).
	HavasiIters = 7000
	// HavasiProteinIters is the protein budget.
	HavasiProteinIters = 5000
	// HavasiBatch replaces the paper's min(N, 10000).
	HavasiBatch = 1024
	// DSDGPIters is the notebooks' 5000 iterations.
	DSDGPIters = 5000
	// MNISTDGPIters is the MNIST notebook's 20000 iterations.
	MNISTDGPIters = 20000
)

var havasiPublished = map[string][5]string{
	"kin8nm/coupled":    {"0.88 ± 0.02 / 0.10", "1.32 ± 0.03 / 0.07", "1.38 ± 0.02 / 0.06", "1.36 ± 0.03 / 0.07", "1.36 ± 0.01 / 0.07"},
	"kin8nm/decoupled":  {"1.01 ± 0.01 / 0.09", "1.34 ± 0.02 / 0.07", "1.37 ± 0.01 / 0.07", "1.37 ± 0.01 / 0.07", "1.38 ± 0.03 / 0.06"},
	"protein/coupled":   {"−2.93 ± 0.01 / 4.56", "−2.81 ± 0.01 / 4.13", "−2.76 ± 0.02 / 4.03", "−2.75 ± 0.01 / 4.00", "−2.73 ± 0.02 / 3.95"},
	"protein/decoupled": {"−2.90 ± 0.01 / 4.39", "−2.77 ± 0.01 / 4.04", "−2.71 ± 0.03 / 3.90", "−2.69 ± 0.03 / 3.87", "−2.68 ± 0.03 / 3.86"},
}

func init() {
	var specs []dgpSpec
	for _, d := range []string{"kin8nm", "protein"} {
		iters, table := HavasiIters, "Table 4"
		if d == "protein" {
			iters, table = HavasiProteinIters, "Table 5"
		}
		for _, fam := range []string{"coupled", "decoupled"} {
			for l := 0; l <= 4; l++ {
				sp := dgpSpec{data: d, model: fmt.Sprintf("dgp-%s-%d", fam, l), family: fam, hidden: l, width: 10,
					m: 200, ma: 500, mb: 100, samples: 1, testSamples: dgp.DefaultTestSamples, batch: HavasiBatch, iters: iters, lr: 0.01,
					reference: "Havasi, Hernández-Lobato & Murillo-Fuentes 2018 (seed 003), " + table + "; MATH.md §9–10",
					published: fmt.Sprintf("test LL / RMSE %s (5 random 80/20 splits, 5000 epochs on a GPU; ANCHORS §1.1)", havasiPublished[d+"/"+fam][l])}
				what := "coupled SVGP layers, M=200"
				if fam == "decoupled" {
					what = "decoupled layers (μ_GPcent, S-form), Ma=500, Mb=100"
				}
				sp.summary = fmt.Sprintf("DGP with %d hidden layer(s) of width 10, %s, SE-ARD, minibatch %d, "+
					"Adam 0.01, %d steps (the paper: minibatch min(N,10000), 5000 epochs on a GPU; cut to fit 2 cores) (%s)",
					l, what, HavasiBatch, iters, d)
				specs = append(specs, sp)
			}
		}
	}
	for _, l := range []int{2, 3} {
		pub := map[int]string{2: "DGP 2 layers: LL 1.291, RMSE 0.0661", 3: "DGP 3 layers: LL 1.304, RMSE 0.0655 (natgrad on the last layer + Adam: 1.315, 0.0650)"}[l]
		specs = append(specs, dgpSpec{data: "kin8nm", model: fmt.Sprintf("dsdgp-%d", l), family: "coupled", hidden: l - 1,
			width: 8, m: 100, samples: 5, testSamples: dgp.DefaultTestSamples, batch: 1000, iters: DSDGPIters, lr: 0.01,
			summary: fmt.Sprintf("DGP %d layers (hidden width = D = 8, identity means), coupled M=100, SE-ARD, 5 samples, "+
				"minibatch 1000, Adam 0.01, %d steps as in the notebook (kin8nm split K)", l, DSDGPIters),
			reference: "Doubly-Stochastic-DGP kin8nm notebook (Salimbeni & Deisenroth 2017); MATH.md §9",
			published: pub + " (one 7372/820 split; ANCHORS §1.2)"})
	}
	specs = append(specs, dgpSpec{data: "mnist", model: "dgp2-robustmax", family: "coupled", hidden: 1, width: 30, m: 100,
		samples: 1, testSamples: 20, batch: 1000, iters: MNISTDGPIters, lr: 0.01, kernelVar: 2, kernelLS: 2, noStdX: true,
		kmeansIter: 10,
		summary: fmt.Sprintf("DGP 2 layers (inner width 30, PCA mean), robust-max, M=100 k-means, SE(ℓ=2, σ²=2), "+
			"minibatch 1000, Adam 0.01, %d steps as in the notebook (MNIST)", MNISTDGPIters),
		reference: "Doubly-Stochastic-DGP MNIST notebook (Salimbeni & Deisenroth 2017); MATH.md §9",
		published: "DGP 2 layers: test LL −0.073, accuracy 97.94% (ANCHORS §1.2)"})
	for _, sp := range specs {
		widths := make([]int, sp.hidden)
		for i := range widths {
			widths[i] = sp.width
		}
		m := sp.m
		if sp.family == "decoupled" {
			m = sp.mb
		}
		e := configuredEntry(sp.data+"/"+sp.model, sp.data, sp.summary, sp.reference+"; split protocol: "+sources[sp.data].protocol,
			sp.published, CustomConfig{Family: "dgp", LayerFamily: sp.family, Hidden: widths, Inducing: m, MeanBases: sp.ma,
				Samples: sp.samples, TestSamples: sp.testSamples, BatchSize: sp.batch, Iters: sp.iters, LR: sp.lr,
				NoiseVariance: DGPInitialNoise, KernelVariance: sp.kernelVar, KernelLengthscale: sp.kernelLS,
				KMeansIters: cmp.Or(sp.kmeansIter, dgp.DefaultKMeansIters)})
		e.RawInputs, e.stream = sp.noStdX, 0xd9b
		register(e)
	}
}

// dgpFactory returns the layer factory of sp: kernels of sp.kernel (newKernel; SE-ARD by default) + White on inner layers, coupled or decoupled
// layers with Build's mean functions and inducing inputs, inner q scaled by dgp.InnerQScale.
func dgpFactory(sp dgpSpec, m, ma, mb int) dgp.LayerFactory {
	return func(s dgp.LayerSpec) (gp.Layer, error) {
		name := fmt.Sprintf("layer%d", s.Index)
		variance := sp.kernelVar
		if variance == 0 && s.Inner { // inner layers start near the identity (dgp.InnerKernelVariance)
			variance = dgp.InnerKernelVariance
		}
		kern, err := newKernel(sp.kernel, name, s.InputDim, variance, sp.kernelLS, nil)
		if err != nil {
			return nil, err
		}
		qscale := 1.0
		if s.Inner {
			if kern, err = dgp.InnerKernel(kern, name+".white"); err != nil {
				return nil, err
			}
			qscale = dgp.InnerQScale
		}
		if sp.family == "decoupled" {
			za, err := s.Inducing(ma)
			if err != nil {
				return nil, err
			}
			zb, err := s.Inducing(mb)
			if err != nil {
				return nil, err
			}
			// Havasi et al.'s μ_GPcent mean with the S-form covariance in whitened coordinates (CovSWhitened, the
			// same family as their S-form; issue 39). The last layer's S starts at the prior (SPrior: V = I), the
			// inner layers' near 0 (LBScale 1e-5).
			return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: kern, Zalpha: za, Zbeta: zb,
				OutputDim: s.OutputDim, Mean: s.Mean, MeanForm: layers.MeanGPCentred, CovForm: layers.CovSWhitened, LBScale: qscale,
				SPrior: !s.Inner})
		}
		z, err := s.Inducing(m)
		if err != nil {
			return nil, err
		}
		if !s.Inner && sp.lastMix != nil { // correlated outputs: lastWidth latent GPs mixed into s.OutputDim
			block, err := layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: kern, Z: z, OutputDim: sp.lastWidth, Mean: s.Mean, QSqrtScale: qscale})
			if err != nil {
				return nil, err
			}
			return sp.lastMix(block)
		}
		return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: kern, Z: z, OutputDim: s.OutputDim, Mean: s.Mean, QSqrtScale: qscale})
	}
}

// DGPInitialNoise is the initial Gaussian noise variance of the deep-GP entries (MATH.md §9).
const DGPInitialNoise = 0.01

// scoreDGP fills the test metrics of a deep GP from s propagated samples: RMSE of the mixture mean and the
// mixture test LL in original units (regression), or accuracy and mixture LL of the labels; the moment-matched
// Gaussian's LL goes beside it, labelled.
func scoreDGP(res *Result, model *dgp.DGP, s int, te *datasets.Dataset, std *datasets.Standardizer, rng *rand.Rand) (*Result, error) {
	p, err := model.Predict(te.X, gp.PredictOptions{Samples: s, Rand: rng})
	if err != nil {
		return nil, err
	}
	res.TestSamples = len(p.Components)
	lds, err := model.Score(p, te.Y)
	if err != nil {
		return nil, err
	}
	mix, mm := stat.Mean(lds.Mixture, nil), stat.Mean(lds.MomentMatched, nil)
	// What the targets are is the likelihood's registered family's to say: class labels are scored by accuracy;
	// real targets (Gaussian, Student-t, heteroscedastic, ...) and counts by the RMSE of the mixture's mean, and
	// the log density of standardised targets is shifted back to their original units.
	fam, known := gp.LikelihoodFamilyOf(model.Likelihood)
	_, classes := model.Likelihood.(gp.ClassLikelihood)
	if known {
		classes = fam.Classes
	}
	if classes {
		acc, _ := classMetrics(res, p.YMean, lds.Mixture, te.Y)
		res.TestAccuracy = &acc
	} else {
		if std != nil && !fam.RawTargets {
			_, cols := te.Y.Dims()
			off := 0.0
			for j := range cols {
				off += std.LogDensityOffset(j)
			}
			mix, mm = mix+off, mm+off
		}
		rmse, _ := gaussianScores(p, te, std) // the mixture's mean
		res.TestRMSE = &rmse
	}
	res.TestLL, res.TestLLKind = mix, fmt.Sprintf("mixture of %d samples", len(p.Components))
	res.TestLLMomentMatched = &mm
	return res, nil
}
