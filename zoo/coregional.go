package zoo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"gonum.org/v1/gonum/mat"
)

// A multi-output set with a known coregionalisation, for the LMC entries. The classic multi-output benchmark is
// the Jura set (Goovaerts 1997, Appendix C: heavy-metal concentrations at 359 locations; predict Cd, Ni or Zn at
// the 100 validation locations from the other metals, as Álvarez & Lawrence 2011, Wilson et al. 2012 and Nguyen &
// Bonilla 2014 do), but no public copy with a permissive licence was found: the data come from Goovaerts' book
// (Oxford University Press, no licence of their own), R's gstat ships them under the GPL (≥ 2), and the GP papers'
// code reads them from those copies. So the set is synthetic and seeded, built the way an LMC assumes, which makes
// its structure known: P = 3 outputs from L = 2 latent GPs g_l ~ GP(0, SE with unit variance and length-scale
// coregLengthscale) over 2-D locations uniform on [0, coregSide]², mixed by the fixed coregW, plus Gaussian noise of
// standard deviation coregNoise on every output:
//
//	y_p(x) = Σ_l W_pl g_l(x) + ε_p,   Cov[f(x), f(x')] = W Wᵀ k(x, x')   (Álvarez et al. 2012, §4.2; rank-2 ICM).
//
// Two split protocols on the same coregRows locations, each seeded by the split index:
//   - "coreg": a random coregTest locations held out, every output scored there (full targets);
//   - "coreg-missing": Jura's heterotopic protocol with 30% of output 0's targets missing: output 0 is an empty cell
//     at a random 30% of the locations (their outputs 1 and 2 stay in the training rows), and the test is output 0
//     at those locations. The test rows are copies of those locations with only output 0 observed.

// coregW is the synthetic set's mixing matrix W [P=3, L=2]: outputs 0 and 1 share latent 0 strongly, output 2
// mostly follows latent 1, and output 1 carries latent 1 with the opposite sign.
var coregW = [3][2]float64{{1.0, 0.3}, {0.8, -0.6}, {0.2, 1.0}}

const (
	coregRows        = 360    // locations (Jura: 359)
	coregTest        = 100    // held-out locations of "coreg" (Jura: 100)
	coregMissingFrac = 0.3    // the share of output 0's cells left empty in "coreg-missing"
	coregSide        = 5.0    // the locations' square's side
	coregLengthscale = 0.6    // the latents' SE length-scale
	coregNoise       = 0.5    // the noise's standard deviation on every output
	coregSeed        = 0xc0e6 // the data's seed (fixed: every split sees the same locations and values)
)

const (
	protoCoreg        = "synthetic (seeded): 360 locations, 3 outputs from 2 latent GPs; a seeded random 100 held out (seed = split index), every output scored"
	protoCoregMissing = "synthetic (seeded): the same 360 locations; output 0 empty at a seeded random 30% (seed = split index), scored there from the rest (Jura's protocol)"
)

// coregionalData returns the synthetic set: X [coregRows, 2], Y [coregRows, 3] (see above), the same for every call.
func coregionalData() (*datasets.Dataset, error) {
	rng := rand.New(rand.NewPCG(coregSeed, 1))
	n, p, l := coregRows, len(coregW), len(coregW[0])
	x := mat.NewDense(n, 2, nil)
	for i := range n {
		x.Set(i, 0, coregSide*rng.Float64())
		x.Set(i, 1, coregSide*rng.Float64())
	}
	k := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			dx, dy := x.At(i, 0)-x.At(j, 0), x.At(i, 1)-x.At(j, 1)
			v := math.Exp(-(dx*dx + dy*dy) / (2 * coregLengthscale * coregLengthscale))
			if i == j {
				v += 1e-8 // jitter for the draw's factor only
			}
			k.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		return nil, fmt.Errorf("zoo: coreg: the latents' covariance is not positive definite")
	}
	var lo mat.TriDense
	ch.LTo(&lo)
	z := mat.NewDense(n, l, nil)
	for i := range n {
		for j := range l {
			z.Set(i, j, rng.NormFloat64())
		}
	}
	var g mat.Dense
	g.Mul(&lo, z) // [n, l]: column j a draw of latent j at the locations
	y := mat.NewDense(n, p, nil)
	for i := range n {
		for o := range p {
			f := 0.0
			for j := range l {
				f += coregW[o][j] * g.At(i, j)
			}
			y.Set(i, o, f+coregNoise*rng.NormFloat64())
		}
	}
	return &datasets.Dataset{Name: "coreg", X: x, Y: y, FeatureNames: []string{"x1", "x2"}}, nil
}

// coregPerm returns split k's permutation of the locations.
func coregPerm(k int) []int {
	return rand.New(rand.NewPCG(uint64(k), 0xc0e6)).Perm(coregRows)
}

