package train

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/atomicfile"
)

// Checkpoints (Config.Checkpoint) let Train stop and later resume so that the resumed run ends with exactly,
// bit for bit, the Params and losses of an uninterrupted run with the same seeds. A checkpoint holds the step
// count, every Param's raw value by name, the Optimizer's and each Hook's state (Stateful), the Sampler's
// position, the states of the caller's random sources (RandState), the losses and evaluations so far, and a
// fingerprint of the run (Iters, batch size, N, D, P, the convergence criterion) checked on resume. The
// convergence criterion's state is a function of the losses, so a resumed run rebuilds it from them and stops
// where an uninterrupted run stops. Checkpoints are for Train only; TrainLBFGS does not write them.

// CheckpointFile is the name of the checkpoint file inside CheckpointConfig.Dir; each save replaces it
// atomically (a temporary file in Dir, fsync, rename, fsync of Dir).
const CheckpointFile = "checkpoint.gpzck"

// CheckpointVersion is the newest checkpoint format version this build writes; it reads versions
// 1..CheckpointVersion. Version 2 adds the convergence criterion (Config.Converge) to the fingerprint; a run
// without one still writes version 1, which builds that predate the criterion read, while they refuse a
// version-2 checkpoint instead of resuming it without its criterion.
const CheckpointVersion = 2

// checkpointMagic opens every checkpoint file.
var checkpointMagic = [8]byte{'G', 'P', 'Z', 'O', 'O', 'C', 'K', 'P'}

// Layout: magic [8] | version uint32 LE | body length uint64 LE | body (gob) | SHA-256 of all that [32].
const (
	checkpointHeader = 8 + 4 + 8
	checkpointSum    = sha256.Size
)

// RandState is the state of a random source: *rand.PCG and *rand.ChaCha8 of math/rand/v2 implement it.
type RandState interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Stateful is implemented by an Optimizer or a Hook whose updates depend on what it did in earlier steps
// (Adam's moments, NatGrad's counters). Train saves that state in checkpoints and restores it on resume. An
// Optimizer or Hook without it is taken to be stateless: after a resume it starts afresh.
type Stateful interface {
	// MarshalState encodes the state. params are the Params the component acts on: the Optimizer's
	// (trainable, unclaimed), or every Param the program differentiates for a Hook.
	MarshalState(params []*graph.Param) ([]byte, error)
	// UnmarshalState replaces the state by data from MarshalState, with the same meaning of params: the
	// objects are those of the resumed run, in the same order (names need not be unique).
	UnmarshalState(params []*graph.Param, data []byte) error
}

// CheckpointConfig configures Train's checkpoints.
type CheckpointConfig struct {
	// Dir holds the checkpoint file (required; created if missing).
	Dir string
	// Every > 0 saves after every Every steps; 0 saves only after the last step and when Config.Stop fires.
	Every int
	// Resume loads the checkpoint in Dir and continues from its step to Iters. A missing checkpoint is an
	// error wrapping ErrNoCheckpoint (never a silent fresh start); a checkpoint saved after the last step
	// returns its Result without running a step.
	Resume bool
	// Sources are the random sources behind every *rand.Rand the run draws from, in a fixed order: the source
	// of the minibatch rng given to Train, and those inside the model (a deep GP's noise). They are saved and,
	// on resume, restored in order; the count must match. Train cannot see a *rand.Rand's source, so a source
	// left out here makes the resumed run differ. Sources may be empty only when every step uses the whole
	// data set (BatchSize 0 or N) and the model draws no random numbers.
	Sources []RandState
}

// ErrInterrupted is wrapped by the error Train returns when Config.Stop fires before the last step.
var ErrInterrupted = errors.New("train: interrupted")

// Checkpoint errors; *CheckpointError wraps one of them.
var (
	// ErrNoCheckpoint: Resume was asked for but Dir holds no checkpoint.
	ErrNoCheckpoint = errors.New("train: no checkpoint")
	// ErrCheckpointCorrupt: bad magic, checksum mismatch or undecodable content.
	ErrCheckpointCorrupt = errors.New("train: corrupt checkpoint")
	// ErrCheckpointTruncated: the file ends before its declared length.
	ErrCheckpointTruncated = errors.New("train: truncated checkpoint")
	// ErrCheckpointVersion: the file has a newer format version than this build reads.
	ErrCheckpointVersion = errors.New("train: checkpoint has a newer format version")
	// ErrCheckpointMismatch: the checkpoint belongs to another run (Iters, batch size, data shape, Param names
	// or shapes, Optimizer or Hooks, number of Sources).
	ErrCheckpointMismatch = errors.New("train: checkpoint does not match this run")
	// ErrCheckpointConfig: an invalid CheckpointConfig.
	ErrCheckpointConfig = errors.New("train: invalid checkpoint configuration")
)

