package zoo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"github.com/gpzoo/gpzoo/train"
)

// The results folder of the tables: one JSON file per finished run, results/TABLE/ROW/split-K.json (a Result
// with its Table record), written atomically and never overwritten unless asked. A run whose file is there is
// not run again, so a table continues across interruptions and machines (commit the files; another clone picks
// up where this one stopped). A result whose protocol fingerprint differs from its row's current one is stale:
// it is kept, reported as stale, and rerun only when asked (TableOptions.RedoStale). Checkpoints of runs in
// progress live in results/.checkpoints/TABLE/ROW/split-K/ (not to be committed) and go when the run's result is
// written.

// DefaultResultsDir is the results folder a table runs into unless told otherwise.
const DefaultResultsDir = "results"

// checkpointsDir is the results folder's subfolder of checkpoints.
const checkpointsDir = ".checkpoints"

// TableCheckpointEvery is how often (in steps) a table run checkpoints its training; an interrupt (Stop)
// checkpoints at once, so this bounds only what a crash loses.
const TableCheckpointEvery = 200

// TableRun is a table run's record in its Result.
type TableRun struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	// Fingerprint and Protocol are the row's protocol when it ran (Table.RowProtocol).
	Fingerprint string `json:"fingerprint"`
	Protocol    string `json:"protocol"`
	// RunSeconds is the wall time of the run's last session from start to result (data, model, training,
	// scoring); TrainSecondsTotal the training wall time over every session (a resumed run's earlier ones
	// included: the larger of this session's and the steps' clock, which a checkpoint carries over); Resumed says
	// the run continued from a checkpoint.
	RunSeconds        float64 `json:"run_seconds"`
	TrainSecondsTotal float64 `json:"train_seconds_total"`
	Resumed           bool    `json:"resumed,omitempty"`
	// Runner names what ran it: "local", or a queue runner's name.
	Runner string `json:"runner"`
}

// CurrentFingerprint returns the run's protocol fingerprint under today's canonical form of its recorded
// protocol text (canonicalProtocol), or the recorded fingerprint when the result holds no text.
func (r *TableRun) CurrentFingerprint() string {
	if r.Protocol == "" {
		return r.Fingerprint
	}
	return protocolFingerprint(canonicalProtocol(r.Protocol))
}

// TaskState is the state of a table run in a results folder.
type TaskState int

const (
	TaskMissing TaskState = iota // no result yet
	TaskDone                     // a result of the row's current protocol
	TaskStale                    // a result of another protocol (the row changed since)
)

func (s TaskState) String() string {
	return [...]string{"missing", "done", "stale"}[s]
}

// ErrStaleCheckpoint is wrapped by the error of a run whose checkpoint folder holds a checkpoint of another
// protocol (the row changed since it was interrupted): nothing is deleted; remove the folder to start afresh.
var ErrStaleCheckpoint = errors.New("zoo: the checkpoint is of another protocol")

// ResultPath is the file of task's result below the results folder dir.
func ResultPath(dir string, k Task) string {
	return filepath.Join(dir, filepath.FromSlash(k.Key())+".json")
}

// checkpointPath is the folder of task's checkpoint below the results folder dir.
func checkpointPath(dir string, k Task) string {
	return filepath.Join(dir, checkpointsDir, filepath.FromSlash(k.Key()))
}

// LoadTaskResult reads task's result from the results folder dir: nil and TaskMissing when there is none, the
// Result and TaskDone or TaskStale otherwise. A file that is not a result of that very task (a malformed file,
// another table's, row's or split's result) is an error wrapping ErrBadResultFile that names it.
func (t *Table) LoadTaskResult(dir string, k Task) (*Result, TaskState, error) {
	path := ResultPath(dir, k)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, TaskMissing, nil
	}
	rs, err := LoadResults(path)
	if err != nil {
		return nil, TaskMissing, err
	}
	row, ok := t.Row(k.Row)
	if !ok {
		return nil, TaskMissing, fmt.Errorf("zoo: table %s has no row %q", t.Name, k.Row)
	}
	r := rs[0]
	if len(rs) != 1 || r.Table == nil || r.Table.Table != k.Table || r.Table.Row != k.Row || r.Split != k.Split || r.Entry != row.Entry {
		return nil, TaskMissing, fmt.Errorf("zoo: %s: %w: not the result of %s (%s split %d)", path, ErrBadResultFile, k.Key(), row.Entry, k.Split)
	}
	_, fp, err := t.RowProtocol(row)
	if err != nil {
		return nil, TaskMissing, err
	}
	if r.Table.CurrentFingerprint() != fp {
		return r, TaskStale, nil
	}
	return r, TaskDone, nil
}

