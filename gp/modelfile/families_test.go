package modelfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Sizes of the synthetic problems: small enough for a few Adam steps per family to take milliseconds.
const (
	famN     = 30 // training points
	famD     = 2  // input dimension
	famM     = 6  // inducing points / bases
	famTest  = 9  // test points (ChunkRows 4 splits them into uneven chunks)
	famSteps = 5  // Adam steps: enough to move every trainable Param off its initial value
)

// famTask is what a family's model is trained on.
type famTask int

const (
	regression famTask = iota
	binary             // labels 0/1
	multiclass         // labels 0..2
	counts             // Poisson counts
)

// famData returns seeded synthetic data in original units (inputs off-centre and scaled, so that the
// standardisation matters) for a task, and test inputs in the same units.
func famData(task famTask, seed uint64) (ds *datasets.Dataset, xTest *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := mat.NewDense(famN, famD, nil)
	y := mat.NewDense(famN, 1, nil)
	for i := 0; i < famN; i++ {
		a, b := 10+3*rng.NormFloat64(), -5+0.5*rng.NormFloat64()
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		f := math.Sin((a-10)/2) + (b + 5)
		switch task {
		case regression:
			y.Set(i, 0, 100+20*f+rng.NormFloat64())
		case binary:
			y.Set(i, 0, float64(b2i(f > 0)))
		case multiclass:
			y.Set(i, 0, float64(min(2, max(0, int(math.Floor(f+1.5))))))
		case counts:
			y.Set(i, 0, math.Floor(math.Exp(0.5*f)+rng.Float64()))
		}
	}
	ds = &datasets.Dataset{Name: "synthetic", X: x, Y: y}
	if task == binary {
		ds.NumClasses = 2
	} else if task == multiclass {
		ds.NumClasses = 3
	}
	xTest = mat.NewDense(famTest, famD, nil)
	for i := 0; i < famTest; i++ {
		xTest.Set(i, 0, 10+4*rng.NormFloat64())
		xTest.Set(i, 1, -5+rng.NormFloat64())
	}
	return ds, xTest
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// famKernel returns an SE-ARD kernel named name (Params "<name>.variance", ...).
func famKernel(t *testing.T, name string, d int) gp.Kernel {
	t.Helper()
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 1 + 0.1*float64(i)
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{Name: name, InputDim: d, Variance: 1, Lengthscales: ls})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// famZ returns the first m standardised training inputs (inducing inputs / bases).
func famZ(x *mat.Dense, m, from int) *mat.Dense {
	_, d := x.Dims()
	return mat.DenseCopyOf(x.Slice(from, from+m, 0, d))
}

// famCase builds one family's model on standardised training data.
type famCase struct {
	name     string
	task     famTask
	needData bool // exact GP and SGPR predict from the training data
	build    func(t *testing.T, x, y *mat.Dense) modelfile.Model
}

// famSVGP wraps a layer and a likelihood into an SVGP model.
func famSVGP(t *testing.T, l gp.Layer, err error, lik gp.Likelihood, lerr error) modelfile.Model {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if lerr != nil {
		t.Fatal(lerr)
	}
	m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: famN})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func famGaussian() (gp.Likelihood, error) {
	return likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.2})
}