// CheckpointError reports a checkpoint that cannot be used, or written.
type CheckpointError struct {
	Path   string // the checkpoint file
	Detail string // what is wrong
	Err    error  // one of the sentinels above, or an I/O error
}

func (e *CheckpointError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.Err, e.Path, e.Detail)
}

// Unwrap returns the sentinel (or I/O error).
func (e *CheckpointError) Unwrap() error { return e.Err }

// checkpointBody is the gob-encoded content of a checkpoint.
type checkpointBody struct {
	Step                  int // steps done
	Iters, Batch, N, D, P int // fingerprint
	Params                []savedParam
	OptimizerStateful     bool
	Optimizer             []byte
	HookStateful          []bool
	Hooks                 [][]byte
	Sampler               datasets.SamplerState
	Sources               [][]byte
	Losses                []float64
	Times                 []float64
	Evals                 []Eval
	// Converge is the run's convergence criterion with its defaults applied (nil: none; version 2).
	Converge *ConvergeConfig
}

type savedParam struct {
	Name  string
	Shape []int
	Raw   []float64
}

// checkpointer saves and restores one Train run.
type checkpointer struct {
	cfg     *CheckpointConfig
	path    string
	iters   int
	batch   int
	n, d, p int
	params  []*graph.Param // every Param the program reads
	optPs   []*graph.Param // the Optimizer's
	trained []*graph.Param // the program's differentiated Params (what hooks see)
	opt     Optimizer
	hooks   []Hook
	sampler *datasets.Sampler
	conv    *ConvergeConfig // the criterion with its defaults (nil: none)
}

func (c *CheckpointConfig) validate(batch, n int) error {
	bad := func(format string, a ...any) error {
		return &CheckpointError{Path: filepath.Join(c.Dir, CheckpointFile), Detail: fmt.Sprintf(format, a...), Err: ErrCheckpointConfig}
	}
	if c.Dir == "" {
		return bad("empty Dir")
	}
	if c.Every < 0 {
		return bad("Every %d is negative", c.Every)
	}
	for i, s := range c.Sources {
		if s == nil {
			return bad("source %d is nil", i)
		}
	}
	if len(c.Sources) == 0 && batch < n {
		return bad("no Sources, but minibatches of %d of %d rows are drawn from the rng: pass its source", batch, n)
	}
	return nil
}

// save writes the checkpoint after step steps.
func (c *checkpointer) save(step int, res *Result) error {
	b := checkpointBody{Step: step, Iters: c.iters, Batch: c.batch, N: c.n, D: c.d, P: c.p,
		Sampler: c.sampler.State(), Losses: res.Losses, Times: res.Times, Evals: res.Evals, Converge: c.conv}
	for _, q := range c.params {
		b.Params = append(b.Params, savedParam{Name: q.Name(), Shape: q.Shape(), Raw: q.Raw()})
	}
	var err error
	if s, ok := c.opt.(Stateful); ok {
		b.OptimizerStateful = true
		if b.Optimizer, err = s.MarshalState(c.optPs); err != nil {
			return c.fail("saving the optimizer state", err)
		}
	}
	b.HookStateful = make([]bool, len(c.hooks))
	b.Hooks = make([][]byte, len(c.hooks))
	for i, h := range c.hooks {
		if s, ok := h.(Stateful); ok {
			b.HookStateful[i] = true
			if b.Hooks[i], err = s.MarshalState(c.trained); err != nil {
				return c.fail(fmt.Sprintf("saving the state of hook %d", i), err)
			}
		}
	}
	for i, s := range c.cfg.Sources {
		st, err := s.MarshalBinary()
		if err != nil {
			return c.fail(fmt.Sprintf("saving random source %d", i), err)
		}
		b.Sources = append(b.Sources, st)
	}
	data, err := encodeCheckpoint(&b)
	if err != nil {
		return c.fail("encoding", err)
	}
	if err := atomicfile.WriteFile(c.path, data, 0o644); err != nil {
		return c.fail("writing", err)
	}
	return nil
}

