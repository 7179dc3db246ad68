package modelfile_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// goldenFiles loads every golden model file.
func goldenFiles(t *testing.T) map[string]*modelfile.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.gpz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden model files: %v", err)
	}
	out := map[string]*modelfile.File{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".gpz")
		needWhite(t, name)
		f, err := modelfile.LoadFile(p, gp.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	return out
}

func randomRows(n, d int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = 2 * rng.NormFloat64()
	}
	return x
}

// rowsOf returns the rows of every output of p (Mean, Var, Std, Probs, Labels, per-row Draws), row by row.
func rowsOf(p *modelfile.Prediction, n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		for _, m := range []*mat.Dense{p.Mean, p.Var, p.Std, p.Probs} {
			if m != nil {
				out[i] = append(out[i], m.RawRowView(i)...)
			}
		}
		if p.Labels != nil {
			out[i] = append(out[i], p.Labels[i])
		}
		for _, d := range p.Draws {
			out[i] = append(out[i], d.RawRowView(i)...)
		}
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPredictRowIndependentOfBatch is the serving invariant: a row's prediction is the same bits whatever rows
// it is predicted with and wherever it sits among them, for every family (deep GPs and Monte-Carlo likelihoods
// through the row's key): the rows of a 150-row call equal each row predicted alone with its key, and a
// shuffled call with the same keys.
func TestPredictRowIndependentOfBatch(t *testing.T) {
	for name, f := range goldenFiles(t) {
		t.Run(name, func(t *testing.T) {
			m := f.Model.(gp.Predictor)
			const n = 150
			x := randomRows(n, m.InputDim(), 11)
			o := modelfile.PredictOptions{Samples: 4, Seed: 5}
			if strings.HasPrefix(name, "DGP") {
				o.Draws = 2 // a deep GP's draws are per row
			}
			all, err := f.Predict(x, o)
			if err != nil {
				t.Fatal(err)
			}
			want := rowsOf(all, n)
			perm := rand.New(rand.NewPCG(2, 2)).Perm(n)
			xp := mat.NewDense(n, m.InputDim(), nil)
			keys := make([]modelfile.RowKey, n)
			for i, j := range perm {
				xp.SetRow(i, x.RawRowView(j))
				keys[i] = modelfile.RowKey{Seed: 5, Index: j}
			}
			op := o
			op.Keys = keys
			shuffled, err := f.Predict(xp, op)
			if err != nil {
				t.Fatal(err)
			}
			got := rowsOf(shuffled, n)
			for i, j := range perm {
				if !sameBits(got[i], want[j]) {
					t.Fatalf("row %d moved to %d: %v, want %v", j, i, got[i], want[j])
				}
			}
			for _, j := range []int{0, 7, 8, 127, 128, 149} {
				ol := o
				ol.Keys = []modelfile.RowKey{{Seed: 5, Index: j}}
				alone, err := f.Predict(mat.NewDense(1, m.InputDim(), x.RawRowView(j)), ol)
				if err != nil {
					t.Fatal(err)
				}
				if g := rowsOf(alone, 1)[0]; !sameBits(g, want[j]) {
					t.Fatalf("row %d alone: %v, in the batch %v", j, g, want[j])
				}
			}
		})
	}
}

// TestPredictConcurrent predicts from many goroutines at once (run with -race): every call gives the bits of a
// lone call.
func TestPredictConcurrent(t *testing.T) {
	files := goldenFiles(t)
	for _, name := range []string{"SVGP_gaussian", "DGP_coupled", "SVGP_softmax", "GPR"} {
		f := files[name]
		m := f.Model.(gp.Predictor)
		x := randomRows(37, m.InputDim(), 4)
		ref, err := f.Predict(x, modelfile.PredictOptions{Seed: 9, Samples: 3})
		if err != nil {
			t.Fatal(err)
		}
		want := rowsOf(ref, 37)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 8 {
			wg.Go(func() {
				p, err := f.Predict(x, modelfile.PredictOptions{Seed: 9, Samples: 3})
				if err != nil {
					errs <- err
					return
				}
				for i, r := range rowsOf(p, 37) {
					if !sameBits(r, want[i]) {
						errs <- errors.New(name + ": a concurrent call predicted other bits")
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// TestPredictJointOptions checks FullCov and joint Draws in original units against the model's own (standardised)
// prediction, and the refusals: FullCov of a deep GP, negative counts, keys that are not one per row.
func TestPredictJointOptions(t *testing.T) {
	files := goldenFiles(t)
	f := files["SVGP_gaussian"]
	m := f.Model.(gp.Predictor)
	x := randomRows(5, m.InputDim(), 6)
	p, err := f.Predict(x, modelfile.PredictOptions{FullCov: true, Draws: 3, Latent: true, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cov) != 1 || len(p.Draws) != 3 || p.Probs != nil {
		t.Fatalf("Cov %d, Draws %d, Probs %v", len(p.Cov), len(p.Draws), p.Probs != nil)
	}
	s := f.Standardizer
	xs, err := s.ApplyX(x)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := m.Predict(xs, gp.PredictOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		// The latent variance in original units equals the covariance's diagonal.
		if c, v := p.Cov[0].At(i, i), p.Var.At(i, 0); math.Abs(c-v) > 1e-9*v {
			t.Errorf("row %d: Cov diagonal %v, Var %v", i, c, v)
		}
		if c, w := p.Cov[0].At(i, 0), ref.FCov[0].At(i, 0)*s.YStd[0]*s.YStd[0]; math.Abs(c-w) > 1e-9*math.Abs(w) {
			t.Errorf("Cov[%d,0] = %v, want %v", i, c, w)
		}
		if mu, w := p.Mean.At(i, 0), ref.FMean.At(i, 0)*s.YStd[0]+s.YMean[0]; math.Abs(mu-w) > 1e-9*math.Abs(w) {
			t.Errorf("latent mean %v, want %v", mu, w)
		}
	}
	if f.Batchable(modelfile.PredictOptions{FullCov: true}) || f.Batchable(modelfile.PredictOptions{Draws: 1}) || !f.Batchable(modelfile.PredictOptions{}) {
		t.Error("Batchable: joint outputs of a Gaussian predictive are not batchable, marginals are")
	}
	dg := files["DGP_coupled"]
	if !dg.Batchable(modelfile.PredictOptions{Draws: 2}) {
		t.Error("a deep GP's draws are per row: batchable")
	}
	if _, err := dg.Predict(x, modelfile.PredictOptions{FullCov: true}); !errors.Is(err, gp.ErrUnsupported) {
		t.Errorf("FullCov of a deep GP: %v, want ErrUnsupported", err)
	}
	if _, err := f.Predict(x, modelfile.PredictOptions{Draws: -1}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("negative draws: %v, want ErrConfig", err)
	}
	if _, err := f.Predict(x, modelfile.PredictOptions{Keys: make([]modelfile.RowKey, 2)}); err == nil {
		t.Error("two keys for five rows: no error")
	}
	if got := f.InputNames(); len(got) != m.InputDim() || got[0] != "x0" {
		t.Errorf("InputNames %v", got)
	}
	if f.Task() != modelfile.TaskRegression || files["SVGP_robustmax"].Task() != modelfile.TaskClassification || files["SVGP_poisson"].Task() != modelfile.TaskCounts {
		t.Error("Task: regression, classification, counts")
	}
}

// TestCachedProgramsSameBits: a model predicting through kept programs (gp.PredictOptions.Programs, as File
// does), first and second call, gives the bits of a call that compiles its own, for every family; deep GPs
// with their noise drawn from Rand and from per-row generators alike.
func TestCachedProgramsSameBits(t *testing.T) {
	for name, f := range goldenFiles(t) {
		m := f.Model.(gp.Predictor)
		x := randomRows(20, m.InputDim(), 8)
		cache := graph.NewProgramCache(0)
		for _, rowRand := range []bool{false, true} {
			opts := func(c *graph.ProgramCache) gp.PredictOptions {
				o := gp.PredictOptions{Samples: 3, ChunkRows: 30, Rand: rand.New(rand.NewPCG(4, 4)), Programs: c}
				if rowRand {
					o.RowRand = func(i int) *rand.Rand { return rand.New(rand.NewPCG(5, uint64(i))) }
				}
				return o
			}
			ref, err := m.Predict(x, opts(nil))
			if err != nil {
				t.Fatal(err)
			}
			for call := range 2 {
				p, err := m.Predict(x, opts(cache))
				if err != nil {
					t.Fatal(err)
				}
				for _, pair := range [][2]*mat.Dense{{p.FMean, ref.FMean}, {p.FVar, ref.FVar}, {p.YMean, ref.YMean}, {p.YVar, ref.YVar}} {
					if !sameBits(pair[0].RawMatrix().Data, pair[1].RawMatrix().Data) {
						t.Fatalf("%s (row generators %v), call %d: cached programs predict other bits", name, rowRand, call)
					}
				}
			}
		}
		cache.Close()
	}
}