// TableOptions configure RunTable and the queue's runs of a table.
type TableOptions struct {
	// Results is the results folder (default DefaultResultsDir).
	Results string
	// Rows selects rows by comma-separated glob patterns of their IDs ("" every row); Splits replaces the rows'
	// own splits when not nil.
	Rows   string
	Splits []int
	// DataDir is the benchmark data directory.
	DataDir string
	// RedoStale reruns stale results and replaces their files (otherwise they are kept and skipped).
	RedoStale bool
	// Stop, when closed, ends the table after the current run's current step (that run keeps its checkpoint and
	// a later run of the table resumes it).
	Stop <-chan struct{}
	// Logger and Progress receive each run's training progress (Options).
	Logger   *slog.Logger
	Progress io.Writer
	// Event, when set, hears about each run as the table proceeds.
	Event func(TableEvent)
	// Runner names what runs the table in the results ("" = "local").
	Runner string
}

// TableEvent tells what happens to one run of a table.
type TableEvent struct {
	Task Task
	What string
	// Result is the run's result (EventDone, EventStale, EventFinished, EventCollected); Err the failure
	// (EventFailed).
	Result *Result
	Err    error
}

// The events of TableOptions.Event.
const (
	EventDone      = "done before"                           // skipped: a result of the current protocol is there
	EventStale     = "stale result kept"                     // skipped: a result of an older protocol is there (RedoStale reruns it)
	EventStart     = "run"                                   // running it
	EventResume    = "resume"                                // running it on from its checkpoint
	EventFinished  = "finished"                              // its result is written
	EventQueued    = "queued"                                // on the work queue
	EventWaiting   = "waiting (queued or running elsewhere)" // already on the work queue
	EventCollected = "collected"                             // a runner's result is written
	EventFailed    = "failed"                                // a runner reported an error
)

func (o TableOptions) event(k Task, what string, r *Result, err error) {
	if o.Event != nil {
		o.Event(TableEvent{Task: k, What: what, Result: r, Err: err})
	}
}

func (o TableOptions) results() string {
	if o.Results == "" {
		return DefaultResultsDir
	}
	return o.Results
}

// PlannedTask is a run of a table and its state in the results folder.
type PlannedTask struct {
	Task
	State  TaskState
	Result *Result
}

