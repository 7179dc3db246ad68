package modelfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// ErrNoTrainingData is returned by File.Predict for a model whose predictions need the training data (exact
// GP, SGPR) when it holds none (gp.ErrNoTrainingData).
var ErrNoTrainingData = gp.ErrNoTrainingData

// PredictChunk is the largest number of rows of a marginal prediction run of File.Predict: the rows run in
// calls of PredictChunk rows, the last one padded with zero rows to the next size of {4, 16, 64, 128}. A row's
// prediction depends neither on the other rows of its run nor on the run's size (the covariance ops centre on
// their first operand alone, and gpzoo's BLAS computes each column of a product or a triangular solve with
// three or more right-hand sides in an order its size does not change), so a server may coalesce the rows of
// several requests into one call and answer each as if alone; the small sizes keep a lone row cheap.
const PredictChunk = 128

// PredictRowChunk is the largest number of rows of a run of a model whose marginals draw per-row random numbers
// (a deep GP propagates Samples samples of each: up to PredictRowChunk × Samples rows per run); the last run is
// padded to the next size of {1, 2, 4, 8} with at least 3 sample rows.
const PredictRowChunk = 8

// runSize returns the size of the run of rem remaining rows: the largest size when rem fills it, else the
// smallest power of step (from 1) at least rem and with size·per ≥ 3 (so that no run takes the BLAS's paths for
// one or two right-hand sides), at most largest.
func runSize(rem, largest, step, per int) int {
	if rem >= largest {
		return largest
	}
	size := 1
	for size < rem || size*per < 3 {
		size *= step
	}
	return min(size, largest)
}

// Task names what a model predicts (File.Task).
const (
	TaskRegression     = "regression"     // real targets: mean and variance in the target's units
	TaskClassification = "classification" // class labels: probabilities and the most probable label
	TaskCounts         = "counts"         // counts (a raw-target family such as Poisson): mean and variance of the count
)

// PredictOptions configures File.Predict. The zero value asks for the predictive marginals of y.
type PredictOptions struct {
	// Latent asks for the latent functions f instead of y: Mean and Var are f's marginals [N,L], and no Probs. A
	// regression model's latent columns that locate its targets are in the targets' units: all of them for one
	// latent per target, the first P (the means) of a likelihood with several latents per target
	// (gp.PredictiveDimer: the heteroscedastic Gaussian's columns 0 … P−1); its other latents stay in the units
	// the model was trained in (the heteroscedastic's columns P … 2P−1 are log noise variances of the
	// standardised targets: add 2·log YStd_p for the log variance in original units). A classifier's or a count
	// model's f is in its own units.
	Latent bool
	// FullCov asks for Prediction.Cov, the N×N covariance of each latent function across the rows, in the
	// target's units (Gaussian predictives: exact GP, SGPR, SVGP; an error wrapping gp.ErrUnsupported for a deep
	// GP). Memory O(N²).
	FullCov bool
	// OutputCov asks for Prediction.OutputCov, the covariance between the latent functions at each row (one L×L
	// matrix per row, in the targets' units; gp.PredictOptions.OutputCov): correlated outputs (an LMC layer) give
	// their covariances, a deep GP its mixture's, independent outputs a diagonal. Row by row, like the marginals.
	OutputCov bool
	// Draws asks for that many samples of f at the rows (Prediction.Draws): joint across the rows from the full
	// Gaussian predictive (as FullCov), or, for a deep GP, each row propagated through every layer (not joint
	// across rows, as gp.PredictOptions.Draws documents).
	Draws int
	// Samples is the number of samples a deep GP propagates per row for its marginals (0: the model file's
	// "test_samples", else the family's default). Ignored by the other families.
	Samples int
	// Seed seeds every Monte-Carlo number: row i of x draws from a generator keyed by (Seed, i) (Keys, when set,
	// give each row's key instead), joint draws across rows from one keyed by Seed alone.
	Seed uint64
	// Keys, when set, holds one key per row of x: the row's Monte-Carlo numbers come from the generator of its
	// key. A server that coalesces the rows of several requests passes each row's (request seed, index within the
	// request), so that the row gets the numbers it would get alone.
	Keys []RowKey
}

// RowKey identifies the random generator of one row: the seed of its request and its index there.
type RowKey struct {
	Seed  uint64
	Index int
}

