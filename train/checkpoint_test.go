package train_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// Checkpoint tests: sizes are small (CPU is scarce) but large enough that minibatches straddle epochs (200 rows,
// batches of 32) and the stop step lies in the second epoch.
const (
	ckN     = 200
	ckBatch = 32
	ckIters = 12
	ckStop  = 7 // 7·32 = 224 > 200: the stop falls in the second permutation
)

// ckData returns inputs [ckN,2] and three target sets: regression (y), binary labels in {0,1} (yb) and class
// labels in {0,1,2} (yc).
func ckData() (x, y, yb, yc *mat.Dense) {
	rng := rand.New(rand.NewPCG(101, 102))
	x, y = mat.NewDense(ckN, 2, nil), mat.NewDense(ckN, 1, nil)
	yb, yc = mat.NewDense(ckN, 1, nil), mat.NewDense(ckN, 1, nil)
	for i := 0; i < ckN; i++ {
		a, b := 4*rng.Float64()-2, 4*rng.Float64()-2
		x.SetRow(i, []float64{a, b})
		f := math.Sin(2*a) + 0.5*math.Cos(3*b)
		y.Set(i, 0, f+0.1*rng.NormFloat64())
		if f > 0 {
			yb.Set(i, 0, 1)
		}
		yc.Set(i, 0, float64(min(2, int(math.Floor((f+1.5)/1.0)))))
		if yc.At(i, 0) < 0 {
			yc.Set(i, 0, 0)
		}
	}
	return x, y, yb, yc
}

// ckRun is one fresh set of objects for a run: the model, the minibatch rng, the random sources behind every
// rng the run draws from, the optimizer and hooks.
type ckRun struct {
	model   gp.Model
	rng     *rand.Rand
	sources []train.RandState
	opt     train.Optimizer
	hooks   []train.Hook
	nat     *train.NatGrad // nil unless a NatGrad hook is used
}

// ckFamily builds fresh, identically seeded objects for one model family.
type ckFamily struct {
	name  string
	batch int // 0: full batch
	y     func(y, yb, yc *mat.Dense) *mat.Dense
	build func(t *testing.T, x *mat.Dense) ckRun
}

// must returns v, panicking on err (test fixtures only: every constructor here gets valid arguments).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ckKernel(t *testing.T, name string, d int) gp.Kernel {
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.8 + 0.1*float64(i)
	}
	return must(gp.NewSquaredExp(gp.KernelConfig{Name: name, InputDim: d, Variance: 1.2, Lengthscales: ls}))
}

func rows(x *mat.Dense, i, j int) *mat.Dense { return mat.DenseCopyOf(x.Slice(i, j, 0, 2)) }

// minibatchRun returns a run whose minibatch rng is backed by a PCG that is its first source.
func minibatchRun(m gp.Model, opt train.Optimizer, extra ...train.RandState) ckRun {
	src := rand.NewPCG(7, 8)
	return ckRun{model: m, rng: rand.New(src), sources: append([]train.RandState{src}, extra...), opt: opt}
}

func regression(y, _, _ *mat.Dense) *mat.Dense  { return y }
func binary(_, yb, _ *mat.Dense) *mat.Dense     { return yb }
func multiclass(_, _, yc *mat.Dense) *mat.Dense { return yc }
func adam() train.Optimizer                     { return &train.Adam{LR: 0.02} }
func gauss(t *testing.T) *likelihoods.Gaussian {
	return must(likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.5}))
}
func svgpModel(t *testing.T, l gp.Layer, lik gp.Likelihood) gp.Model {
	return must(models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: lik, NumData: ckN}))
}

func natHook(t *testing.T, q *gp.GaussianQ) *train.NatGrad {
	// A ramp makes γ depend on the step index, which a resume must carry on correctly.
	return must(train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 0.1, GammaStart: 1e-3, RampSteps: 10}))
}