func (c *checkpointer) fail(what string, err error) error {
	return &CheckpointError{Path: c.path, Detail: what, Err: err}
}

// restore loads the checkpoint into the run's objects and returns the number of steps it holds with the
// Result so far. Nothing is changed unless every check passes (the Params, Optimizer, hooks, sources and
// sampler are written only after the fingerprint, names and shapes are checked; a failing Stateful restore
// may leave that component partly restored, which is harmless as Train then returns the error).
func (c *checkpointer) restore() (int, *Result, error) {
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, &CheckpointError{Path: c.path, Detail: "Resume asked for, but there is no checkpoint file", Err: ErrNoCheckpoint}
	}
	if err != nil {
		return 0, nil, c.fail("reading", err)
	}
	b, err := decodeCheckpoint(c.path, data)
	if err != nil {
		return 0, nil, err
	}
	mismatch := func(format string, a ...any) error {
		return &CheckpointError{Path: c.path, Detail: fmt.Sprintf(format, a...), Err: ErrCheckpointMismatch}
	}
	if b.Iters != c.iters || b.Batch != c.batch || b.N != c.n || b.D != c.d || b.P != c.p {
		return 0, nil, mismatch("saved for Iters %d, batch %d, data [%d,%d]→[%d,%d]; this run has Iters %d, batch %d, data [%d,%d]→[%d,%d]",
			b.Iters, b.Batch, b.N, b.D, b.N, b.P, c.iters, c.batch, c.n, c.d, c.n, c.p)
	}
	if !sameConverge(b.Converge, c.conv) {
		return 0, nil, mismatch("saved with convergence criterion %s; this run has %s", describeConverge(b.Converge), describeConverge(c.conv))
	}
	if b.Step < 0 || b.Step > b.Iters || len(b.Losses) != b.Step || len(b.Times) != b.Step {
		return 0, nil, &CheckpointError{Path: c.path, Detail: fmt.Sprintf("step %d with %d losses and %d step times (Iters %d)", b.Step, len(b.Losses), len(b.Times), b.Iters), Err: ErrCheckpointCorrupt}
	}
	if len(b.Params) != len(c.params) {
		return 0, nil, mismatch("%d Params saved, the model has %d", len(b.Params), len(c.params))
	}
	// Names need not be unique (two kernels may share a default name), so Params are matched by position
	// in the graph's fixed order, and names and shapes are checked.
	for i, s := range b.Params {
		q := c.params[i]
		if q.Name() != s.Name {
			return 0, nil, mismatch("Param %d is %q, the checkpoint's is %q", i, q.Name(), s.Name)
		}
		if !slices.Equal(q.Shape(), s.Shape) || len(s.Raw) != q.Size() {
			return 0, nil, mismatch("Param %d (%q) has shape %v, the checkpoint's %v", i, s.Name, q.Shape(), s.Shape)
		}
	}
	_, optStateful := c.opt.(Stateful)
	if optStateful != b.OptimizerStateful {
		return 0, nil, mismatch("optimizer state saved: %v, this run's Optimizer has state: %v", b.OptimizerStateful, optStateful)
	}
	if len(b.HookStateful) != len(c.hooks) || len(b.Hooks) != len(c.hooks) {
		return 0, nil, mismatch("%d hooks saved, this run has %d", len(b.HookStateful), len(c.hooks))
	}
	for i, h := range c.hooks {
		if _, ok := h.(Stateful); ok != b.HookStateful[i] {
			return 0, nil, mismatch("hook %d: state saved: %v, this run's hook has state: %v", i, b.HookStateful[i], ok)
		}
	}
	if len(b.Sources) != len(c.cfg.Sources) {
		return 0, nil, mismatch("%d random sources saved, %d given", len(b.Sources), len(c.cfg.Sources))
	}
	// Every check passed: restore.
	for i, s := range b.Params {
		copy(c.params[i].Raw(), s.Raw)
	}
	if s, ok := c.opt.(Stateful); ok {
		if err := s.UnmarshalState(c.optPs, b.Optimizer); err != nil {
			return 0, nil, mismatch("optimizer state: %v", err)
		}
	}
	for i, h := range c.hooks {
		if s, ok := h.(Stateful); ok {
			if err := s.UnmarshalState(c.trained, b.Hooks[i]); err != nil {
				return 0, nil, mismatch("hook %d state: %v", i, err)
			}
		}
	}
	for i, s := range c.cfg.Sources {
		if err := s.UnmarshalBinary(b.Sources[i]); err != nil {
			return 0, nil, mismatch("random source %d: %v", i, err)
		}
	}
	if err := c.sampler.SetState(b.Sampler); err != nil {
		return 0, nil, mismatch("sampler: %v", err)
	}
	return b.Step, &Result{Steps: b.Step, Losses: b.Losses, Times: b.Times, Evals: b.Evals}, nil
}