// Plan returns the table's runs that o selects with their states in o's results folder. Files that are not
// results of their runs are errors (wrapping ErrBadResultFile, each naming its file): nothing runs until they
// are fixed or moved away.
func (t *Table) Plan(o TableOptions) ([]PlannedTask, error) {
	tasks, err := t.Tasks(o.Rows, o.Splits)
	if err != nil {
		return nil, err
	}
	var out []PlannedTask
	var errs []error
	for _, k := range tasks {
		r, st, err := t.LoadTaskResult(o.results(), k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, PlannedTask{Task: k, State: st, Result: r})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// TableSummary counts what RunTable did.
type TableSummary struct {
	Ran, Done, Stale int
}

// RunTable runs the table's selected runs that have no result in the results folder, one after another in the
// table's order, writing each result as it finishes; runs with a result of the current protocol are skipped,
// stale ones too unless o.RedoStale. When o.Stop closes it returns an error wrapping train.ErrInterrupted (the
// interrupted run's checkpoint stays, and the next RunTable resumes it).
func RunTable(t *Table, o TableOptions) (TableSummary, error) {
	var sum TableSummary
	plan, err := t.Plan(o)
	if err != nil {
		return sum, err
	}
	for _, p := range plan {
		switch {
		case p.State == TaskDone:
			sum.Done++
			o.event(p.Task, EventDone, p.Result, nil)
			continue
		case p.State == TaskStale && !o.RedoStale:
			sum.Stale++
			o.event(p.Task, EventStale, p.Result, nil)
			continue
		}
		select {
		case <-o.Stop:
			return sum, fmt.Errorf("zoo: table %s: %w before %s", t.Name, train.ErrInterrupted, p.Key())
		default:
		}
		r, err := t.RunTask(p.Task, o)
		if err != nil {
			return sum, fmt.Errorf("zoo: table %s: %s: %w", t.Name, p.Key(), err)
		}
		if err := writeTaskResult(o.results(), p.Task, r, p.State == TaskStale); err != nil {
			return sum, err
		}
		removeCheckpoint(o.results(), p.Task)
		sum.Ran++
		o.event(p.Task, EventFinished, r, nil)
	}
	return sum, nil
}

// RunTask runs one of the table's runs and returns its result with its Table record; nothing is written but
// the run's checkpoints in o's results folder (an interrupted run resumes from there). The row's protocol must
// not have changed since a checkpoint there was written (ErrStaleCheckpoint).
func (t *Table) RunTask(k Task, o TableOptions) (*Result, error) {
	row, ok := t.Row(k.Row)
	if !ok || k.Table != t.Name {
		return nil, fmt.Errorf("zoo: table %s has no row %q", t.Name, k.Row)
	}
	e, err := Lookup(row.Entry)
	if err != nil {
		return nil, err
	}
	text, fp, err := t.RowProtocol(row)
	if err != nil {
		return nil, err
	}
	opt := row.options(k.Split)
	opt.DataDir, opt.Stop, opt.Logger, opt.Progress = o.DataDir, o.Stop, o.Logger, o.Progress
	if e.Config != nil && trainsWithAdam(e.configFor(opt)) { // L-BFGS takes no checkpoints
		dir := checkpointPath(o.results(), k)
		fpFile := filepath.Join(dir, "protocol")
		switch b, err := os.ReadFile(fpFile); {
		case err == nil && checkpointFingerprint(string(b)) != fp:
			return nil, fmt.Errorf("%w: %s holds a checkpoint of protocol %s, the row's is now %s (remove the folder to start afresh)",
				ErrStaleCheckpoint, dir, checkpointFingerprint(string(b)), fp)
		case err == nil:
			_, cerr := os.Stat(filepath.Join(dir, train.CheckpointFile))
			opt.Resume = cerr == nil
		case errors.Is(err, fs.ErrNotExist):
			if err := newCheckpointDir(dir, fpFile, text); err != nil {
				return nil, fmt.Errorf("zoo: the checkpoint folder: %w", err)
			}
		default:
			return nil, fmt.Errorf("zoo: the checkpoint folder: %w", err)
		}
		opt.CheckpointDir, opt.CheckpointEvery = dir, TableCheckpointEvery
	}
	what := EventStart
	if opt.Resume {
		what = EventResume
	}
	o.event(k, what, nil, nil)
	start := time.Now()
	r, err := e.Run(opt)
	if err != nil {
		return nil, err
	}
	total := r.TrainSeconds // this session's, the final checkpoint's write included
	if n := len(r.times); n > 0 {
		total = max(total, r.times[n-1]) // every session's steps
	}
	r.Table = &TableRun{Table: t.Name, Row: k.Row, Fingerprint: fp, Protocol: text, RunSeconds: time.Since(start).Seconds(),
		TrainSecondsTotal: total, Resumed: opt.Resume, Runner: o.Runner}
	if r.Table.Runner == "" {
		r.Table.Runner = "local"
	}
	if row.Options.LL == LLMomentMatched && r.TestLLMomentMatched == nil {
		return nil, fmt.Errorf("zoo: %s: the row reports the moment-matched LL, which the run did not compute", k.Key())
	}
	return r, nil
}

// encodeResult is the bytes of a result file.
func encodeResult(r *Result) ([]byte, error) {
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeTaskResult writes task's result file atomically; an existing file is replaced only when replace is set
// (a stale result the caller was asked to redo).
func writeTaskResult(dir string, k Task, r *Result, replace bool) error {
	b, err := encodeResult(r)
	if err != nil {
		return err
	}
	return writeResultBytes(dir, k, b, replace)
}

// errResultExists is returned by writeResultBytes for a result file that is there and may not be replaced.
var errResultExists = errors.New("zoo: a result file is there (never overwritten)")

func writeResultBytes(dir string, k Task, b []byte, replace bool) error {
	path := ResultPath(dir, k)
	if _, err := os.Lstat(path); err == nil && !replace {
		return fmt.Errorf("%w: %s", errResultExists, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("zoo: the results folder: %w", err)
	}
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("zoo: writing %s: %w", path, err)
	}
	return nil
}

// newCheckpointDir makes a run's checkpoint folder dir and writes its protocol file. Another runner finishing a
// run of the same table removes the folders its checkpoint leaves empty (removeCheckpoint), which can take away a
// parent between MkdirAll's steps, or the new folder before the protocol file is in it: either shows as a path
// that does not exist, and the two steps are tried again.
func newCheckpointDir(dir, fpFile, text string) error {
	var err error
	for range 10 {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = atomicfile.WriteFile(fpFile, []byte(text), 0o644)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// removeCheckpoint removes a finished run's checkpoint (the files RunTask and training wrote) and the folders
// left empty up to the checkpoints' folder; anything else there stays.
func removeCheckpoint(dir string, k Task) {
	ck := checkpointPath(dir, k)
	for _, f := range []string{train.CheckpointFile, "protocol"} {
		_ = os.Remove(filepath.Join(ck, f))
	}
	root := filepath.Join(dir, checkpointsDir)
	for d := ck; strings.HasPrefix(d, root) && d != root; d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break // not empty
		}
	}
	_ = os.Remove(root)
}

// trainsWithAdam reports whether c trains with Adam (gpr and sgpr default to L-BFGS, the others take Adam).
func trainsWithAdam(c CustomConfig) bool {
	if c.Optimizer != "" {
		return c.Optimizer == "adam"
	}
	return c.Family != "gpr" && c.Family != "sgpr"
}

// checkpointFingerprint returns the fingerprint of a checkpoint folder's protocol file: its protocol text's
// (canonicalProtocol), or the fingerprint itself in a file of one line (checkpoints written before the text).
func checkpointFingerprint(file string) string {
	if s := strings.TrimSpace(file); !strings.Contains(s, "\n") {
		return s
	}
	return protocolFingerprint(canonicalProtocol(file))
}