// key returns the key of row i: o.Keys[i], or (o.Seed, i).
func (o PredictOptions) key(i int) RowKey {
	if o.Keys != nil {
		return o.Keys[i]
	}
	return RowKey{Seed: o.Seed, Index: i}
}

// rand returns the row's generator.
func (k RowKey) rand() *rand.Rand {
	return rand.New(rand.NewPCG(k.Seed, 0x9e3779b97f4a7c15^uint64(k.Index)))
}

// jointStream is the second word of the joint draws' generator (PCG(Seed, jointStream)); row keys never use it
// (their second word is an index xor a constant with the top bit set, and indices are non-negative ints).
const jointStream = 0x5eed_0f_d4a75

// Prediction is the predictive distribution at test inputs, in the original units of the data.
type Prediction struct {
	// Mean and Var are the predictive mean and variance [N,P] of y (of f with Latent; the latent width L for a
	// classifier) in original units: standardised values v become v·YStd + YMean and variances v·YStd². Std is
	// √Var, computed as √v·YStd: it stays finite where Var overflows float64 (targets of magnitude beyond about
	// 1e154). nil for a classifier's y.
	Mean, Var, Std *mat.Dense
	// Probs are the class probabilities [N,K] of a classifier (robust-max, softmax). A Bernoulli model gives
	// [N,2P]: columns 2j and 2j+1 are p(y_j = 0) and p(y_j = 1) (so [N,2] for one label column). nil for
	// regression and with Latent.
	Probs *mat.Dense
	// Labels are, for a classifier, the most probable class of each row in the model file's label values
	// (Meta "labels"; class indices without them). nil otherwise.
	Labels []float64
	// Cov holds, with FullCov, the covariance [N,N] of each latent function (one per output), in original units.
	Cov []*mat.SymDense
	// OutputCov holds, with OutputCov, the covariance [L,L] between the latent functions at each row (N entries),
	// in original units: entry (p, p') of a standardised covariance c becomes c·YStd_p·YStd_p' (its diagonal is
	// the latent variance, as Var with Latent).
	OutputCov []*mat.SymDense
	// Draws holds, with Draws, the samples of f [N,L] each, in original units.
	Draws []*mat.Dense
}

// profile is what File.Predict learns of its model once, from a prediction of one row.
type profile struct {
	stochastic bool // the marginal prediction draws random numbers (a deep GP, a Monte-Carlo likelihood)
	rowKeyed   bool // ... all of them from gp.PredictOptions.RowRand's generators when it is set (a deep GP)
	mixture    bool // a Monte-Carlo mixture predictive (a deep GP): its draws are per row, not joint
	classifier bool // the prediction has class probabilities
	latent     int  // L, the width of f
	targets    int  // Y, the width of y's marginals (YMean): the latent columns 0 … Y−1 have y's units
}

// predictState is a File's prediction machinery, made at its first prediction: the compiled programs kept
// between calls and the model's profile.
type predictState struct {
	programs *graph.ProgramCache
	once     sync.Once
	prof     profile
	err      error
}

var stateMu sync.Mutex // guards File.state's creation

func (f *File) predictState() *predictState {
	stateMu.Lock()
	defer stateMu.Unlock()
	if f.state == nil {
		f.state = &predictState{programs: graph.NewProgramCache(0)}
	}
	return f.state
}

// Close releases the compiled prediction programs the File keeps (Predict makes them again when called after).
func (f *File) Close() {
	if f == nil {
		return
	}
	stateMu.Lock()
	s := f.state
	f.state = nil
	stateMu.Unlock()
	if s != nil {
		s.programs.Close()
	}
}

