package likelihoods_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// maskedSetup is a two-output SVGP layer on seeded data with about 30% of output 1's cells missing.
type maskedSetup struct {
	x, y, mask *mat.Dense // x [N,1], y [N,2] (missing cells 0), mask [N,2]
	layer      *layers.SVGP
	n          int
}

func newMaskedSetup(t *testing.T, seed uint64) *maskedSetup {
	t.Helper()
	const n, m = 14, 5
	rng := rand.New(rand.NewPCG(seed, 32))
	x, y, mask := mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		xi := 4*rng.Float64() - 2
		x.Set(i, 0, xi)
		y.Set(i, 0, math.Sin(2*xi)+0.1*rng.NormFloat64())
		y.Set(i, 1, math.Cos(xi)+0.1*rng.NormFloat64())
		mask.Set(i, 0, 1)
		mask.Set(i, 1, 1)
		if i%3 == 1 { // rows 1, 4, 7, 10, 13: output 1 unobserved
			mask.Set(i, 1, 0)
			y.Set(i, 1, 0)
		}
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		t.Fatal(err)
	}
	z := mat.NewDense(m, 1, []float64{-1.8, -0.9, 0, 0.9, 1.8})
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z, OutputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	// A q(u) away from the prior, so that every term depends on it.
	for _, p := range layer.Params() {
		raw := slices.Clone(p.Raw())
		for k := range raw {
			raw[k] += 0.1 * rng.NormFloat64()
		}
		if err := p.SetRaw(raw); err != nil {
			t.Fatal(err)
		}
	}
	return &maskedSetup{x: x, y: y, mask: mask, layer: layer, n: n}
}

// packed returns [y | mask].
func (s *maskedSetup) packed(y *mat.Dense) *mat.Dense {
	out := mat.NewDense(s.n, 4, nil)
	out.Slice(0, s.n, 0, 2).(*mat.Dense).Copy(y)
	out.Slice(0, s.n, 2, 4).(*mat.Dense).Copy(s.mask)
	return out
}

// elbo returns the masked SVGP model's ELBO on [y | mask] (NumData = 3N: a scale of 3) and its gradients.
func (s *maskedSetup) elbo(t *testing.T, lik gp.Likelihood, y *mat.Dense) (float64, map[string][]float64) {
	t.Helper()
	ml, err := likelihoods.NewMasked(lik)
	if err != nil {
		t.Fatal(err)
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: s.layer, Likelihood: ml, NumData: 3 * s.n})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	yp := s.packed(y)
	loss := model.Loss(g.Const("x", s.x.RawMatrix().Data, s.n, 1), g.Const("y", yp.RawMatrix().Data, s.n, 4))
	prog, err := g.Compile(loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	grads := map[string][]float64{}
	for _, p := range prog.Params() {
		grads[p.Name()] = slices.Clone(prog.Grad(p))
	}
	return -prog.Loss(), grads
}

// observedELBO is the ELBO computed on the observed cells only, without a mask: for each output, the inner
// likelihood's expectation over the rows where it is observed (the layer's marginals at those rows alone),
// scaled by 3 (NumData/B), minus the KL.
func (s *maskedSetup) observedELBO(t *testing.T, lik gp.Likelihood) float64 {
	t.Helper()
	g := graph.New(graph.Options{})
	total := g.Scale(s.layer.KL(g), -1)
	for j := range 2 {
		var xs, ys []float64
		for i := range s.n {
			if s.mask.At(i, j) != 0 {
				xs, ys = append(xs, s.x.At(i, 0)), append(ys, s.y.At(i, j))
			}
		}
		fm, fv := s.layer.Predict(g.Const("x", xs, len(xs), 1))
		col := func(a *graph.Node) *graph.Node { return g.StackCols(g.Col(a, j)) }
		ve := lik.VariationalExpectations(col(fm), col(fv), g.Const("y", ys, len(ys), 1))
		total = g.Add(total, g.Scale(g.Sum(ve), 3))
	}
	prog, err := g.CompileForward(map[string]*graph.Node{"elbo": total})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	return prog.Output("elbo")[0]
}

