package cluster

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"
)

// subjects are the NATS subjects of one run.
type subjects struct{ join, params, grad, hb, ctl string }

// SubjectPrefix is the prefix of every subject of run: all of a run's messages travel on RunSubjects(run)+".>"
// (NATS permissions confining a client to one run name that wildcard).
const SubjectPrefix = "gpzoo.cluster."

// RunSubjects returns the subject every subject of run starts with (without the trailing dot).
func RunSubjects(run string) string { return SubjectPrefix + run }

// CheckRunName refuses a run name that is not one NATS subject token of letters, digits, '-' and '_' (at most
// 64 bytes): a dot, a wildcard or white space would let one run's subjects reach another's.
func CheckRunName(run string) error {
	if run == "" || len(run) > 64 {
		return fmt.Errorf("cluster: run name %q: want 1 to 64 letters, digits, '-' or '_'", run)
	}
	for _, c := range run {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("cluster: run name %q: %q is not allowed (want letters, digits, '-' or '_')", run, c)
		}
	}
	return nil
}

func subjectsOf(run string) subjects {
	p := RunSubjects(run)
	return subjects{join: p + ".join", params: p + ".params", grad: p + ".grad", hb: p + ".hb", ctl: p + ".ctl."}
}

// Job is what a worker needs to compute gradients: the model's structure, the data it loads its shard of (as
// the model is trained on it: standardised, for example), the batch size and the seeds. The server sends it in its join reply.
type Job struct {
	// Run names the training run (the subjects' prefix).
	Run string
	// Model is the JSON gp.Spec of the whitened SVGP the advgp.Model wraps; Names its Params' names in order.
	Model json.RawMessage
	Names []string
	// Data names the training data.
	Data DataRef
	// NumData is n, the size of the whole training set; Workers is k.
	NumData, Workers int
	// Batch is the minibatch size per worker and step (0: the whole shard).
	Batch int
	// Seed seeds the workers' minibatch draws (each worker mixes in its shard index).
	Seed uint64
	// NoiseSeed is the seed of the model's Monte-Carlo training noise (a deep GP's row-keyed ε, noiseSeeded),
	// which its Spec does not carry: workers set it so they draw what a single process would.
	NoiseSeed uint64
	// Tau is the delay bound; HeartbeatEvery how often workers send heartbeats.
	Tau            int
	HeartbeatEvery time.Duration
}

// noiseSeeded is a model whose training noise is keyed by a seed outside its Spec (a deep GP).
type noiseSeeded interface {
	NoiseSeed() uint64
	SetNoiseSeed(seed uint64)
}

// joinRequest asks for the job (Register false: nothing changes on the server, so a worker can load its data
// and build its program first) or for a slot and the current parameters (Register true).
type joinRequest struct {
	ID        string
	Shard, Of int
	Register  bool
}

type joinReply struct {
	Err    string
	Job    Job
	Params paramsMsg
}

type paramsMsg struct {
	Version int
	Raw     []float64
	Done    bool
}

type gradMsg struct {
	ID      string
	Shard   int
	Version int
	// Loss is the batch estimate of the shard's data term G_k at Version; Points the batch size; ShardN the
	// shard's size.
	Loss           float64
	Points, ShardN int
	Grad           []float64
}

type heartbeat struct {
	ID    string
	Shard int
	// Waiting: the worker pushed its gradient at version Pushed and waits for a newer version (what lets the
	// server see a gradient or a version lost in transit). Bye: the worker saw the server's "done" and leaves.
	// Waited is how long it has waited so far, by its own clock.
	Waiting bool
	Pushed  int
	Waited  time.Duration
	Bye     bool
}

type control struct {
	Rejoin bool
}

// encode returns v's bytes on the wire: its MarshalBinary (the parameters and gradients: raw float64s), else gob.
func encode(v any) ([]byte, error) {
	if m, ok := v.(encoding.BinaryMarshaler); ok {
		return m.MarshalBinary()
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, fmt.Errorf("cluster: encoding %T: %w", v, err)
	}
	return b.Bytes(), nil
}

