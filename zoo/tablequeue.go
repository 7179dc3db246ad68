package zoo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gpzoo/gpzoo/cluster"
)

// Tables spread over several runners (machines) through the NATS the cluster uses: a submitter queues a
// table's runs that have no result in its results folder on a cluster.Queue (JetStream distributes them),
// runners on any machine take them one at a time (WorkTables: the runner's own build, data folder and
// checkpoints) and store each result on the queue, and the submitter writes the results into its results folder
// as they arrive (SubmitTable). The result files are byte for byte what the runners produced.

// TableQueueName is the name of the work queue of table runs (cluster.QueueConfig.Name).
const TableQueueName = "gpzoo-tables"

// queuedTask is a task's message: the run and the fingerprint of the row's protocol the submitter holds.
type queuedTask struct {
	Task
	Fingerprint string `json:"fingerprint"`
}

// ErrRunsFailed is wrapped by SubmitTable's error when runners reported failed runs.
var ErrRunsFailed = errors.New("zoo: table runs failed")

// SubmitTable queues the table's selected runs that have no result of the current protocol in o's results
// folder (stale ones only with o.RedoStale) on q, then writes the results runners store into the results
// folder as they arrive, until every queued run has its result or ctx ends: QueueTable, then Collect.
func SubmitTable(ctx context.Context, t *Table, q *cluster.Queue, o TableOptions) (TableSummary, error) {
	s, err := QueueTable(ctx, t, q, o)
	if err != nil {
		return TableSummary{}, err
	}
	return s.Collect(ctx)
}

// Submission is a table's runs queued by QueueTable, whose results Collect writes.
type Submission struct {
	t       *Table
	q       *cluster.Queue
	o       TableOptions
	pending map[string]PlannedTask
	keys    []string
	sum     TableSummary
}

// Waiting returns the number of runs whose results the submission waits for.
func (s *Submission) Waiting() int { return len(s.keys) }

// QueueTable queues the table's selected runs that have no result of the current protocol in o's results
// folder (stale ones only with o.RedoStale) on q. A run queued or running already (by an earlier submitter)
// is waited for, not queued again; a result stored on the queue earlier is collected; a failure or a result
// of another protocol stored there is removed and the run queued again.
func QueueTable(ctx context.Context, t *Table, q *cluster.Queue, o TableOptions) (*Submission, error) {
	s := &Submission{t: t, q: q, o: o, pending: map[string]PlannedTask{}}
	plan, err := t.Plan(o)
	if err != nil {
		return nil, err
	}
	for _, p := range plan {
		switch {
		case p.State == TaskDone:
			s.sum.Done++
			o.event(p.Task, EventDone, p.Result, nil)
			continue
		case p.State == TaskStale && !o.RedoStale:
			s.sum.Stale++
			o.event(p.Task, EventStale, p.Result, nil)
			continue
		}
		row, _ := t.Row(p.Row)
		_, fp, err := t.RowProtocol(row)
		if err != nil {
			return nil, err
		}
		key := p.Key()
		if old, err := q.Result(ctx, key); err != nil {
			return nil, err
		} else if old != nil && (old.Err != "" || resultFingerprint(old.Payload) != fp) {
			if err := q.DeleteResult(ctx, key); err != nil { // a failure or another protocol's result: run it again
				return nil, err
			}
		}
		msg, err := json.Marshal(queuedTask{Task: p.Task, Fingerprint: fp})
		if err != nil {
			return nil, err
		}
		queued, err := q.Submit(ctx, key, msg)
		if err != nil {
			return nil, err
		}
		what := EventWaiting
		if queued {
			what = EventQueued
		}
		o.event(p.Task, what, nil, nil)
		s.pending[key] = p
		s.keys = append(s.keys, key)
	}
	return s, nil
}