// encodeCheckpoint frames the gob-encoded body (see the layout above).
func encodeCheckpoint(b *checkpointBody) ([]byte, error) {
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(b); err != nil {
		return nil, err
	}
	version := uint32(1)
	if b.Converge != nil {
		version = 2
	}
	out := make([]byte, 0, checkpointHeader+body.Len()+checkpointSum)
	out = append(out, checkpointMagic[:]...)
	out = binary.LittleEndian.AppendUint32(out, version)
	out = binary.LittleEndian.AppendUint64(out, uint64(body.Len()))
	out = append(out, body.Bytes()...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...), nil
}

// decodeCheckpoint checks the frame and checksum of data and decodes the body.
func decodeCheckpoint(path string, data []byte) (*checkpointBody, error) {
	fail := func(sentinel error, format string, a ...any) error {
		return &CheckpointError{Path: path, Detail: fmt.Sprintf(format, a...), Err: sentinel}
	}
	if len(data) < checkpointHeader {
		if bytes.HasPrefix(checkpointMagic[:], data[:min(len(data), len(checkpointMagic))]) {
			return nil, fail(ErrCheckpointTruncated, "%d bytes, shorter than the %d-byte header", len(data), checkpointHeader)
		}
		return nil, fail(ErrCheckpointCorrupt, "not a gpzoo checkpoint (bad magic)")
	}
	if !bytes.Equal(data[:8], checkpointMagic[:]) {
		return nil, fail(ErrCheckpointCorrupt, "not a gpzoo checkpoint (bad magic)")
	}
	version := binary.LittleEndian.Uint32(data[8:12])
	if version > CheckpointVersion {
		return nil, fail(ErrCheckpointVersion, "format version %d, this build reads up to %d", version, CheckpointVersion)
	}
	if version == 0 {
		return nil, fail(ErrCheckpointCorrupt, "format version 0")
	}
	n := binary.LittleEndian.Uint64(data[12:20])
	rest := uint64(len(data) - checkpointHeader)
	switch {
	case rest < checkpointSum || n > rest-checkpointSum:
		return nil, fail(ErrCheckpointTruncated, "%d bytes, the header declares %d", len(data), uint64(checkpointHeader)+n+checkpointSum)
	case n < rest-checkpointSum:
		return nil, fail(ErrCheckpointCorrupt, "%d trailing bytes", rest-checkpointSum-n)
	}
	end := checkpointHeader + int(n)
	if sum := sha256.Sum256(data[:end]); !bytes.Equal(sum[:], data[end:]) {
		return nil, fail(ErrCheckpointCorrupt, "SHA-256 checksum mismatch")
	}
	var b checkpointBody
	if err := gob.NewDecoder(bytes.NewReader(data[checkpointHeader:end])).Decode(&b); err != nil {
		return nil, fail(ErrCheckpointCorrupt, "decoding: %v", err)
	}
	return &b, nil
}

// sameConverge reports whether two runs' criteria (nil: none) are the same.
func sameConverge(a, b *ConvergeConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Window == b.Window && a.Patience == b.Patience && a.MinSteps == b.MinSteps &&
		math.Float64bits(a.Tol) == math.Float64bits(b.Tol)
}

func describeConverge(c *ConvergeConfig) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("{Window %d, Patience %d, Tol %g, MinSteps %d}", c.Window, c.Patience, c.Tol, c.MinSteps)
}

// EncodeState gob-encodes the state v of who (an optimizer or hook, for Stateful.MarshalState).
func EncodeState(who string, v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("train: %s: encoding the state: %w", who, err)
	}
	return buf.Bytes(), nil
}

// DecodeState decodes what EncodeState wrote into v (for Stateful.UnmarshalState).
func DecodeState(who string, data []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("train: %s: decoding the state: %w", who, err)
	}
	return nil
}
