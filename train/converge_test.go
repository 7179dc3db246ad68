package train_test

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// curve returns the losses of steps 1..n of a run on points training points whose loss per point is f(step).
func curve(n, points int, f func(step int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(points) * f(i+1)
	}
	return out
}

func convergedAt(t *testing.T, cfg train.ConvergeConfig, losses []float64, n int) int {
	t.Helper()
	s, err := train.ConvergedAt(cfg, losses, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConvergeFlatStops: on a flat curve the first window sets the best mean and every later one fails to
// improve it, so the criterion stops after 1+Patience windows, or at the first window end past MinSteps.
func TestConvergeFlatStops(t *testing.T) {
	flat := curve(10000, 500, func(int) float64 { return 1.25 })
	cfg := train.ConvergeConfig{Window: 10, Patience: 3, Tol: 1e-3, MinSteps: 1}
	if got := convergedAt(t, cfg, flat, 500); got != 40 {
		t.Errorf("flat curve: stopped after %d steps, want 40 (window 1 sets the best, windows 2–4 do not beat it)", got)
	}
	cfg.MinSteps = 95
	if got := convergedAt(t, cfg, flat, 500); got != 100 {
		t.Errorf("flat curve, MinSteps 95: stopped after %d steps, want 100 (the first window end past MinSteps)", got)
	}
	// The defaults: 100-step windows, patience 5, at least 1000 steps.
	d := train.DefaultConverge
	want := max(d.MinSteps, (1+d.Patience)*d.Window)
	want = (want + d.Window - 1) / d.Window * d.Window
	if got := convergedAt(t, train.ConvergeConfig{}, flat, 500); got != want {
		t.Errorf("flat curve, defaults %+v: stopped after %d steps, want %d", d, got, want)
	}
	// Seeded noise around a flat mean (σ = 0.05 nats per point a step, 5e-3 per 100-step window) still stops:
	// within a few times Patience windows, as chance new bests beat the old one by more than Tol ever more rarely.
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := curve(10000, 500, func(int) float64 { return 1 + 0.05*rng.NormFloat64() })
	if got := convergedAt(t, train.ConvergeConfig{}, noisy, 500); got == 0 || got > 4000 {
		t.Errorf("noisy flat curve: stopped after %d steps, want within 4000", got)
	}
}

// TestConvergeImprovingContinues: a curve that keeps falling by more than Tol every Patience windows never
// stops, a slower one stops, and a fast fall followed by a plateau stops on the plateau.
func TestConvergeImprovingContinues(t *testing.T) {
	cfg := train.ConvergeConfig{Window: 100, Patience: 5, Tol: 1e-3, MinSteps: 100}
	// 2.5e-4 nats per point a window: 1.25e-3 > Tol over 5 windows.
	steady := curve(20000, 1000, func(s int) float64 { return 2 - 2.5e-6*float64(s) })
	if got := convergedAt(t, cfg, steady, 1000); got != 0 {
		t.Errorf("steadily improving curve stopped after %d steps", got)
	}
	// 1.5e-4 a window: 7.5e-4 < Tol over 5 windows, so windows 2–6 do not count as progress: it stops after 6.
	slow := curve(20000, 1000, func(s int) float64 { return 2 - 1.5e-6*float64(s) })
	if got := convergedAt(t, cfg, slow, 1000); got != 600 {
		t.Errorf("curve improving by less than Tol per Patience windows: stopped after %d steps, want 600", got)
	}
	// Exponential decay to a plateau: stops once the remaining fall over Patience windows is below Tol, i.e.
	// where 0.5·e^{−s/τ}·(1 − e^{−500/τ}) ≈ 1e-3 (τ = 1000: s ≈ 5.3e3), not during the descent.
	decay := curve(20000, 1000, func(s int) float64 { return 0.5 * math.Exp(-float64(s)/1000) })
	got := convergedAt(t, cfg, decay, 1000)
	if got < 4500 || got > 7000 {
		t.Errorf("exponential decay (τ = 1000 steps): stopped after %d steps, want 4500–7000", got)
	}
}

// TestConvergeScaleFree: Tol is per training point, so a curve scaled by N stops at the same step for every N.
func TestConvergeScaleFree(t *testing.T) {
	perPoint := func(s int) float64 { return 0.3 * math.Exp(-float64(s)/700) }
	want := convergedAt(t, train.ConvergeConfig{}, curve(10000, 1, perPoint), 1)
	if want == 0 {
		t.Fatal("the curve never converged")
	}
	for _, n := range []int{300, 10000, 1000000} {
		if got := convergedAt(t, train.ConvergeConfig{}, curve(10000, n, perPoint), n); got != want {
			t.Errorf("N = %d: stopped after %d steps, want %d (as N = 1)", n, got, want)
		}
	}
}

func TestConvergeConfigErrors(t *testing.T) {
	for _, c := range []train.ConvergeConfig{{Window: -1}, {Patience: -1}, {MinSteps: -1}, {Tol: -1e-3}, {Tol: math.NaN()}, {Tol: math.Inf(1)}} {
		if _, err := train.ConvergedAt(c, nil, 10); err == nil {
			t.Errorf("ConvergedAt(%+v) accepted", c)
		}
		f, x, y := svgpFamily(t)
		r := f.build(t, x)
		cfg := ckConfig(r, f.batch)
		cfg.Converge = &c
		if _, err := train.Train(r.model, x, y, r.rng, cfg); err == nil {
			t.Errorf("Train with Converge %+v accepted", c)
		}
	}
}

// stopAt15 is a criterion that every window after the first fails (Tol beyond any change), so Train stops after
// (1+2)·5 = 15 steps.
func stopAt15() *train.ConvergeConfig {
	return &train.ConvergeConfig{Window: 5, Patience: 2, Tol: 1e9, MinSteps: 1}
}

// TestTrainConverge runs Train with a criterion on a real model: it stops after the step the criterion names
// (StopConverged), never beyond the cap (StopIterationCap), and its losses are bit for bit those of a fixed run,
// which runs exactly Iters steps (StopIterations).
func TestTrainConverge(t *testing.T) {
	t.Parallel()
	f, x, y := svgpFamily(t)
	run := func(iters int, conv *train.ConvergeConfig) *train.Result {
		r := f.build(t, x)
		cfg := ckConfig(r, f.batch)
		cfg.Iters, cfg.Converge = iters, conv
		evals := 0
		cfg.EvalEvery, cfg.Eval = 100, func(int) (map[string]float64, error) { evals++; return nil, nil }
		res, err := train.Train(r.model, x, y, r.rng, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Evals) != 1 || res.Evals[0].Step != res.Steps || evals != 1 {
			t.Errorf("Iters %d, Converge %v: evaluations %+v, want one after the last step %d", iters, conv, res.Evals, res.Steps)
		}
		return res
	}
	fixed := run(40, nil)
	if fixed.Steps != 40 || len(fixed.Losses) != 40 || fixed.StopReason != train.StopIterations {
		t.Fatalf("fixed run: %d steps, %d losses, %q; want exactly 40, iterations", fixed.Steps, len(fixed.Losses), fixed.StopReason)
	}
	conv := run(40, stopAt15())
	if conv.Steps != 15 || len(conv.Losses) != 15 || conv.StopReason != train.StopConverged {
		t.Fatalf("converging run: %d steps, %d losses, %q; want 15, converged", conv.Steps, len(conv.Losses), conv.StopReason)
	}
	if d := sameBits([][]float64{conv.Losses}, [][]float64{fixed.Losses[:15]}); d != "" {
		t.Errorf("the criterion changed the losses: %s", d)
	}
	if want, _ := train.ConvergedAt(*stopAt15(), fixed.Losses, ckN); want != 15 {
		t.Errorf("ConvergedAt on the fixed run's losses: %d, want 15", want)
	}
	capped := run(12, stopAt15())
	if capped.Steps != 12 || capped.StopReason != train.StopIterationCap {
		t.Errorf("cap 12 below the criterion's 15: %d steps, %q; want 12, iteration cap", capped.Steps, capped.StopReason)
	}
	// A criterion that is never met (any improvement counts, none is needed for long): exactly Iters steps.
	never := run(40, &train.ConvergeConfig{Window: 5, Patience: 100, Tol: 1e-300, MinSteps: 1})
	if never.Steps != 40 || never.StopReason != train.StopIterationCap {
		t.Errorf("unmet criterion: %d steps, %q; want 40, iteration cap", never.Steps, never.StopReason)
	}
	if d := sameBits([][]float64{never.Losses}, [][]float64{fixed.Losses}); d != "" {
		t.Errorf("unmet criterion: losses differ from the fixed run's: %s", d)
	}
}

// TestTrainConvergeResume interrupts a converging run before, between and after its criterion's windows and
// resumes it in fresh objects: it stops at the uninterrupted run's step with the same losses and Params, bit for
// bit; resuming the final checkpoint runs nothing; a checkpoint's criterion must match the resumed run's.
func TestTrainConvergeResume(t *testing.T) {
	t.Parallel()
	f, x, y := svgpFamily(t)
	const iters = 40
	r1 := f.build(t, x)
	cfg1 := ckConfig(r1, f.batch)
	cfg1.Iters, cfg1.Converge = iters, stopAt15()
	res1, err := train.Train(r1.model, x, y, r1.rng, cfg1)
	if err != nil {
		t.Fatal(err)
	}
	if res1.Steps != 15 || res1.StopReason != train.StopConverged {
		t.Fatalf("uninterrupted: %d steps, %q", res1.Steps, res1.StopReason)
	}
	want := rawParams(r1.model)
	resume := func(dir string, conv *train.ConvergeConfig) (*train.Result, ckRun, error) {
		r := f.build(t, x)
		cfg := ckConfig(r, f.batch)
		cfg.Iters, cfg.Converge = iters, conv
		cfg.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: r.sources}
		res, err := train.Train(r.model, x, y, r.rng, cfg)
		return res, r, err
	}
	for _, k := range []int{3, 7, 10, 12} { // in window 1, in window 2, at the end of window 2, in window 3
		dir := t.TempDir()
		r2 := f.build(t, x)
		cfg2 := ckConfig(r2, f.batch)
		cfg2.Iters, cfg2.Converge = iters, stopAt15()
		eval, stop := stopAfter(k)
		cfg2.Eval, cfg2.EvalEvery, cfg2.Stop = eval, 1, stop
		cfg2.Checkpoint = &train.CheckpointConfig{Dir: dir, Sources: r2.sources}
		res2, err := train.Train(r2.model, x, y, r2.rng, cfg2)
		if !errors.Is(err, train.ErrInterrupted) || res2.Steps != k || res2.StopReason != train.StopInterrupted {
			t.Fatalf("stop after %d: err %v, %d steps, %q", k, err, res2.Steps, res2.StopReason)
		}
		res3, r3, err := resume(dir, stopAt15())
		if err != nil {
			t.Fatal(err)
		}
		if res3.Steps != 15 || res3.StopReason != train.StopConverged {
			t.Errorf("resumed after %d: %d steps, %q; want 15, converged", k, res3.Steps, res3.StopReason)
		}
		if d := sameBits([][]float64{res3.Losses}, [][]float64{res1.Losses}); d != "" {
			t.Errorf("resumed after %d: losses differ: %s", k, d)
		}
		if d := sameBits(rawParams(r3.model), want); d != "" {
			t.Errorf("resumed after %d: Params differ: %s", k, d)
		}
		// The checkpoint of a converged run: resuming it runs nothing and says converged.
		res4, r4, err := resume(dir, stopAt15())
		if err != nil {
			t.Fatal(err)
		}
		if res4.Steps != 15 || res4.StopReason != train.StopConverged || len(res4.Losses) != 15 {
			t.Errorf("resume of the converged checkpoint: %d steps, %q", res4.Steps, res4.StopReason)
		}
		if d := sameBits(rawParams(r4.model), want); d != "" {
			t.Errorf("resume of the converged checkpoint: Params differ: %s", d)
		}
		if k != 7 {
			continue
		}
		// Another criterion, or none, is another run.
		for _, other := range []*train.ConvergeConfig{nil, {Window: 5, Patience: 3, Tol: 1e9, MinSteps: 1}} {
			if _, _, err := resume(dir, other); !errors.Is(err, train.ErrCheckpointMismatch) {
				t.Errorf("resume with criterion %+v: err %v, want ErrCheckpointMismatch", other, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, train.CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		if v := bin.LittleEndian.Uint32(b[8:12]); v != 2 {
			t.Errorf("a checkpoint with a criterion has format version %d, want 2", v)
		}
	}
	// A run without a criterion still writes version 1 (older builds resume it), and a criterion cannot
	// resume it.
	dir, f1, x1, y1 := writeCheckpoint(t)
	b, err := os.ReadFile(filepath.Join(dir, train.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if v := bin.LittleEndian.Uint32(b[8:12]); v != 1 {
		t.Errorf("a checkpoint without a criterion has format version %d, want 1", v)
	}
	r := f1.build(t, x1)
	cfg := ckConfig(r, f1.batch)
	cfg.Iters, cfg.Converge = 3, stopAt15()
	cfg.Checkpoint = &train.CheckpointConfig{Dir: dir, Resume: true, Sources: r.sources}
	if _, err := train.Train(r.model, x1, y1, r.rng, cfg); !errors.Is(err, train.ErrCheckpointMismatch) {
		t.Errorf("criterion resuming a run without one: err %v, want ErrCheckpointMismatch", err)
	}
}

// TestTrainLBFGSStopReason: L-BFGS reports why it stopped.
func TestTrainLBFGSStopReason(t *testing.T) {
	t.Parallel()
	_, x, y := svgpFamily(t)
	x, y = mat.DenseCopyOf(x.Slice(0, 60, 0, 2)), mat.DenseCopyOf(y.Slice(0, 60, 0, 1))
	for _, tc := range []struct {
		iters int
		want  []train.StopReason
	}{{2, []train.StopReason{train.StopIterationCap}}, {500, []train.StopReason{train.StopConverged, train.StopNoProgress}}} {
		r := ckFamilies()[len(ckFamilies())-1].build(t, x) // the exact GP
		res, err := train.TrainLBFGS(r.model, x, y, train.LBFGSConfig{Iters: tc.iters})
		if err != nil {
			t.Fatal(err)
		}
		ok := false
		for _, w := range tc.want {
			ok = ok || res.StopReason == w
		}
		if !ok || res.Steps > tc.iters {
			t.Errorf("Iters %d: %d iterations, %q; want one of %v", tc.iters, res.Steps, res.StopReason, tc.want)
		}
	}
}

// stopAfterRecords is a slog.Handler that counts records and closes stop at the n-th: TrainLBFGS's Logger
// (LogEvery 1) then interrupts the fit at a known major iteration.
type stopAfterRecords struct {
	n, seen int
	stop    chan struct{}
	msgs    []string
}

func (h *stopAfterRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *stopAfterRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *stopAfterRecords) WithGroup(string) slog.Handler            { return h }
func (h *stopAfterRecords) Handle(_ context.Context, r slog.Record) error {
	h.seen++
	h.msgs = append(h.msgs, r.Message)
	if h.seen == h.n {
		close(h.stop)
	}
	return nil
}

// TestTrainLBFGSStop: a Stop closed before the fit, or after its third major iteration (by the Logger's third
// record), ends TrainLBFGS with an error wrapping ErrInterrupted, StopInterrupted, the iterations done, and the
// Params as they were at the call; an unstopped fit logs every LogEvery iterations and once at the end, and
// draws its progress line.
func TestTrainLBFGSStop(t *testing.T) {
	t.Parallel()
	_, x, y := svgpFamily(t)
	x, y = mat.DenseCopyOf(x.Slice(0, 60, 0, 2)), mat.DenseCopyOf(y.Slice(0, 60, 0, 1))
	for _, at := range []int{0, 3} {
		r := ckFamilies()[len(ckFamilies())-1].build(t, x) // the exact GP
		before := graph.SnapshotRaw(r.model.Params())
		h := &stopAfterRecords{n: at, stop: make(chan struct{})}
		if at == 0 {
			close(h.stop)
		}
		res, err := train.TrainLBFGS(r.model, x, y, train.LBFGSConfig{Iters: 500, Stop: h.stop, Logger: slog.New(h), LogEvery: 1})
		if !errors.Is(err, train.ErrInterrupted) || res == nil || res.StopReason != train.StopInterrupted || res.Steps != at {
			t.Fatalf("stopped at %d: err %v, result %+v; want ErrInterrupted after %d iterations", at, err, res, at)
		}
		if !reflect.DeepEqual(graph.SnapshotRaw(r.model.Params()), before) {
			t.Errorf("stopped at %d: the Params moved", at)
		}
	}
	r := ckFamilies()[len(ckFamilies())-1].build(t, x)
	h := &stopAfterRecords{n: -1, stop: make(chan struct{})}
	var line bytes.Buffer
	res, err := train.TrainLBFGS(r.model, x, y, train.LBFGSConfig{Iters: 6, Logger: slog.New(h), LogEvery: 2, Progress: &line})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("step %d/6 ", res.Steps); !strings.Contains(line.String(), want) || !strings.Contains(line.String(), "L-BFGS, ") || !strings.HasSuffix(line.String(), "\n") {
		t.Errorf("progress line %q: want %q, the evaluations and a final newline", line.String(), want)
	}
	if want := res.Steps/2 + 1; h.seen != want || h.msgs[len(h.msgs)-1] != "train: L-BFGS done" {
		t.Errorf("%d iterations logged every 2: %d records %q, want %d ending with the summary", res.Steps, h.seen, h.msgs, want)
	}
}