// ckDGP builds a 2-layer deep GP on x with c's noise (Noise or Rand).
func ckDGP(t *testing.T, x *mat.Dense, c dgp.Config) gp.Model {
	ls := must(dgp.Build(x, dgp.BuildConfig{Widths: []int{2}, Rand: rand.New(rand.NewPCG(3, 4)), KMeansIters: 3,
		NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
			k := ckKernel(t, fmt.Sprint("k", s.Index), s.InputDim)
			scale := 0.0
			if s.Inner {
				var err error
				if k, err = dgp.InnerKernel(k, fmt.Sprint("white", s.Index)); err != nil {
					return nil, err
				}
				scale = dgp.InnerQScale
			}
			z, err := s.Inducing(8)
			if err != nil {
				return nil, err
			}
			return layers.NewSVGP(layers.SVGPConfig{Name: fmt.Sprint("layer", s.Index), Kernel: k, Z: z,
				OutputDim: s.OutputDim, Mean: s.Mean, QSqrtScale: scale})
		}}))
	c.Layers, c.Likelihood, c.NumData, c.Samples = ls, gauss(t), ckN, 2
	return must(dgp.New(c))
}

func ckFamilies() []ckFamily {
	return []ckFamily{
		{"SVGP/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 10)}))
			return minibatchRun(svgpModel(t, l, gauss(t)), adam())
		}},
		{"SVGP/Bernoulli/NatGrad+Adam", ckBatch, binary, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 10)}))
			lik := must(likelihoods.NewBernoulli(likelihoods.BernoulliConfig{}))
			r := minibatchRun(svgpModel(t, l, lik), adam())
			r.nat = natHook(t, l.Q)
			r.hooks = []train.Hook{r.nat}
			return r
		}},
		{"SVGP/RobustMax/NatGrad+Adam", ckBatch, multiclass, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 10), OutputDim: 3}))
			lik := must(likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3}))
			r := minibatchRun(svgpModel(t, l, lik), adam())
			r.nat = natHook(t, l.Q)
			r.hooks = []train.Hook{r.nat}
			return r
		}},
		{"SVGP/Softmax(MC)/Adam", ckBatch, multiclass, func(t *testing.T, x *mat.Dense) ckRun {
			mc := rand.NewPCG(31, 32)
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 10), OutputDim: 3}))
			lik := must(likelihoods.NewSoftmax(likelihoods.SoftmaxConfig{NumClasses: 3, NumSamples: 4, Rand: rand.New(mc)}))
			return minibatchRun(svgpModel(t, l, lik), adam(), mc)
		}},
		{"DGP2/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			noise := rand.NewPCG(41, 42)
			return minibatchRun(ckDGP(t, x, dgp.Config{Noise: dgp.StandardNormalNoise(rand.New(noise))}), adam(), noise)
		}},
		// The default row-keyed noise: keyed by (seed, layer, step, row), it needs no saved source (the seed is
		// redrawn from an equally seeded Rand, the step comes from the checkpoint's step count).
		{"DGP2(row noise)/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			return minibatchRun(ckDGP(t, x, dgp.Config{Rand: rand.New(rand.NewPCG(41, 42))}), adam())
		}},
		{"ORTH/RobustMax/NatGrad+Adam", ckBatch, multiclass, func(t *testing.T, x *mat.Dense) ckRun {
			o := must(layers.NewOrth(layers.OrthConfig{
				SVGPConfig: layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 8), OutputDim: 3},
				Zgamma:     rows(x, 8, 20)}))
			lik := must(likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: 3}))
			r := minibatchRun(svgpModel(t, o, lik), adam())
			r.nat = natHook(t, o.BetaQ())
			r.hooks = []train.Hook{r.nat}
			return r
		}},
		{"DECOUPLED(mean-basis batch)/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			sub := rand.NewPCG(51, 52)
			l := must(layers.NewDecoupled(layers.DecoupledConfig{Kernel: ckKernel(t, "k", 2), Zalpha: rows(x, 0, 20),
				Zbeta: rows(x, 20, 28), MeanBasisBatch: 6, Rand: rand.New(sub)}))
			return minibatchRun(svgpModel(t, l, gauss(t)), adam(), sub)
		}},
		{"DECOUPLED+BasisGrowth/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewDecoupled(layers.DecoupledConfig{Kernel: ckKernel(t, "k", 2), Zalpha: rows(x, 0, 30),
				Zbeta: rows(x, 30, 50)}))
			h := must(train.NewBasisGrowth(train.BasisGrowthConfig{Zalpha: l.Zalpha, Zbeta: l.Zbeta, A: l.A, LB: l.LB, Start: 4, NDelta: 2}))
			r := minibatchRun(svgpModel(t, l, gauss(t)), adam())
			r.hooks = []train.Hook{h}
			return r
		}},
		{"DECOUPLED/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewDecoupled(layers.DecoupledConfig{Kernel: ckKernel(t, "k", 2), Zalpha: rows(x, 0, 20),
				Zbeta: rows(x, 20, 28)}))
			return minibatchRun(svgpModel(t, l, gauss(t)), adam())
		}},
		{"HYBRID/Gaussian/Adam", ckBatch, regression, func(t *testing.T, x *mat.Dense) ckRun {
			l := must(layers.NewHybrid(layers.HybridConfig{
				SVGPConfig: layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 8)}, Zgamma: rows(x, 8, 20)}))
			return minibatchRun(svgpModel(t, l, gauss(t)), adam())
		}},
		{"SGPR/full-batch/Adam", 0, regression, func(t *testing.T, x *mat.Dense) ckRun {
			m := must(models.NewSGPR(models.SGPRConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 10)}))
			return ckRun{model: m, rng: rand.New(rand.NewPCG(7, 8)), opt: adam()} // no Sources: nothing random
		}},
		{"GPR/full-batch/Adam", 0, regression, func(t *testing.T, _ *mat.Dense) ckRun {
			m := must(gp.NewGPR(gp.GPRConfig{Kernel: ckKernel(t, "k", 2)}))
			return ckRun{model: m, rng: rand.New(rand.NewPCG(7, 8)), opt: adam()}
		}},
	}
}