// Predict returns the predictive distribution at x [N,D] in the original units of the training data: x is
// standardised with f.Standardizer (when set), the model predicts through gp.Predictor and the predictions are
// mapped back. It is safe for concurrent use, and the CLI (gpzoo predict), the zoo's scores and the server
// (gpzoo serve) all predict through it.
//
// A row's marginals are the same bits whatever other rows are predicted with it: the rows run in programs of
// PredictChunk rows (compiled once per File and kept), and a model whose marginals draw random numbers (a deep
// GP's propagation, a Monte-Carlo likelihood) predicts each row alone, from the generator of its key (o.Keys, or
// (o.Seed, row)). Joint outputs (o.FullCov; o.Draws of a Gaussian predictive) are computed over all rows
// together, from a generator keyed by o.Seed.
//
// Errors: a *ops.ShapeError when x's width is not the model's input dimension, o.Keys is not one per row, or
// the standardizer's target width is not the width of the model's y (PredictiveDim); a *ops.NonFiniteError
// naming the row and column of the first NaN or ±Inf input; ErrNoTrainingData; an error wrapping gp.ErrUnsupported for an option
// the family cannot honour; an error wrapping gp.ErrConfig for negative counts; the model's own errors.
func (f *File) Predict(x *mat.Dense, o PredictOptions) (*Prediction, error) {
	m, err := f.predictor()
	if err != nil {
		return nil, err
	}
	if o.Draws < 0 || o.Samples < 0 {
		return nil, fmt.Errorf("%w: modelfile: Predict: Draws %d and Samples %d must be ≥ 0", gp.ErrConfig, o.Draws, o.Samples)
	}
	if err := gp.CheckInputs("modelfile.Predict", x, m.InputDim()); err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if o.Keys != nil && len(o.Keys) != n {
		return nil, &ops.ShapeError{Op: "modelfile.Predict", Want: fmt.Sprintf("one key per row (%d)", n), Got: fmt.Sprint(len(o.Keys))}
	}
	xs := mat.DenseCopyOf(x)
	if f.Standardizer != nil {
		if xs, err = f.Standardizer.ApplyX(xs); err != nil {
			return nil, fmt.Errorf("modelfile: Predict: standardising the inputs: %w", err)
		}
	}
	st := f.predictState()
	prof, err := st.profile(f, m)
	if err != nil {
		return nil, err
	}
	if o.FullCov && prof.mixture {
		return nil, fmt.Errorf("%w: a deep GP's predictive is a mixture: it has no full covariance", gp.ErrUnsupported)
	}
	samples := o.Samples
	if samples == 0 {
		samples, _ = strconv.Atoi(f.Meta["test_samples"])
	}
	base := gp.PredictOptions{Samples: samples, Programs: st.programs, OutputCov: o.OutputCov}
	var rows *rowPrediction
	switch {
	case prof.rowKeyed && (o.Draws == 0 || !prof.mixture):
		// Every random number per row from the row's generator: the rows run together, in chunks of
		// PredictRowChunk rows (the budget is samples × rows: ChunkRows fixes the chunk's shape).
		if samples == 0 {
			samples = dgp.DefaultTestSamples
		}
		base.Samples = samples
		base.RowRand = func(i int) *rand.Rand { return o.key(i).rand() }
		rows, err = predictChunks(m, xs, base, PredictRowChunk, 2, samples)
	case prof.stochastic:
		rows, err = predictEach(m, xs, o, base, prof)
	default:
		rows, err = predictChunks(m, xs, base, PredictChunk, 4, 1)
	}
	if err != nil {
		return nil, err
	}
	out := &Prediction{OutputCov: rows.ocov}
	switch {
	case o.Latent:
		out.Mean, out.Var = rows.fm, rows.fv
	case rows.probs != nil:
		out.Probs = rows.probs
		if out.Labels, err = f.labels(rows.probs); err != nil {
			return nil, err
		}
	default:
		out.Mean, out.Var = rows.ym, rows.yv
	}
	if o.FullCov || (o.Draws > 0 && !prof.mixture) {
		p, err := m.Predict(xs, gp.PredictOptions{Full: o.FullCov, Draws: o.Draws, Samples: samples, Rand: rand.New(rand.NewPCG(o.Seed, jointStream))})
		if err != nil {
			return nil, err
		}
		out.Cov, out.Draws = p.FCov, p.Draws
	} else if o.Draws > 0 {
		out.Draws = rows.draws
	}
	if err := f.toOriginal(out, prof); err != nil {
		return nil, err
	}
	return out, nil
}

// Batchable reports whether File.Predict with o gives each row a result that depends on that row (and its key)
// only, so that the rows of several requests with the same options may be predicted in one call: true unless o
// asks for joint outputs across rows (FullCov, or Draws of a Gaussian predictive). A File that cannot predict
// reports true (Predict then fails for each request alike).
func (f *File) Batchable(o PredictOptions) bool {
	if o.FullCov {
		return false
	}
	if o.Draws == 0 {
		return true
	}
	m, err := f.predictor()
	if err != nil {
		return true
	}
	prof, err := f.predictState().profile(f, m)
	return err != nil || prof.mixture
}

