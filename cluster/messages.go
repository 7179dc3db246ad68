package cluster

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"time"
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

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, fmt.Errorf("cluster: encoding %T: %w", v, err)
	}
	return b.Bytes(), nil
}

func decode(data []byte, v any) error {
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(v); err != nil {
		return fmt.Errorf("cluster: decoding %T: %w", v, err)
	}
	return nil
}