// TestMaskedMissingCellsContributeNothing: with about 30% of one output's cells missing, the masked ELBO of a
// two-output SVGP (Gaussian and Student-t) equals the ELBO computed on the observed cells only (relative 1e-12;
// the N/B scaling per row), and the values held in the missing cells change neither the ELBO nor any gradient
// (bit for bit).
func TestMaskedMissingCellsContributeNothing(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"gaussian", "studentt"} {
		fam, _ := gp.LookupLikelihood(name)
		if !fam.MissingTargets {
			t.Fatalf("%s: MissingTargets not set", name)
		}
		lik, err := fam.New(gp.LikelihoodOptions{Outputs: 2, NoiseVariance: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		s := newMaskedSetup(t, 5)
		got, grads := s.elbo(t, lik, s.y)
		want := s.observedELBO(t, lik)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%s: masked ELBO %.17g, ELBO of the observed cells %.17g (relative %.3g)", name, got, want, math.Abs(got-want)/math.Abs(want))
		}
		junk := mat.DenseCopyOf(s.y)
		for i := range s.n {
			if s.mask.At(i, 1) == 0 {
				junk.Set(i, 1, 1e3*float64(i+1))
			}
		}
		got2, grads2 := s.elbo(t, lik, junk)
		if got2 != got {
			t.Errorf("%s: ELBO %.17g with other values in the missing cells, %.17g before", name, got2, got)
		}
		for k, g := range grads {
			if !slices.Equal(g, grads2[k]) {
				t.Errorf("%s: the gradient of %s depends on the missing cells' values", name, k)
			}
		}
		t.Logf("%s: masked ELBO %.12g, observed-cells ELBO %.12g", name, got, want)
	}
}

// TestMaskedRowsInformOtherOutputs: a row whose output 1 is missing still counts for output 0: moving its output-0
// target by 1 changes the Gaussian model's ELBO by exactly the scaled change of that cell's expected log density,
// −3((y+1−μ)² − (y−μ)²)/(2σ²), and the gradient of q(u)'s mean of output 0 with it.
func TestMaskedRowsInformOtherOutputs(t *testing.T) {
	t.Parallel()
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	s := newMaskedSetup(t, 9)
	const row = 4 // output 1 missing
	if s.mask.At(row, 1) != 0 {
		t.Fatal("row 4's output 1 should be missing")
	}
	base, grads := s.elbo(t, lik, s.y)
	moved := mat.DenseCopyOf(s.y)
	moved.Set(row, 0, s.y.At(row, 0)+1)
	after, grads2 := s.elbo(t, lik, moved)
	fm, _, err := models.PredictLayer(s.layer, s.x.Slice(row, row+1, 0, 1).(*mat.Dense), gp.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mu, y0, s2 := fm.At(0, 0), s.y.At(row, 0), lik.Variance()
	want := -3 * ((y0+1-mu)*(y0+1-mu) - (y0-mu)*(y0-mu)) / (2 * s2)
	if d := after - base; math.Abs(d-want) > 1e-9*math.Abs(want) {
		t.Errorf("moving row %d's observed output by 1 changed the ELBO by %.12g, want %.12g", row, d, want)
	}
	changed := false
	for k, g := range grads {
		changed = changed || !slices.Equal(g, grads2[k])
	}
	if !changed {
		t.Error("no gradient depends on the observed cell of a row with a missing output")
	}
}

// TestMaskedConfig: NewMasked refuses a likelihood without one latent per column, and VariationalExpectations
// a y that is not [N, 2P].
func TestMaskedConfig(t *testing.T) {
	t.Parallel()
	if _, err := likelihoods.NewMasked(nil); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("nil likelihood: %v, want gp.ErrConfig", err)
	}
	fam, ok := gp.LookupLikelihood("heteroscedastic")
	if ok {
		het, err := fam.New(gp.LikelihoodOptions{Outputs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := likelihoods.NewMasked(het); !errors.Is(err, gp.ErrConfig) {
			t.Errorf("heteroscedastic (2 latents per target): %v, want gp.ErrConfig", err)
		}
	}
	gauss, _ := likelihoods.NewGaussian(likelihoods.GaussianConfig{})
	ml, err := likelihoods.NewMasked(gauss)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New(graph.Options{})
	ml.VariationalExpectations(g.Zeros("m", 3, 2), g.Zeros("v", 3, 2), g.Zeros("y", 3, 2))
	if g.Err() == nil {
		t.Error("y [3,2] for fMean [3,2]: want a shape error (y is [N,2P])")
	}
	spec, err := ml.Spec()
	if err != nil || spec.Kind != likelihoods.KindGaussian {
		t.Errorf("Spec %v, %v: want the inner Gaussian's", spec.Kind, err)
	}
}