// Task returns what the model predicts: TaskClassification for a class-label likelihood, TaskCounts for a
// raw-target family (Poisson), TaskRegression otherwise (the families registered with gp.RegisterLikelihood
// say which, found by the likelihood's kind in the model's Spec).
func (f *File) Task() string {
	if f == nil || f.Model == nil {
		return TaskRegression
	}
	spec, err := f.Model.Spec()
	if err != nil {
		return TaskRegression
	}
	kinds := map[string]gp.LikelihoodFamily{}
	for _, fam := range gp.LikelihoodFamilies() {
		kinds[fam.Kind] = fam
	}
	var walk func(s gp.Spec) string
	walk = func(s gp.Spec) string {
		if fam, ok := kinds[s.Kind]; ok {
			switch {
			case fam.Classes:
				return TaskClassification
			case fam.RawTargets:
				return TaskCounts
			}
			return TaskRegression
		}
		for _, c := range s.Children {
			if t := walk(c); t != "" {
				return t
			}
		}
		return ""
	}
	if t := walk(spec); t != "" {
		return t
	}
	return TaskRegression
}

// InputNames returns the names of the model's input columns: Meta "features" (gpzoo train's column names, the
// zoo's data set's), else x0 … x{D−1}.
func (f *File) InputNames() []string {
	var names []string
	if f != nil && f.Meta["features"] != "" && json.Unmarshal([]byte(f.Meta["features"]), &names) == nil {
		return names
	}
	d := 0
	if m, ok := f.model().(gp.Predictor); ok {
		d = m.InputDim()
	}
	return GeneratedInputNames(d)
}

// GeneratedInputNames returns x0 … x{d−1}: the names of the inputs of a model saved from data without column
// names (Save writes them; InputNames falls back to them).
func GeneratedInputNames(d int) []string { return numbered("x", d) }

// OutputNames returns the names of the model's target columns: Meta "target" (one column) or "targets" (a
// JSON list), else y0 … y{P−1} (P = the standardizer's target width, else the width of the model's y:
// PredictiveDim).
func (f *File) OutputNames() []string {
	if f == nil {
		return nil
	}
	if t := f.Meta["target"]; t != "" {
		return []string{t}
	}
	var names []string
	if f.Meta["targets"] != "" && json.Unmarshal([]byte(f.Meta["targets"]), &names) == nil {
		return names
	}
	p := 0
	if f.Standardizer != nil {
		p = len(f.Standardizer.YMean)
	} else if m, ok := f.model().(gp.Predictor); ok {
		p = m.PredictiveDim()
	}
	return numbered("y", p)
}

// ClassValues returns a classifier's label values for its k classes: Meta "labels" (the original values gpzoo
// train saw), else 0 … k−1.
func (f *File) ClassValues(k int) ([]float64, error) {
	vals := make([]float64, k)
	for c := range vals {
		vals[c] = float64(c)
	}
	if f == nil || f.Meta["labels"] == "" {
		return vals, nil
	}
	if err := json.Unmarshal([]byte(f.Meta["labels"]), &vals); err != nil || len(vals) != k {
		return nil, fmt.Errorf("modelfile: the model's labels %q do not match its %d classes", f.Meta["labels"], k)
	}
	return vals, nil
}

func numbered(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}

func (f *File) model() Model {
	if f == nil {
		return nil
	}
	return f.Model
}

func (f *File) predictor() (gp.Predictor, error) {
	if f == nil || f.Model == nil {
		return nil, errors.New("modelfile: Predict: no model")
	}
	m, ok := f.Model.(gp.Predictor)
	if !ok {
		return nil, fmt.Errorf("modelfile: Predict: cannot predict with a %T (not a gp.Predictor)", f.Model)
	}
	return m, nil
}

// labels returns the most probable class of each row (Bernoulli's [N,2] included: the larger of its two
// columns).
func (f *File) labels(probs *mat.Dense) ([]float64, error) {
	n, k := probs.Dims()
	vals, err := f.ClassValues(k)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		pr := probs.RawRowView(i)
		out[i] = vals[slices.Index(pr, slices.Max(pr))]
	}
	return out, nil
}