func ckConfig(r ckRun, batch int) train.Config {
	return train.Config{Iters: ckIters, BatchSize: batch, Optimizer: r.opt, Hooks: r.hooks}
}

func rawParams(m gp.Model) [][]float64 {
	var out [][]float64
	for _, p := range m.Params() {
		out = append(out, append([]float64(nil), p.Raw()...))
	}
	return out
}

// sameBits reports the first entry where a and b differ as bit patterns ("" when identical).
func sameBits(a, b [][]float64) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d vs %d slices", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Sprintf("slice %d: %d vs %d entries", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return fmt.Sprintf("slice %d entry %d: %v vs %v", i, j, a[i][j], b[i][j])
			}
		}
	}
	return ""
}

// stopAfter returns an Eval that closes the returned channel after step k.
func stopAfter(k int) (func(int) (map[string]float64, error), chan struct{}) {
	ch := make(chan struct{})
	return func(step int) (map[string]float64, error) {
		if step == k {
			close(ch)
		}
		return nil, nil
	}, ch
}

// TestCheckpointResumeBitForBit runs every family N steps uninterrupted; then, with fresh objects from the same
// seeds, stops after k steps (Stop), and resumes in a third fresh set of objects: the final raw Params, the
// Losses and the NatGrad counters must equal the uninterrupted run's exactly.
func TestCheckpointResumeBitForBit(t *testing.T) {
	t.Parallel()
	x, y, yb, yc := ckData()
	for _, f := range ckFamilies() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			ty := f.y(y, yb, yc)
			// 1. Uninterrupted.
			r1 := f.build(t, x)
			res1, err := train.Train(r1.model, x, ty, r1.rng, ckConfig(r1, f.batch))
			if err != nil {
				t.Fatal(err)
			}
			want := rawParams(r1.model)
			// 2. Stopped after ckStop steps.
			dir := t.TempDir()
			r2 := f.build(t, x)
			init := rawParams(r2.model)
			cfg2 := ckConfig(r2, f.batch)
			eval, stop := stopAfter(ckStop)
			cfg2.Eval, cfg2.EvalEvery, cfg2.Stop = eval, 1, stop
			cfg2.Checkpoint = &train.CheckpointConfig{Dir: dir, Sources: r2.sources}
			res2, err := train.Train(r2.model, x, ty, r2.rng, cfg2)
			if !errors.Is(err, train.ErrInterrupted) {
				t.Fatalf("stopped run: err = %v, want ErrInterrupted", err)
			}
			if res2 == nil || res2.Steps != ckStop || len(res2.Losses) != ckStop {
				t.Fatalf("stopped run: %+v, want %d steps", res2, ckStop)
			}
			if d := sameBits([][]float64{res2.Losses}, [][]float64{res1.Losses[:ckStop]}); d != "" {
				t.Fatalf("stopped run's losses differ from the uninterrupted run's: %s", d)
			}
			// 3. Resumed in fresh objects.
			r3 := f.build(t, x)
			if d := sameBits(rawParams(r3.model), init); d != "" {
				t.Fatalf("fresh objects differ between builds: %s", d)
			}
			cfg3 := ckConfig(r3, f.batch)
			cfg3.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: r3.sources}
			res3, err := train.Train(r3.model, x, ty, r3.rng, cfg3)
			if err != nil {
				t.Fatal(err)
			}
			if res3.Steps != ckIters {
				t.Fatalf("resumed run: %d steps, want %d", res3.Steps, ckIters)
			}
			if d := sameBits([][]float64{res3.Losses}, [][]float64{res1.Losses}); d != "" {
				t.Errorf("losses differ: %s", d)
			}
			if d := sameBits(rawParams(r3.model), want); d != "" {
				t.Errorf("final raw Params differ: %s", d)
			}
			if d := sameBits(want, init); d == "" {
				t.Error("training did not move the Params: the comparison is vacuous")
			}
			if r1.nat != nil && r1.nat.Stats() != r3.nat.Stats() {
				t.Errorf("NatGrad stats %+v after resume, uninterrupted %+v", r3.nat.Stats(), r1.nat.Stats())
			}
		})
	}
}

