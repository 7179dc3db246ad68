package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A work queue over NATS JetStream for tasks that take minutes to hours each (a benchmark table's runs), taken
// by runners on any number of machines. JetStream distributes the tasks; gpzoo keeps no scheduler of its own:
//
//   - tasks are messages of a stream with the work-queue retention policy (jetstream.WorkQueuePolicy), one
//     subject per task key (gpzoo.queue.NAME.task.KEY), published only when no message of that key is stored
//     (an expected last sequence per subject of 0, checked by the server), so a task is queued at most once and
//     leaves the stream when a runner acknowledges it;
//   - runners pull one task at a time through one durable consumer; while a runner works it tells the server so
//     (InProgress) every AckWait/4, so an hours-long task stays with it, and a runner that dies stops telling:
//     after AckWait the server hands the task to another runner;
//   - a runner stores the outcome in a key-value bucket under the task's key before it acknowledges the task, so
//     no result is lost between a runner and a collector that was not listening: collectors read the bucket.
//
// Every connection authenticates as Security says (Connect): the queue uses the cluster's NATS and its users.

// DefaultAckWait is how long a runner may be silent before its task goes to another runner (QueueConfig.AckWait).
const DefaultAckWait = 2 * time.Minute

// QueueConfig configures OpenQueue.
type QueueConfig struct {
	// Name names the queue (CheckRunName's rule): its stream GPZOO_QUEUE_NAME, its results bucket
	// GPZOO_QUEUE_NAME_RESULTS and its subjects gpzoo.queue.NAME.>.
	Name string
	// AckWait is how long a runner may stay silent before its task is handed to another runner (default
	// DefaultAckWait); runners report progress every AckWait/4.
	AckWait time.Duration
}

// Queue is a work queue on a NATS server with JetStream (OpenQueue).
type Queue struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	kv      jetstream.KeyValue
	cons    jetstream.Consumer
	prefix  string
	ackWait time.Duration
}

// QueueResult is the outcome of one task: the runner's payload, or the error that ended the task (Err).
type QueueResult struct {
	Key     string `json:"key"`
	Runner  string `json:"runner,omitempty"`
	Err     string `json:"error,omitempty"`
	Payload []byte `json:"payload,omitempty"`
}

// ErrQueue is wrapped by the queue's errors about what the server holds: no JetStream, a malformed stored
// result or task.
var ErrQueue = errors.New("cluster: work queue")

// OpenQueue connects to the NATS server at url with sec (Connect) and opens the queue c.Name there, creating its
// stream, consumer and results bucket when missing. The server must have JetStream enabled (an embedded server:
// EmbeddedConfig.JetStreamDir).
func OpenQueue(ctx context.Context, url string, sec Security, c QueueConfig) (*Queue, error) {
	if err := CheckRunName(c.Name); err != nil {
		return nil, err
	}
	if c.AckWait < 0 {
		return nil, fmt.Errorf("%w %s: AckWait %v is negative", ErrQueue, c.Name, c.AckWait)
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	nc, err := Connect(url, "gpzoo-queue-"+c.Name, sec)
	if err != nil {
		return nil, err
	}
	q, err := openQueue(ctx, nc, c)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return q, nil
}

func openQueue(ctx context.Context, nc *nats.Conn, c QueueConfig) (*Queue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrQueue, c.Name, err)
	}
	q := &Queue{nc: nc, js: js, prefix: "gpzoo.queue." + c.Name, ackWait: c.AckWait}
	name := "GPZOO_QUEUE_" + c.Name
	q.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{q.prefix + ".task.*"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Description: "gpzoo work queue " + c.Name + ": one message per queued or running task"})
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return nil, fmt.Errorf("%w %s: the NATS server has no JetStream (start nats-server with -js): %v", ErrQueue, c.Name, err)
		}
		return nil, fmt.Errorf("%w %s: the task stream: %v", ErrQueue, c.Name, err)
	}
	q.cons, err = q.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "runners", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: c.AckWait, MaxAckPending: -1, FilterSubject: q.prefix + ".task.*"})
	if err != nil {
		return nil, fmt.Errorf("%w %s: the runners' consumer: %v", ErrQueue, c.Name, err)
	}
	q.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name + "_RESULTS", History: 1, Storage: jetstream.FileStorage,
		Description: "gpzoo work queue " + c.Name + ": the tasks' results"})
	if err != nil {
		return nil, fmt.Errorf("%w %s: the results bucket: %v", ErrQueue, c.Name, err)
	}
	return q, nil
}

// Close closes the queue's connection (the queue and its results stay on the server).
func (q *Queue) Close() { q.nc.Close() }

// token encodes a task key as one subject token and key-value key (URL-safe base64: letters, digits, '-', '_').
func token(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

func (q *Queue) subject(key string) string { return q.prefix + ".task." + token(key) }

// Submit queues task under key unless a task of that key is queued or running, or a result of it is stored;
// queued reports whether it was queued. Keys are any non-empty strings.
func (q *Queue) Submit(ctx context.Context, key string, task []byte) (queued bool, err error) {
	if key == "" {
		return false, fmt.Errorf("%w: empty task key", ErrQueue)
	}
	r, err := q.Result(ctx, key)
	if err != nil || r != nil {
		return false, err
	}
	_, err = q.js.Publish(ctx, q.subject(key), task, jetstream.WithExpectLastSequencePerSubject(0))
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return false, nil // a message of that key is stored: queued or running
	}
	if err != nil {
		return false, fmt.Errorf("%w: queueing %s: %v", ErrQueue, key, err)
	}
	return true, nil
}