// profile predicts one row once (the first input row of the standardised space: zeros) with a counting random
// source, and records what the model is.
func (s *predictState) profile(f *File, m gp.Predictor) (profile, error) {
	s.once.Do(func() {
		x := mat.NewDense(1, m.InputDim(), nil)
		src := &countingSource{src: rand.NewPCG(1, 2)}
		p, err := m.Predict(x, gp.PredictOptions{Samples: 2, Rand: rand.New(src)})
		if err != nil {
			s.err = err
			return
		}
		_, l := p.FMean.Dims()
		_, y := p.YMean.Dims()
		// A mixture whose marginals draw random numbers (a deep GP's propagated samples) has per-row draws and no
		// full covariance; a deterministic mixture (a posterior over hyperparameters, package gp/bayes) computes
		// both itself, jointly across rows, as a Gaussian predictive does.
		s.prof = profile{stochastic: src.n > 0, mixture: p.Components != nil && src.n > 0, classifier: p.Probs != nil, latent: l, targets: y}
		if !s.prof.stochastic {
			return
		}
		src.n = 0
		row := &countingSource{src: rand.NewPCG(3, 4)}
		if _, err := m.Predict(x, gp.PredictOptions{Samples: 2, Rand: rand.New(src), RowRand: func(int) *rand.Rand { return rand.New(row) }}); err != nil {
			s.err = err
			return
		}
		s.prof.rowKeyed = src.n == 0 && row.n > 0
	})
	if s.err != nil {
		// A failed profile is not kept: the next call tries again (the error may be the data's, say).
		stateMu.Lock()
		if f.state == s {
			f.state = nil
		}
		stateMu.Unlock()
		defer s.programs.Close()
	}
	return s.prof, s.err
}

// countingSource counts the numbers drawn from it.
type countingSource struct {
	src rand.Source
	n   int
}

func (c *countingSource) Uint64() uint64 { c.n++; return c.src.Uint64() }

// rowPrediction holds the marginals of every row, in the model's units.
type rowPrediction struct {
	fm, fv, ym, yv, probs *mat.Dense
	draws                 []*mat.Dense
	ocov                  []*mat.SymDense // the covariances between the outputs per row, when asked for
}