// svgpFamily is the first family, used by the smaller tests below.
func svgpFamily(t *testing.T) (ckFamily, *mat.Dense, *mat.Dense) {
	x, y, _, _ := ckData()
	return ckFamilies()[0], x, y
}

func digest(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "none"
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestCheckpointEvery checks that Every = 3 over 10 steps saves after steps 3, 6, 9 and 10 (and nowhere else),
// that resuming from the periodic checkpoint of step 6 reproduces the uninterrupted run, and that resuming
// from the final checkpoint returns the whole Result without running a step.
func TestCheckpointEvery(t *testing.T) {
	t.Parallel()
	f, x, y := svgpFamily(t)
	const iters, every = 10, 3
	r0 := f.build(t, x)
	cfg0 := ckConfig(r0, f.batch)
	cfg0.Iters = iters
	res0, err := train.Train(r0.model, x, y, r0.rng, cfg0)
	if err != nil {
		t.Fatal(err)
	}

	dir, dir6 := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, train.CheckpointFile)
	r := f.build(t, x)
	cfg := ckConfig(r, f.batch)
	cfg.Iters = iters
	cfg.Checkpoint = &train.CheckpointConfig{Dir: dir, Every: every, Sources: r.sources}
	// Eval(s) runs after step s and before that step's save, so the file it sees is the latest save before s.
	seen := []string{digest(t, path)}
	cfg.EvalEvery = 1
	cfg.Eval = func(step int) (map[string]float64, error) {
		seen = append(seen, digest(t, path))
		if step == 7 { // holds the checkpoint of step 6
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(dir6, train.CheckpointFile), b, 0o644); err != nil {
				return nil, err
			}
		}
		return map[string]float64{"step": float64(step)}, nil
	}
	res, err := train.Train(r.model, x, y, r.rng, cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, digest(t, path))
	// seen[s] is the file before step s's save (s = 1..10), seen[11] after the run.
	for s := 1; s <= iters+1; s++ {
		changed := seen[s] != seen[s-1]
		wantChanged := s-1 > 0 && (s-1)%every == 0 || s == iters+1 // a save after step s−1
		if changed != wantChanged {
			t.Errorf("file changed between Eval(%d) and Eval(%d): %v, want %v", s-1, s, changed, wantChanged)
		}
	}
	if seen[1] != "none" || seen[iters+1] == "none" {
		t.Errorf("file before step 1: %s; after the run: %s", seen[1], seen[iters+1])
	}

	// Resume from the periodic checkpoint of step 6 (no Stop involved).
	r6 := f.build(t, x)
	cfg6 := ckConfig(r6, f.batch)
	cfg6.Iters = iters
	cfg6.Checkpoint = &train.CheckpointConfig{Dir: dir6, Resume: true, Sources: r6.sources}
	res6, err := train.Train(r6.model, x, y, r6.rng, cfg6)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameBits(rawParams(r6.model), rawParams(r0.model)); d != "" {
		t.Errorf("resume from step 6: Params differ: %s", d)
	}
	if d := sameBits([][]float64{res6.Losses}, [][]float64{res0.Losses}); d != "" {
		t.Errorf("resume from step 6: losses differ: %s", d)
	}
	if len(res6.Evals) != 6 || res6.Evals[5].Metrics["step"] != 6 {
		t.Errorf("resume from step 6: evaluations %+v, want those of steps 1..6", res6.Evals)
	}

	// Resume from the final checkpoint: nothing left to run.
	rf := f.build(t, x)
	cfgf := ckConfig(rf, f.batch)
	cfgf.Iters = iters
	cfgf.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: rf.sources}
	resf, err := train.Train(rf.model, x, y, rf.rng, cfgf)
	if err != nil {
		t.Fatal(err)
	}
	if resf.Steps != iters || len(resf.Evals) != iters {
		t.Errorf("resume of a finished run: %d steps, %d evals", resf.Steps, len(resf.Evals))
	}
	if d := sameBits([][]float64{resf.Losses}, [][]float64{res.Losses}); d != "" {
		t.Errorf("resume of a finished run: losses differ: %s", d)
	}
	if d := sameBits(rawParams(rf.model), rawParams(r0.model)); d != "" {
		t.Errorf("resume of a finished run: Params differ: %s", d)
	}
}