// Pending returns the number of tasks queued or running.
func (q *Queue) Pending(ctx context.Context) (uint64, error) {
	info, err := q.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrQueue, err)
	}
	return info.State.Msgs, nil
}

// Result returns the stored result of key, or nil when there is none.
func (q *Queue) Result(ctx context.Context, key string) (*QueueResult, error) {
	e, err := q.kv.Get(ctx, token(key))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the result of %s: %v", ErrQueue, key, err)
	}
	return decodeResult(e.Value(), key)
}

func decodeResult(b []byte, key string) (*QueueResult, error) {
	var r QueueResult
	if err := json.Unmarshal(b, &r); err != nil || r.Key != key {
		return nil, fmt.Errorf("%w: the stored result of %s is malformed", ErrQueue, key)
	}
	return &r, nil
}

// DeleteResult removes the stored result of key (so that the task can be queued again).
func (q *Queue) DeleteResult(ctx context.Context, key string) error {
	if err := q.kv.Delete(ctx, token(key)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("%w: deleting the result of %s: %v", ErrQueue, key, err)
	}
	return nil
}

// Collect calls fn once with the result of each of keys, those stored already first and the others as runners
// store them, until every key has had its result or ctx ends (then ctx's error). An error of fn ends Collect.
func (q *Queue) Collect(ctx context.Context, keys []string, fn func(QueueResult) error) error {
	want := make(map[string]string, len(keys))
	for _, k := range keys {
		want[token(k)] = k
	}
	if len(want) == 0 {
		return nil
	}
	w, err := q.kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("%w: watching the results: %v", ErrQueue, err)
	}
	defer w.Stop()
	for len(want) > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("%w: the results' watch ended", ErrQueue)
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue // the end of the stored values, or a deletion
			}
			key, ok := want[e.Key()]
			if !ok {
				continue
			}
			r, err := decodeResult(e.Value(), key)
			if err != nil {
				return err
			}
			if err := fn(*r); err != nil {
				return err
			}
			delete(want, e.Key())
		}
	}
	return nil
}

// WorkConfig configures Work.
type WorkConfig struct {
	// Runner names this runner in its results (default: host name and process id).
	Runner string
	// UntilEmpty ends Work once the queue holds no task, queued or running (another runner's running task keeps
	// it waiting, to take the task over should that runner die); otherwise Work waits for tasks until ctx ends.
	UntilEmpty bool
	// Poll bounds one wait for a task (default 2 s).
	Poll time.Duration
}

// Work takes tasks one at a time and runs each with run (its key and payload), telling the server it is in
// progress every AckWait/4 while run works; it stores what run returns (or run's error) as the task's result,
// then acknowledges the task (a failed task is not handed out again: its error is its result). When ctx ends
// while run works, run should return (it gets ctx); the task goes back to the queue unanswered (Nak) for
// another runner, and Work returns nil. A task whose result is stored already (its runner died between storing
// and acknowledging) is acknowledged without running.
func (q *Queue) Work(ctx context.Context, c WorkConfig, run func(ctx context.Context, key string, task []byte) ([]byte, error)) error {
	if c.Runner == "" {
		host, _ := os.Hostname()
		c.Runner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if c.Poll <= 0 {
		c.Poll = 2 * time.Second
	}
	for ctx.Err() == nil {
		if c.UntilEmpty {
			n, err := q.Pending(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
		}
		msg, err := q.cons.Next(jetstream.FetchMaxWait(c.Poll))
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%w: taking a task: %v", ErrQueue, err)
		}
		if err := q.handle(ctx, c, msg, run); err != nil {
			return err
		}
	}
	return nil
}

// handle runs one task (Work).
func (q *Queue) handle(ctx context.Context, c WorkConfig, msg jetstream.Msg, run func(ctx context.Context, key string, task []byte) ([]byte, error)) error {
	tok := msg.Subject()[strings.LastIndexByte(msg.Subject(), '.')+1:]
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) == 0 {
		_ = msg.Term() // not a task of ours
		return nil
	}
	key := string(raw)
	if r, err := q.Result(ctx, key); err == nil && r != nil {
		return msg.Ack()
	}
	done := make(chan struct{})
	go func() { // hold the task while run works
		t := time.NewTicker(q.ackWait / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	out, runErr := run(ctx, key, msg.Data())
	close(done)
	if runErr != nil && ctx.Err() != nil {
		_ = msg.Nak() // interrupted: the task goes back to the queue
		return nil
	}
	res := QueueResult{Key: key, Runner: c.Runner, Payload: out}
	if runErr != nil {
		res = QueueResult{Key: key, Runner: c.Runner, Err: runErr.Error()}
	}
	b, err := json.Marshal(res)
	if err != nil {
		_ = msg.Nak()
		return fmt.Errorf("%w: encoding the result of %s: %v", ErrQueue, key, err)
	}
	// The result is stored before the task is acknowledged: with a context of its own, so that an interrupt
	// arriving now does not lose a finished run.
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := q.kv.Put(sctx, token(key), b); err != nil {
		_ = msg.Nak()
		return fmt.Errorf("%w: storing the result of %s: %v", ErrQueue, key, err)
	}
	if runErr != nil {
		return msg.Term()
	}
	return msg.DoubleAck(sctx)
}