func famCases() []famCase {
	cases := []famCase{
		{"GPR", regression, true, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			mean, err := gp.NewLinearMean("mean", famD, 1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			m, err := gp.NewGPR(gp.GPRConfig{Kernel: famKernel(t, "kern", famD), Mean: mean})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{"SGPR", regression, true, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			m, err := models.NewSGPR(models.SGPRConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(x, famM, 0)})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
	}
	svgp := func(name string, task famTask, lik func() (gp.Likelihood, error), latent int) famCase {
		return famCase{name, task, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(x, famM, 0), OutputDim: latent})
			lk, lerr := lik()
			return famSVGP(t, l, err, lk, lerr)
		}}
	}
	cases = append(cases,
		svgp("SVGP/gaussian", regression, famGaussian, 1),
		svgp("SVGP/bernoulli", binary, func() (gp.Likelihood, error) {
			return likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
		}, 1),
		svgp("SVGP/robustmax", multiclass, func() (gp.Likelihood, error) {
			return likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3})
		}, 3),
		svgp("SVGP/softmax", multiclass, func() (gp.Likelihood, error) {
			return likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: 3, NumSamples: 3, PredictSamples: 40, Rand: rand.New(rand.NewPCG(3, 3))})
		}, 3),
		svgp("SVGP/studentt", regression, func() (gp.Likelihood, error) {
			return likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.5, DF: 4})
		}, 1),
		svgp("SVGP/poisson", counts, func() (gp.Likelihood, error) {
			return likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: 0.5})
		}, 1),
	)
	// Exact GPs with non-Gaussian likelihoods (gp/approx): the Laplace approximation and EP.
	exact := func(name string, task famTask, inf approx.Inference, lik func() (gp.Likelihood, error)) famCase {
		return famCase{name, task, true, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			lk, err := lik()
			if err != nil {
				t.Fatal(err)
			}
			mean, err := gp.NewConstantMean("mean", []float64{0.1})
			if err != nil {
				t.Fatal(err)
			}
			m, err := approx.New(approx.Config{Kernel: famKernel(t, "kern", famD), Mean: mean, Likelihood: lk, Inference: inf})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}}
	}
	cases = append(cases,
		exact("GPR/laplace-bernoulli", binary, approx.Laplace, func() (gp.Likelihood, error) {
			return likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
		}),
		exact("GPR/ep-bernoulli-logit", binary, approx.EP, func() (gp.Likelihood, error) {
			return likelihoods.NewBernoulliLogit(likelihoods.BernoulliConfig{})
		}),
		exact("GPR/laplace-poisson", counts, approx.Laplace, func() (gp.Likelihood, error) {
			return likelihoods.NewPoisson(likelihoods.PoissonConfig{BinSize: 0.5})
		}),
		exact("GPR/ep-studentt", regression, approx.EP, func() (gp.Likelihood, error) {
			return likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.5, DF: 4})
		}),
	)
	for _, mf := range []layers.MeanForm{layers.MeanCB, layers.MeanGP, layers.MeanGPCentred} {
		for _, cf := range []layers.CovForm{layers.CovB, layers.CovS, layers.CovSWhitened} {
			cases = append(cases, famCase{fmt.Sprintf("DECOUPLED/%v-%v", mf, cf), regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
				l, err := layers.NewDecoupled(layers.DecoupledConfig{Kernel: famKernel(t, "kern", famD), Zalpha: famZ(x, famM+2, 0), Zbeta: famZ(x, famM-2, 4),
					MeanForm: mf, CovForm: cf, SPrior: cf != layers.CovB})
				lk, lerr := famGaussian()
				return famSVGP(t, l, err, lk, lerr)
			}})
		}
	}
	cases = append(cases,
		famCase{"HYBRID", regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			l, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(x, famM, 0)}, Zgamma: famZ(x, 4, famM)})
			lk, lerr := famGaussian()
			return famSVGP(t, l, err, lk, lerr)
		}},
		famCase{"ORTH", regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(x, famM, 0), Unwhitened: true}, Zgamma: famZ(x, 4, famM)})
			lk, lerr := famGaussian()
			return famSVGP(t, l, err, lk, lerr)
		}},
		famCase{"DGP/coupled+decoupled", regression, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			lk, err := famGaussian()
			if err != nil {
				t.Fatal(err)
			}
			return famDGP(t, x, lk, 1)
		}},
		famCase{"DGP/robustmax", multiclass, false, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
			lk, err := likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3})
			if err != nil {
				t.Fatal(err)
			}
			return famDGP(t, x, lk, 3)
		}},
	)
	return cases
}