// decode is encode's inverse into v (a pointer).
func decode(data []byte, v any) error {
	if u, ok := v.(encoding.BinaryUnmarshaler); ok {
		if err := u.UnmarshalBinary(data); err != nil {
			return fmt.Errorf("cluster: decoding %T: %w", v, err)
		}
		return nil
	}
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("cluster: decoding %T: %w", v, err)
	}
	return nil
}

// The parameters and the gradients are most of the bytes on the wire (a deep GP's: megabytes per message):
// they travel as raw little-endian float64s behind a fixed header (MarshalBinary: encode sends it as is, and gob
// uses it inside a join reply), not as gob's per-value encoding.

// putFloats appends v to b as little-endian float64s.
func putFloats(b []byte, v []float64) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// wireReader reads a message's fields in order; the first short read sets err.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) u64() uint64 {
	if r.err != nil || len(r.b) < 8 {
		r.err = errShortMessage
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *wireReader) int() int { return int(int64(r.u64())) }

func (r *wireReader) floats() []float64 {
	n := r.u64()
	if r.err != nil || n > uint64(len(r.b)/8) {
		r.err = errShortMessage
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n:]
	return v
}

func (r *wireReader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("cluster: %d bytes after a message's end", len(r.b))
	}
	return r.err
}

var errShortMessage = errors.New("cluster: message shorter than its fields")

// MarshalBinary encodes the version, the done flag and the raw values.
func (p paramsMsg) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 25+8*len(p.Raw))
	b = binary.LittleEndian.AppendUint64(b, uint64(int64(p.Version)))
	done := byte(0)
	if p.Done {
		done = 1
	}
	b = append(b, done)
	return putFloats(b, p.Raw), nil
}

// UnmarshalBinary decodes MarshalBinary's encoding; a short, long or malformed message is an error.
func (p *paramsMsg) UnmarshalBinary(data []byte) error {
	r := wireReader{b: data}
	p.Version = r.int()
	if r.err == nil && (len(r.b) < 1 || r.b[0] > 1) {
		return errShortMessage
	}
	if r.err == nil {
		p.Done, r.b = r.b[0] == 1, r.b[1:]
	}
	p.Raw = r.floats()
	return r.end()
}

// MarshalBinary encodes the worker's identity, the version, loss and counts, and the gradient.
func (g gradMsg) MarshalBinary() ([]byte, error) {
	if len(g.ID) > 1<<16-1 {
		return nil, fmt.Errorf("cluster: worker id of %d bytes", len(g.ID))
	}
	b := make([]byte, 0, 2+len(g.ID)+48+8*len(g.Grad))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(g.ID)))
	b = append(b, g.ID...)
	for _, v := range []int{g.Shard, g.Version} {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(g.Loss))
	for _, v := range []int{g.Points, g.ShardN} {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
	}
	return putFloats(b, g.Grad), nil
}

// UnmarshalBinary decodes MarshalBinary's encoding; a short, long or malformed message is an error.
func (g *gradMsg) UnmarshalBinary(data []byte) error {
	if len(data) < 2 || len(data) < 2+int(binary.LittleEndian.Uint16(data)) {
		return errShortMessage
	}
	n := int(binary.LittleEndian.Uint16(data))
	g.ID = string(data[2 : 2+n])
	r := wireReader{b: data[2+n:]}
	g.Shard, g.Version = r.int(), r.int()
	g.Loss = math.Float64frombits(r.u64())
	g.Points, g.ShardN = r.int(), r.int()
	g.Grad = r.floats()
	return r.end()
}

// publish publishes data on subj. A write that fails while the connection reconnects (a cut connection, a large
// message flushed at once) loses the message, as a cut would, and the heartbeats recover it: a products run's
// show the task unanswered and the server sends it again; a row-sum worker's show it waiting for a gradient or
// version that never came and the server tells it to join again. Only a closed connection is an error.
func publish(nc *nats.Conn, subj string, data []byte) error {
	if err := nc.Publish(subj, data); err != nil && nc.IsClosed() {
		return err
	}
	return nil
}

// every calls f every d until stop is closed.
func every(d time.Duration, stop <-chan struct{}, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f()
		}
	}
}