// predictChunks predicts the rows of xs in calls of up to largest rows (runSize: the last one zero-padded to a
// size of the ladder of step) with base.ChunkRows = size·per (per: the samples of each row a deep GP
// propagates, else 1), on up to GOMAXPROCS goroutines: for a model whose marginals draw no random numbers, or
// draw them all from base.RowRand's per-row generators (which it shifts to each call's rows).
func predictChunks(m gp.Predictor, xs *mat.Dense, base gp.PredictOptions, largest, step, per int) (*rowPrediction, error) {
	n, d := xs.Dims()
	type run struct{ lo, hi, size int }
	var runs []run
	for lo := 0; lo < n; {
		size := runSize(n-lo, largest, step, per)
		runs = append(runs, run{lo, min(lo+size, n), size})
		lo += size
	}
	parts := make([]*gp.Prediction, len(runs))
	err := parallel(len(runs), func(r int) error {
		lo, hi, size := runs[r].lo, runs[r].hi, runs[r].size
		x := mat.NewDense(size, d, nil)
		for i := lo; i < hi; i++ {
			copy(x.RawRowView(i-lo), xs.RawRowView(i))
		}
		o := base
		o.ChunkRows = size * per
		if base.RowRand != nil {
			o.RowRand = func(i int) *rand.Rand {
				if lo+i >= hi { // a padding row
					return rand.New(rand.NewPCG(0, 0))
				}
				return base.RowRand(lo + i)
			}
		}
		p, err := m.Predict(x, o)
		if err != nil {
			return err
		}
		parts[r] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stack(parts, n, func(r int) (int, int) { return runs[r].lo, runs[r].hi - runs[r].lo }), nil
}

// predictEach predicts the rows of a model whose marginals draw random numbers one at a time, each from the
// generator of its key, on up to GOMAXPROCS goroutines; a mixture's per-row draws come with them.
func predictEach(m gp.Predictor, xs *mat.Dense, o PredictOptions, base gp.PredictOptions, prof profile) (*rowPrediction, error) {
	n, d := xs.Dims()
	parts := make([]*gp.Prediction, n)
	err := parallel(n, func(i int) error {
		po := base
		po.ChunkRows = 1
		po.Rand = o.key(i).rand()
		if prof.mixture {
			po.Draws = o.Draws
			po.ChunkRows = 0 // a deep GP's budget is samples × rows: one row per run
		}
		p, err := m.Predict(mat.NewDense(1, d, slices.Clone(xs.RawRowView(i))), po)
		if err != nil {
			return err
		}
		parts[i] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stack(parts, n, func(r int) (int, int) { return r, 1 }), nil
}

// stack copies the first rows of each part (part r's rows go to rows lo … lo+cnt−1, span(r) = lo, cnt) into one
// rowPrediction of n rows.
func stack(parts []*gp.Prediction, n int, span func(r int) (lo, cnt int)) *rowPrediction {
	rows := func(get func(p *gp.Prediction) *mat.Dense) *mat.Dense {
		if get(parts[0]) == nil {
			return nil
		}
		_, c := get(parts[0]).Dims()
		out := mat.NewDense(n, c, nil)
		for r, p := range parts {
			lo, cnt := span(r)
			src := get(p).RawMatrix()
			copy(out.RawMatrix().Data[lo*c:(lo+cnt)*c], src.Data[:cnt*c])
		}
		return out
	}
	out := &rowPrediction{
		fm:    rows(func(p *gp.Prediction) *mat.Dense { return p.FMean }),
		fv:    rows(func(p *gp.Prediction) *mat.Dense { return p.FVar }),
		ym:    rows(func(p *gp.Prediction) *mat.Dense { return p.YMean }),
		yv:    rows(func(p *gp.Prediction) *mat.Dense { return p.YVar }),
		probs: rows(func(p *gp.Prediction) *mat.Dense { return p.Probs }),
	}
	if parts[0].OutputCov != nil {
		out.ocov = make([]*mat.SymDense, n)
		for r, p := range parts {
			lo, cnt := span(r)
			copy(out.ocov[lo:lo+cnt], p.OutputCov[:cnt])
		}
	}
	if k := len(parts[0].Draws); k > 0 {
		out.draws = make([]*mat.Dense, k)
		for s := range out.draws {
			out.draws[s] = rows(func(p *gp.Prediction) *mat.Dense { return p.Draws[s] })
		}
	}
	return out
}

// parallel runs f(0) … f(n−1) on up to GOMAXPROCS goroutines and returns the first error (by index).
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			if errs[i] = f(i); errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				errs[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool { return e == nil })...)
}

// toOriginal maps out's standardised values to original units in place (means, variances, covariances, draws)
// and fills Std. A classifier's latent values have no units: only Std is added. Of latent values (Latent, Cov,
// OutputCov, Draws), only the columns 0 … Y−1 that locate the targets are mapped (prof.targets; PredictOptions.
// Latent): a likelihood's further latents (the heteroscedastic's log noise variances) keep the model's units.
func (f *File) toOriginal(out *Prediction, prof profile) error {
	s := f.Standardizer
	if prof.classifier {
		s = nil
	}
	if s != nil && (len(s.YMean) != prof.targets || len(s.YStd) != prof.targets) {
		return &ops.ShapeError{Op: "modelfile.Predict", Want: fmt.Sprintf("a standardizer of %d target columns (the model's outputs)", prof.targets), Got: fmt.Sprintf("%d means, %d deviations", len(s.YMean), len(s.YStd))}
	}
	if out.Mean != nil {
		n, p := out.Mean.Dims()
		out.Std = mat.NewDense(n, p, nil)
		for i := 0; i < n; i++ {
			m, v, d := out.Mean.RawRowView(i), out.Var.RawRowView(i), out.Std.RawRowView(i)
			for j := range m {
				if s == nil || j >= prof.targets {
					d[j] = math.Sqrt(v[j])
					continue
				}
				m[j] = s.InverseMean(j, m[j])
				d[j] = s.InverseStd(j, v[j])
				v[j] = s.InverseVar(j, v[j])
			}
		}
	}
	if s == nil {
		return nil
	}
	for j, c := range out.Cov {
		if j < len(s.YStd) {
			c.ScaleSym(s.YStd[j]*s.YStd[j], c)
		}
	}
	scale := func(a int) float64 { // a latent column's factor: YStd for the targets' columns, 1 for other latents
		if a < len(s.YStd) {
			return s.YStd[a]
		}
		return 1
	}
	for _, c := range out.OutputCov {
		l := c.SymmetricDim()
		for a := 0; a < l; a++ {
			for b := a; b < l; b++ {
				c.SetSym(a, b, c.At(a, b)*scale(a)*scale(b)) // the diagonal as InverseVar: v·s·s
			}
		}
	}
	for _, dr := range out.Draws {
		n, p := dr.Dims()
		for i := 0; i < n; i++ {
			row := dr.RawRowView(i)
			for j := range row[:min(p, len(s.YMean))] {
				row[j] = s.InverseMean(j, row[j])
			}
		}
	}
	return nil
}