// famCG is the exact GP trained by conjugate gradients (package gp/cg), with a linear mean: its model file holds
// the prediction cache. It follows every other case (the cases' seeds are their indices).
func famCG() famCase {
	return famCase{"GPR-CG", regression, true, func(t *testing.T, x, y *mat.Dense) modelfile.Model {
		mean, err := gp.NewLinearMean("mean", famD, 1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cg.NewGPR(cg.Config{Kernel: famKernel(t, "kern", famD), Mean: mean, LOVERank: 10, LOVEPrecondRank: 5})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}}
}

// famDGP returns a 2-layer deep GP: a coupled SVGP inner layer (width 3, zero-padding mean, white-noise kernel)
// and a decoupled (GP-centred mean, S-form covariance) output layer.
// needWhite skips the test of the model named name (a deep GP's, whose inner layers add a white kernel:
// dgp.InnerKernel) if kernel white is not registered (kernel_white.go deleted).
func needWhite(tb testing.TB, name string) {
	tb.Helper()
	if strings.HasPrefix(name, "DGP") {
		gptest.NeedKernel(tb, "white", "the deep GP's inner layers add a white kernel (dgp.InnerKernel)")
	}
}

func famDGP(t *testing.T, x *mat.Dense, lik gp.Likelihood, out int) modelfile.Model {
	t.Helper()
	needWhite(t, "DGP")
	ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{3}, OutputDim: out, Rand: rand.New(rand.NewPCG(4, 4)),
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			name := fmt.Sprintf("layer%d", s.Index)
			z, err := s.Inducing(famM)
			if err != nil {
				return nil, err
			}
			k := famKernel(t, name+".kern", s.InputDim)
			if s.Inner {
				if k, err = dgp.InnerKernel(k, name+".white"); err != nil {
					return nil, err
				}
				return layers.NewSVGP(layers.SVGPConfig{Name: name, Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean, QSqrtScale: dgp.InnerQScale})
			}
			return layers.NewDecoupled(layers.DecoupledConfig{Name: name, Kernel: k, Zalpha: z, Zbeta: mat.DenseCopyOf(z.Slice(0, 4, 0, s.InputDim)),
				OutputDim: s.OutputDim, MeanForm: layers.MeanGPCentred, CovForm: layers.CovS, SPrior: true})
		}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: lik, NumData: famN, Samples: 2, Rand: rand.New(rand.NewPCG(5, 5))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// famPredict returns Predict's outputs as one slice (Mean, Var, Probs in order; nil parts skipped) and checks
// their shapes.
func famPredict(t *testing.T, f *modelfile.File, x *mat.Dense, task famTask) []float64 {
	t.Helper()
	p, err := f.Predict(x, modelfile.PredictOptions{Samples: 5, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	var out []float64
	switch task {
	case binary, multiclass:
		if p.Mean != nil || p.Var != nil || p.Probs == nil {
			t.Fatalf("classifier prediction with Mean %v, Var %v, Probs %v", p.Mean != nil, p.Var != nil, p.Probs != nil)
		}
		r, k := p.Probs.Dims()
		if want := map[famTask]int{binary: 2, multiclass: 3}[task]; r != n || k != want {
			t.Fatalf("Probs [%d,%d], want [%d,%d]", r, k, n, want)
		}
		for i := 0; i < r; i++ {
			if s := mat.Sum(p.Probs.RowView(i)); math.Abs(s-1) > 1e-9 {
				t.Errorf("row %d probabilities sum to %v", i, s)
			}
		}
		out = append(out, p.Probs.RawMatrix().Data...)
	default:
		if p.Mean == nil || p.Var == nil || p.Probs != nil {
			t.Fatalf("regression prediction with Mean %v, Var %v, Probs %v", p.Mean != nil, p.Var != nil, p.Probs != nil)
		}
		if r, c := p.Mean.Dims(); r != n || c != 1 {
			t.Fatalf("Mean [%d,%d], want [%d,1]", r, c, n)
		}
		for i, v := range p.Var.RawMatrix().Data {
			if !(v > 0) {
				t.Errorf("variance %d is %v", i, v)
			}
		}
		out = append(append(out, p.Mean.RawMatrix().Data...), p.Var.RawMatrix().Data...)
	}
	for i, v := range out {
		if math.IsNaN(v) {
			t.Fatalf("prediction %d is NaN", i)
		}
	}
	return out
}

// TestFamiliesRoundTrip trains every model family briefly, saves it, loads it and requires bit-identical
// predictions, standardizer and metadata.
func TestFamiliesRoundTrip(t *testing.T) {
	t.Parallel()
	for i, c := range append(famCases(), famCG()) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ds, xTest := famData(c.task, uint64(i+1))
			std, err := datasets.FitStandardizer(ds, c.task == regression)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := std.Apply(ds)
			if err != nil {
				t.Fatal(err)
			}
			m := c.build(t, tr.X, tr.Y)
			before := rawCopy(m)
			if _, err := train.Train(m, tr.X, tr.Y, rand.New(rand.NewPCG(6, 6)), train.Config{Iters: famSteps, Optimizer: &train.Adam{LR: 0.05}}); err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(before, rawCopy(m)) {
				t.Fatal("training did not move the parameters")
			}
			f := &modelfile.File{Model: m, Standardizer: std, Meta: map[string]string{"family": c.name, "seed": fmt.Sprint(i + 1)}}
			if c.needData {
				if err := m.(gp.DataHolder).SetTrainingData(tr.X, tr.Y); err != nil {
					t.Fatal(err)
				}
			}
			want := famPredict(t, f, xTest, c.task)
			if again := famPredict(t, f, xTest, c.task); !reflect.DeepEqual(bitsOf(again), bitsOf(want)) {
				t.Fatal("two predictions with the same options differ")
			}

			var buf bytes.Buffer
			if err := modelfile.Save(&buf, f); err != nil {
				t.Fatal(err)
			}
			g, err := modelfile.Load(&buf, gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			if reflect.TypeOf(g.Model) != reflect.TypeOf(m) {
				t.Fatalf("loaded a %T, want %T", g.Model, m)
			}
			if got := famPredict(t, g, xTest, c.task); !reflect.DeepEqual(bitsOf(got), bitsOf(want)) {
				t.Errorf("predictions after loading differ:\n got %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(g.Standardizer, f.Standardizer) {
				t.Errorf("standardizer %+v, want %+v", g.Standardizer, f.Standardizer)
			}
			for k, v := range f.Meta {
				if g.Meta[k] != v {
					t.Errorf("Meta[%q] = %q, want %q", k, g.Meta[k], v)
				}
			}
			if c.needData {
				fx, fy := m.(gp.DataHolder).TrainingData()
				gx, gy := g.Model.(gp.DataHolder).TrainingData()
				if !mat.Equal(gx, fx) || !mat.Equal(gy, fy) {
					t.Error("training data differ after loading")
				}
			}
		})
	}
}

func rawCopy(m gp.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Params() {
		out = append(out, append([]float64(nil), p.Raw()...))
	}
	return out
}

func bitsOf(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}

// TestPredictUnitsAndNoise checks Predict's arithmetic on the exact GP: inputs standardised, the noise added to
// the latent variance, and the mean and variance mapped back to original units.
func TestPredictUnitsAndNoise(t *testing.T) {
	t.Parallel()
	ds, xTest := famData(regression, 1)
	std, err := datasets.FitStandardizer(ds, true)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := std.Apply(ds)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: famKernel(t, "kern", famD), NoiseVariance: 0.3, X: tr.X, Y: tr.Y})
	if err != nil {
		t.Fatal(err)
	}
	f := &modelfile.File{Model: m, Standardizer: std}
	p, err := f.Predict(xTest, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xs, err := std.ApplyX(xTest)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := m.Predict(xs, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < famTest; i++ {
		wm := ref.FMean.At(i, 0)*std.YStd[0] + std.YMean[0]
		wv := (ref.FVar.At(i, 0) + 0.3) * std.YStd[0] * std.YStd[0]
		if gm, gv := p.Mean.At(i, 0), p.Var.At(i, 0); math.Abs(gm-wm) > 1e-9*math.Abs(wm) || math.Abs(gv-wv) > 1e-9*wv {
			t.Errorf("row %d: mean %v, var %v; want %v, %v", i, gm, gv, wm, wv)
		}
	}
}

// TestPredictBernoulliColumns checks the [N,2] layout of binary probabilities: p(y=0), p(y=1).
func TestPredictBernoulliColumns(t *testing.T) {
	t.Parallel()
	ds, xTest := famData(binary, 2)
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: famKernel(t, "kern", famD), Z: famZ(ds.X, famM, 0)})
	if err != nil {
		t.Fatal(err)
	}
	raw := l.Q.Mu.Raw()
	for i := range raw {
		raw[i] = 0.5 * float64(i-2) // a mean away from 0, so that the probabilities are not all ½
	}
	m := famSVGP(t, l, nil, lik, nil).(*models.SVGP)
	p, err := (&modelfile.File{Model: m}).Predict(xTest, modelfile.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mp, err := m.Predict(xTest, gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mu := mp.YMean
	for i := 0; i < famTest; i++ {
		// File.Predict runs PredictChunk rows at a time: the same value up to round-off.
		if math.Abs(p.Probs.At(i, 1)-mu.At(i, 0)) > 1e-12 || math.Abs(p.Probs.At(i, 0)-(1-mu.At(i, 0))) > 1e-12 {
			t.Errorf("row %d: probabilities %v, %v; want %v, %v", i, p.Probs.At(i, 0), p.Probs.At(i, 1), 1-mu.At(i, 0), mu.At(i, 0))
		}
	}
}

// TestPredictSeeds checks that a deep GP's predictions depend on the seed only: the same Rand seed gives the
// same numbers, another seed other numbers.
func TestPredictSeeds(t *testing.T) {
	t.Parallel()
	ds, xTest := famData(regression, 3)
	lik, err := famGaussian()
	if err != nil {
		t.Fatal(err)
	}
	f := &modelfile.File{Model: famDGP(t, ds.X, lik, 1)}
	// Give the inner layer some variance, so that the samples matter.
	for _, p := range f.Model.Params() {
		raw := p.Raw()
		for i := range raw {
			raw[i] += 0.3 * math.Sin(float64(i+1))
		}
	}
	pred := func(seed uint64) []float64 {
		p, err := f.Predict(xTest, modelfile.PredictOptions{Samples: 3, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return p.Mean.RawMatrix().Data
	}
	a, b, c := pred(1), pred(1), pred(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different predictions")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds gave the same predictions")
	}
}

func TestPredictErrors(t *testing.T) {
	t.Parallel()
	ds, xTest := famData(regression, 4)
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: famKernel(t, "kern", famD), X: ds.X, Y: ds.Y})
	if err != nil {
		t.Fatal(err)
	}
	f := &modelfile.File{Model: m}

	var se *ops.ShapeError
	if _, err := f.Predict(mat.NewDense(3, famD+1, nil), modelfile.PredictOptions{}); !errors.As(err, &se) {
		t.Errorf("wrong width: %v, want a *ops.ShapeError", err)
	}
	if _, err := f.Predict(nil, modelfile.PredictOptions{}); !errors.As(err, &se) {
		t.Errorf("nil inputs: %v, want a *ops.ShapeError", err)
	}
	bad := mat.DenseCopyOf(xTest)
	bad.Set(4, 1, math.Inf(-1))
	var nf *ops.NonFiniteError
	if _, err := f.Predict(bad, modelfile.PredictOptions{}); !errors.As(err, &nf) || nf.Row != 4 || nf.Col != 1 {
		t.Errorf("non-finite input: %v, want a *ops.NonFiniteError at row 4, column 1", err)
	}
	noData, err := gp.NewGPR(gp.GPRConfig{Kernel: famKernel(t, "kern", famD)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&modelfile.File{Model: noData}).Predict(xTest, modelfile.PredictOptions{}); !errors.Is(err, modelfile.ErrNoTrainingData) {
		t.Errorf("no training data: %v, want ErrNoTrainingData", err)
	}
	std := &datasets.Standardizer{XMean: []float64{0, 0}, XStd: []float64{1, 1}, YMean: []float64{0, 0}, YStd: []float64{1, 1}}
	if _, err := (&modelfile.File{Model: m, Standardizer: std}).Predict(xTest, modelfile.PredictOptions{}); !errors.As(err, &se) {
		t.Errorf("standardizer of 2 targets for 1 output: %v, want a *ops.ShapeError", err)
	}
	if _, err := (*modelfile.File)(nil).Predict(xTest, modelfile.PredictOptions{}); err == nil {
		t.Error("nil File: no error")
	}
	if _, err := (&modelfile.File{Model: &models.SVGP{}}).Predict(xTest, modelfile.PredictOptions{}); err == nil {
		t.Error("incomplete SVGP: no error")
	}
}