// coregSplit is split k of "coreg": coregTest locations held out at random (seed k), every output scored.
func coregSplit(k int) (*datasets.Dataset, []int, []int, error) {
	d, err := coregionalData()
	if err != nil {
		return nil, nil, nil, err
	}
	perm := coregPerm(k)
	return d, perm[coregTest:], perm[:coregTest], nil
}

// coregMissingSplit is split k of "coreg-missing": output 0 is missing at a random coregMissingFrac of the
// locations (seed k), whose outputs 1 and 2 stay in the training rows; the test rows are copies of those locations
// with only output 0 observed.
func coregMissingSplit(k int) (*datasets.Dataset, []int, []int, error) {
	d, err := coregionalData()
	if err != nil {
		return nil, nil, nil, err
	}
	n, p := d.N(), d.P()
	miss := coregPerm(k)[:int(math.Round(coregMissingFrac*float64(n)))]
	t := len(miss)
	x := mat.NewDense(n+t, d.D(), nil)
	y := mat.NewDense(n+t, p, nil)
	obs := mat.NewDense(n+t, p, nil)
	x.Slice(0, n, 0, d.D()).(*mat.Dense).Copy(d.X)
	y.Slice(0, n, 0, p).(*mat.Dense).Copy(d.Y)
	train, test := make([]int, n), make([]int, t)
	for i := range n {
		train[i] = i
		for j := range p {
			obs.Set(i, j, 1)
		}
	}
	for r, i := range miss {
		obs.Set(i, 0, 0)
		y.Set(i, 0, 0) // a missing cell holds 0 (datasets.Dataset.Observed)
		row := n + r
		x.SetRow(row, d.X.RawRowView(i))
		y.Set(row, 0, d.Y.At(i, 0))
		obs.Set(row, 0, 1)
		test[r] = row
	}
	return &datasets.Dataset{Name: "coreg-missing", X: x, Y: y, FeatureNames: d.FeatureNames, Observed: obs}, train, test, nil
}

func init() {
	// The synthetic coregionalised set (above): an SVGP (SE kernel, M = 100, full batch, 1500 Adam steps) with independent outputs
	// (three latent GPs sharing the kernel and Z) and with an LMC of two latent GPs (W started from the training
	// targets' principal directions: initMixing), on full targets and on Jura's heterotopic protocol.
	sources["coreg"] = source{format: "embedded", protocol: protoCoreg, load: coregSplit}
	sources["coreg-missing"] = source{format: "embedded", protocol: protoCoregMissing, load: coregMissingSplit}
	const ref = "Álvarez, Rosasco & Lawrence (2012), Kernels for vector-valued functions: a review, §4.2 (the LMC); " +
		"the protocol of the Jura set (Goovaerts 1997) as in Álvarez & Lawrence (2011, §6) and Wilson et al. (2012, §5.1)"
	// The known result of a synthetic set: the generating model's own exact predictive (true W, length-scale and
	// noise; coregOracleLL in the tests) on split 0.
	const synth = "synthetic set with a known coregionalisation (W = [[1, 0.3], [0.8, -0.6], [0.2, 1]], SE length-scale 0.6, noise sd 0.5), no published numbers; the generating model's exact predictive scores test LL "
	const oracle, oracleMissing = synth + "−0.771 on split 0", synth + "−0.784 on split 0"
	for _, c := range []struct {
		data, model, summary, published string
		lmc                             int
	}{
		{"coreg", "svgp", "SVGP, SE kernel, M=100, 3 independent outputs, on a seeded synthetic set of 3 coregionalised outputs",
			oracle + "; compare coreg/lmc", 0},
		{"coreg", "lmc", "SVGP, SE kernel, M=100, LMC of 2 latent GPs into 3 outputs, on the synthetic coregionalised set",
			oracle + "; the bar: a higher test LL than coreg/svgp (independent outputs)", 2},
		{"coreg-missing", "svgp", "SVGP, 3 independent outputs, output 0 empty at 30% of the locations and predicted there (synthetic)",
			oracleMissing + "; compare coreg-missing/lmc", 0},
		{"coreg-missing", "lmc", "SVGP, LMC of 2 latent GPs, output 0 empty at 30% of the locations and predicted there (synthetic)",
			oracleMissing + " (on Jura the papers report this protocol's Cd MAE); the bar: a higher test LL than coreg-missing/svgp", 2},
	} {
		register(configuredEntry(c.data+"/"+c.model, c.data, c.summary, ref+"; split protocol: "+sources[c.data].protocol, c.published,
			CustomConfig{Family: "svgp", Kernel: "se", Inducing: 100, Iters: 1500, LR: 0.02, LMC: c.lmc}))
	}
}