// Collect writes the results runners store into the results folder as they arrive, until every run of the
// submission has its result or ctx ends. A failed run is reported (EventFailed), its result removed from the
// queue (the next submission queues it again) and Collect returns an error wrapping ErrRunsFailed; a result
// file written meanwhile by another submitter is kept. Runners of another build whose protocol differs refuse
// the runs (they fail with a message saying so).
func (s *Submission) Collect(ctx context.Context) (TableSummary, error) {
	t, q, o := s.t, s.q, s.o
	sum := s.sum
	var failed []string
	err := q.Collect(ctx, s.keys, func(qr cluster.QueueResult) error {
		p := s.pending[qr.Key]
		if qr.Err != "" {
			failed = append(failed, fmt.Sprintf("%s (runner %s): %s", qr.Key, qr.Runner, qr.Err))
			o.event(p.Task, EventFailed, nil, errors.New(qr.Err))
			return q.DeleteResult(ctx, qr.Key)
		}
		r, err := checkQueuedResult(t, p.Task, qr.Payload)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (runner %s): %v", qr.Key, qr.Runner, err))
			o.event(p.Task, EventFailed, nil, err)
			return q.DeleteResult(ctx, qr.Key)
		}
		if err := writeResultBytes(o.results(), p.Task, qr.Payload, p.State == TaskStale); errors.Is(err, errResultExists) {
			o.event(p.Task, EventDone, r, nil) // written meanwhile (another submitter): kept
			return nil
		} else if err != nil {
			return err
		}
		sum.Ran++
		o.event(p.Task, EventCollected, r, nil)
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("zoo: table %s: collecting results: %w", t.Name, err)
	}
	if len(failed) > 0 {
		return sum, fmt.Errorf("%w: %s", ErrRunsFailed, strings.Join(failed, "; "))
	}
	return sum, nil
}

// resultFingerprint returns the protocol fingerprint of a result file's bytes ("" when it has none).
func resultFingerprint(b []byte) string {
	var r struct {
		Table *TableRun `json:"table"`
	}
	if json.Unmarshal(b, &r) != nil || r.Table == nil {
		return ""
	}
	return r.Table.CurrentFingerprint()
}

// checkQueuedResult decodes a runner's result of k and checks it is that run's, of the row's current protocol.
func checkQueuedResult(t *Table, k Task, b []byte) (*Result, error) {
	rs, err := ReadResults(strings.NewReader(string(b)))
	if err != nil {
		return nil, err
	}
	row, _ := t.Row(k.Row)
	r := rs[0]
	if len(rs) != 1 || r.Table == nil || r.Table.Table != k.Table || r.Table.Row != k.Row || r.Split != k.Split || r.Entry != row.Entry {
		return nil, fmt.Errorf("%w: the runner's result is not that of %s", ErrBadResultFile, k.Key())
	}
	if _, fp, err := t.RowProtocol(row); err != nil || r.Table.CurrentFingerprint() != fp {
		return nil, fmt.Errorf("%w: the runner's result of %s is of protocol %s, the row's is %s", ErrBadResultFile, k.Key(), r.Table.Fingerprint, fp)
	}
	return r, nil
}

// WorkTables runs table runs taken from q, one at a time, until ctx ends (the run in progress then stops at
// its next step, keeps its checkpoint in o's results folder and goes back to the queue) or, with untilEmpty,
// until the queue holds no run. A task's table and row are this binary's; its protocol must be the
// submitter's (same fingerprint), else the run fails with a message naming both. o gives the data folder and
// the results folder of the checkpoints (nothing else is written there); o.Runner names the runner (default:
// host name and process id).
func WorkTables(ctx context.Context, q *cluster.Queue, o TableOptions, untilEmpty bool) error {
	if o.Runner == "" {
		host, _ := os.Hostname()
		o.Runner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	return q.Work(ctx, cluster.WorkConfig{Runner: o.Runner, UntilEmpty: untilEmpty}, func(ctx context.Context, key string, payload []byte) ([]byte, error) {
		var qt queuedTask
		if err := json.Unmarshal(payload, &qt); err != nil || qt.Key() != key {
			return nil, fmt.Errorf("zoo: a malformed task %q", key)
		}
		t, err := LookupTable(qt.Table)
		if err != nil {
			return nil, err
		}
		row, ok := t.Row(qt.Row)
		if !ok {
			return nil, fmt.Errorf("zoo: table %s has no row %q in this runner's build", t.Name, qt.Row)
		}
		if _, fp, err := t.RowProtocol(row); err != nil || fp != qt.Fingerprint {
			return nil, fmt.Errorf("zoo: %s: this runner's build has protocol %s for the row, the submitter's is %s: run a runner built from the submitter's commit", key, fp, qt.Fingerprint)
		}
		oo := o
		oo.Stop = ctx.Done()
		r, err := t.RunTask(qt.Task, oo)
		if err != nil {
			return nil, err
		}
		b, err := encodeResult(r)
		if err != nil {
			return nil, err
		}
		removeCheckpoint(o.results(), qt.Task)
		return b, nil
	})
}