// writeCheckpoint runs the first family for 3 steps with checkpoints into a new directory and returns it.
func writeCheckpoint(t *testing.T) (string, ckFamily, *mat.Dense, *mat.Dense) {
	f, x, y := svgpFamily(t)
	dir := t.TempDir()
	r := f.build(t, x)
	cfg := ckConfig(r, f.batch)
	cfg.Iters = 3
	cfg.Checkpoint = &train.CheckpointConfig{Dir: dir, Sources: r.sources}
	if _, err := train.Train(r.model, x, y, r.rng, cfg); err != nil {
		t.Fatal(err)
	}
	return dir, f, x, y
}

func resume(t *testing.T, dir string, f ckFamily, x, y *mat.Dense, edit func(*ckRun, *train.Config)) (ckRun, error) {
	r := f.build(t, x)
	cfg := ckConfig(r, f.batch)
	cfg.Iters = 3
	cfg.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: r.sources}
	if edit != nil {
		edit(&r, &cfg)
	}
	_, err := train.Train(r.model, x, y, r.rng, cfg)
	return r, err
}

// TestCheckpointDamaged: corrupt, truncated, newer-version and missing checkpoints give their typed errors.
func TestCheckpointDamaged(t *testing.T) {
	t.Parallel()
	dir, f, x, y := writeCheckpoint(t)
	good, err := os.ReadFile(filepath.Join(dir, train.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resume(t, dir, f, x, y, nil); err != nil {
		t.Fatalf("intact checkpoint: %v", err)
	}
	edit := func(fn func(b []byte) []byte) []byte { return fn(bytes.Clone(good)) }
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"flippedBodyByte", edit(func(b []byte) []byte { b[len(b)/2] ^= 1; return b }), train.ErrCheckpointCorrupt},
		{"flippedChecksum", edit(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), train.ErrCheckpointCorrupt},
		{"badMagic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), train.ErrCheckpointCorrupt},
		{"trailingBytes", append(bytes.Clone(good), 0), train.ErrCheckpointCorrupt},
		{"truncatedBody", good[:len(good)/2], train.ErrCheckpointTruncated},
		{"truncatedChecksum", good[:len(good)-1], train.ErrCheckpointTruncated},
		{"truncatedHeader", good[:10], train.ErrCheckpointTruncated},
		{"empty", nil, train.ErrCheckpointTruncated},
		{"newerVersion", edit(func(b []byte) []byte { b[8] = train.CheckpointVersion + 1; return b }), train.ErrCheckpointVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, train.CheckpointFile), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := resume(t, d, f, x, y, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var ce *train.CheckpointError
			if !errors.As(err, &ce) || ce.Path != filepath.Join(d, train.CheckpointFile) {
				t.Errorf("err = %#v, want a *CheckpointError naming the file", err)
			}
			if d := sameBits(rawParams(r.model), rawParams(f.build(t, x).model)); d != "" {
				t.Errorf("a failed resume changed the Params: %s", d)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if _, err := resume(t, t.TempDir(), f, x, y, nil); !errors.Is(err, train.ErrNoCheckpoint) {
			t.Fatalf("err = %v, want ErrNoCheckpoint", err)
		}
		if _, err := resume(t, filepath.Join(t.TempDir(), "absent"), f, x, y, nil); !errors.Is(err, train.ErrNoCheckpoint) {
			t.Fatalf("absent Dir: err = %v, want ErrNoCheckpoint", err)
		}
	})
}

// TestCheckpointMismatch: a checkpoint of another run (config, model, optimizer, hooks, sources) is refused with
// ErrCheckpointMismatch and the Params are left alone.
func TestCheckpointMismatch(t *testing.T) {
	t.Parallel()
	dir, f, x, y := writeCheckpoint(t)
	for _, tc := range []struct {
		name string
		edit func(*ckRun, *train.Config)
	}{
		{"iters", func(_ *ckRun, c *train.Config) { c.Iters = 4 }},
		{"batchSize", func(_ *ckRun, c *train.Config) { c.BatchSize = 16 }},
		{"sources", func(r *ckRun, c *train.Config) {
			c.Checkpoint.Sources = append(c.Checkpoint.Sources, rand.NewPCG(1, 1))
		}},
		{"hooks", func(r *ckRun, c *train.Config) {
			c.Hooks = []train.Hook{natHook(t, r.model.(*models.SVGP).Layer.(*layers.SVGP).Q)}
		}},
		{"statelessOptimizer", func(_ *ckRun, c *train.Config) { c.Optimizer = plainSGD{} }},
		{"paramShape", func(r *ckRun, c *train.Config) {
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "k", 2), Z: rows(x, 0, 9)}))
			r.model = svgpModel(t, l, gauss(t))
		}},
		{"paramName", func(r *ckRun, c *train.Config) {
			l := must(layers.NewSVGP(layers.SVGPConfig{Kernel: ckKernel(t, "other", 2), Z: rows(x, 0, 10)}))
			r.model = svgpModel(t, l, gauss(t))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before [][]float64
			r, err := resume(t, dir, f, x, y, func(r *ckRun, c *train.Config) {
				tc.edit(r, c)
				before = rawParams(r.model)
			})
			if !errors.Is(err, train.ErrCheckpointMismatch) {
				t.Fatalf("err = %v, want ErrCheckpointMismatch", err)
			}
			if d := sameBits(rawParams(r.model), before); d != "" {
				t.Errorf("a refused checkpoint changed the Params: %s", d)
			}
		})
	}
}

// plainSGD is a stateless Optimizer (it does not implement train.Stateful).
type plainSGD struct{}

func (plainSGD) Step(_ int, ps []*graph.Param, gs [][]float64) error {
	for i, p := range ps {
		for j, g := range gs[i] {
			p.Raw()[j] -= 1e-3 * g
		}
	}
	return nil
}

// TestCheckpointConfigAndStop: invalid CheckpointConfigs are refused; Stop without checkpoints returns the
// partial Result; a Stop closed before the first step saves a step-0 checkpoint that resumes like a fresh run.
func TestCheckpointConfigAndStop(t *testing.T) {
	t.Parallel()
	f, x, y := svgpFamily(t)
	for name, ck := range map[string]*train.CheckpointConfig{
		"emptyDir":     {},
		"negativeEach": {Dir: t.TempDir(), Every: -1},
		"noSources":    {Dir: t.TempDir()},
		"nilSource":    {Dir: t.TempDir(), Sources: []train.RandState{nil}},
	} {
		r := f.build(t, x)
		cfg := ckConfig(r, f.batch)
		cfg.Checkpoint = ck
		if _, err := train.Train(r.model, x, y, r.rng, cfg); !errors.Is(err, train.ErrCheckpointConfig) {
			t.Errorf("%s: err = %v, want ErrCheckpointConfig", name, err)
		}
	}

	r := f.build(t, x)
	cfg := ckConfig(r, f.batch)
	eval, stop := stopAfter(2)
	cfg.Eval, cfg.EvalEvery, cfg.Stop = eval, 1, stop
	res, err := train.Train(r.model, x, y, r.rng, cfg)
	if !errors.Is(err, train.ErrInterrupted) || res == nil || res.Steps != 2 || len(res.Losses) != 2 {
		t.Fatalf("Stop without checkpoints: res %+v, err %v", res, err)
	}

	r0 := f.build(t, x)
	res0, err := train.Train(r0.model, x, y, r0.rng, ckConfig(r0, f.batch))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	closed := make(chan struct{})
	close(closed)
	r1 := f.build(t, x)
	cfg1 := ckConfig(r1, f.batch)
	cfg1.Stop = closed
	cfg1.Checkpoint = &train.CheckpointConfig{Dir: dir, Sources: r1.sources}
	if res, err := train.Train(r1.model, x, y, r1.rng, cfg1); !errors.Is(err, train.ErrInterrupted) || res.Steps != 0 {
		t.Fatalf("Stop closed before step 0: res %+v, err %v", res, err)
	}
	r2 := f.build(t, x)
	cfg2 := ckConfig(r2, f.batch)
	cfg2.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: r2.sources}
	res2, err := train.Train(r2.model, x, y, r2.rng, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameBits([][]float64{res2.Losses}, [][]float64{res0.Losses}); d != "" {
		t.Errorf("resume from step 0: losses differ: %s", d)
	}
	if d := sameBits(rawParams(r2.model), rawParams(r0.model)); d != "" {
		t.Errorf("resume from step 0: Params differ: %s", d)
	}
}

// TestAdamStateErrors: Adam refuses state saved for other Params and leaves its own state unchanged.
func TestAdamStateErrors(t *testing.T) {
	t.Parallel()
	a := must(graph.NewParam("a", []float64{1, 2}, nil, 2))
	b := must(graph.NewParam("b", []float64{3}, nil, 1))
	opt := &train.Adam{}
	if err := opt.Step(0, []*graph.Param{a, b}, [][]float64{{0.1, 0.2}, {0.3}}); err != nil {
		t.Fatal(err)
	}
	st, err := opt.MarshalState([]*graph.Param{a, b})
	if err != nil {
		t.Fatal(err)
	}
	b2 := must(graph.NewParam("b", []float64{3, 4}, nil, 2))
	c := must(graph.NewParam("c", []float64{3}, nil, 1))
	for name, ps := range map[string][]*graph.Param{
		"fewer":     {a},
		"otherName": {a, c},
		"otherSize": {a, b2},
	} {
		if err := opt.UnmarshalState(ps, st); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := opt.UnmarshalState([]*graph.Param{a, b}, []byte("junk")); err == nil {
		t.Error("junk state: no error")
	}
	// The state is intact: a fresh Adam restored from it takes the same next step.
	a2 := must(graph.NewParam("a", a.Raw(), nil, 2))
	b3 := must(graph.NewParam("b", b.Raw(), nil, 1))
	fresh := &train.Adam{}
	if err := fresh.UnmarshalState([]*graph.Param{a2, b3}, st); err != nil {
		t.Fatal(err)
	}
	g := [][]float64{{-0.5, 0.7}, {0.2}}
	if err := opt.Step(1, []*graph.Param{a, b}, g); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Step(1, []*graph.Param{a2, b3}, g); err != nil {
		t.Fatal(err)
	}
	if d := sameBits([][]float64{a.Raw(), b.Raw()}, [][]float64{a2.Raw(), b3.Raw()}); d != "" {
		t.Errorf("restored Adam stepped differently: %s", d)
	}
}
