package zoo

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/gp/modelfile"
)

// DefaultEntry is the entry `gpzoo run` runs without an argument: it needs only the data embedded in the binary
// (Boston housing), and bayesian_benchmarks published its numbers under the same protocol (ANCHORS §1.3).
const DefaultEntry = "boston-bb/svgp"

// DefaultSplits are the splits `gpzoo run` runs DefaultEntry on when given neither an entry nor a split (the
// showcase: mean ± std over bayesian_benchmarks' 10 random 90/10 splits, 15–30 s per split on 2 cores).
const DefaultSplits = "0-9"

// ErrUnknownEntry is returned by Lookup for a name no entry has.
var ErrUnknownEntry = errors.New("zoo: unknown entry")

// Options configure one run. Zero values mean defaults.
type Options struct {
	// DataDir is the benchmark data directory (the layout of shared/data); "" means embedded data where the
	// entry has it.
	DataDir string
	// Split selects the train/test split (fold) of the data set's protocol.
	Split int
	// Seed seeds every random choice of the run.
	Seed uint64
	// Iters overrides the entry's default number of training iterations when positive.
	Iters int
	// Optimizer overrides the entry's optimiser: "lbfgs" or "adam" ("" = the entry's default).
	Optimizer string
	// Inducing overrides the number of inducing points of sparse entries when positive.
	Inducing int
	// BatchSize overrides the minibatch size of minibatch entries when positive.
	BatchSize int
	// NatGrad trains q(u) of SVGP entries by natural-gradient steps (Salimbeni et al. 2018) alternating with
	// Adam on the other parameters: γ = 0.1 for a Gaussian likelihood, ramped log-linearly from 1e-4 to 0.1
	// over the first 10% of the steps for non-conjugate ones.
	NatGrad bool
	// TestSamples overrides the number of samples a deep-GP entry propagates per test point when positive.
	TestSamples int
	// CurvesOut is the CSV file entries with WritesCurves write their training curves to ("" = the entry's
	// default; ringnorm/odvgp-illustration: IllustrationCurvesFile in the working directory). Run refuses it
	// for other entries.
	CurvesOut string
	// SaveModel is the model file (gp/modelfile) the trained model is written to ("" = none). The
	// illustration entry trains no single model and refuses it.
	SaveModel string
	// CheckpointDir, when set, checkpoints the training of Adam-trained entries (train.CheckpointConfig):
	// after every CheckpointEvery steps (0: only at the end and on Stop); Resume continues from the checkpoint
	// there and ends with exactly the parameters of an uninterrupted run. L-BFGS training refuses it.
	CheckpointDir   string
	CheckpointEvery int
	Resume          bool
	// Stop, when closed (SIGINT/SIGTERM in the CLI), ends training after the current step, writing a checkpoint
	// when CheckpointDir is set; Run then returns an error wrapping train.ErrInterrupted.
	Stop <-chan struct{}
	// EvalEvery > 0 scores the test split every EvalEvery training steps (SVGP-model and deep-GP entries; deep
	// GPs with EvalSamples propagated samples), for the test-metric curves of WritePlots. Evaluation time is
	// not counted as training time.
	EvalEvery int
	// Workers and Tau override the number of workers and the delay bound of ADVGP entries (Workers 0, Tau nil:
	// the entry's); for the entries of a family that is a sum over rows (ClusterFamily), Workers ≥ 1 trains them
	// on a cluster (ClusterConfig; Tau nil: 0); NATSURL is an external NATS server ("": an embedded one on loopback) and NATSSecurity what
	// its clients present (credentials, TLS); Spawn starts the workers (nil: goroutines in this process; the CLI's
	// `advgp local` starts processes).
	Workers      int
	Tau          *int
	NATSURL      string
	NATSSecurity cluster.Security
	Spawn        cluster.Spawner
	// NATSRun names the ADVGP run on the NATS server ("" = a fresh unique name); external workers join it.
	NATSRun string
	// RejoinWait is ClusterConfig.RejoinWait: how long a gpr entry's products run waits for a silent worker
	// started again.
	RejoinWait time.Duration
	// Logger receives structured progress (nil: silent).
	Logger *slog.Logger
	// Progress receives a redrawn progress line (for terminals; nil: none).
	Progress io.Writer
}

// Entry is one named, documented experiment.
type Entry struct {
	Name    string // DATASET/MODEL, lower case
	Dataset string
	Model   string
	// Summary is the one-line description `gpzoo list` prints.
	Summary string
	// Reference names the paper and table the entry reproduces or compares with.
	Reference string
	// Published states the published numbers to compare with ("" when there are none).
	Published string
	// Iters is the default number of training iterations.
	Iters int
	// WritesCurves is set for entries that write training curves to Options.CurvesOut as CSV and summarise
	// them in Result.Curves (ringnorm/odvgp-illustration).
	WritesCurves bool
	// Config is the configuration of gpzoo train the entry runs (fit, the code of TrainCustom after its split),
	// with RawInputs keeping the inputs in their units; nil for entries whose machinery gpzoo train does not
	// have (ADVGP, VBKS, the ODVGP entries and illustration), which run their own code.
	Config    *CustomConfig
	RawInputs bool
	stream    uint64 // the entry's random stream (entrySource; 0: 0x5eed)
	run       func(e *Entry, o Options) (*Result, error)
}

// Run runs the entry.
func (e *Entry) Run(o Options) (*Result, error) {
	if e == nil || e.run == nil {
		return nil, fmt.Errorf("%w: nil entry", ErrUnknownEntry)
	}
	if o.Split < 0 {
		return nil, fmt.Errorf("zoo: %s: split must be ≥ 0, got %d", e.Name, o.Split)
	}
	if o.Resume && o.CheckpointDir == "" {
		return nil, fmt.Errorf("zoo: %s: resuming needs the checkpoint directory", e.Name)
	}
	clustered := o.Workers != 0 || o.Tau != nil || o.NATSURL != "" || o.NATSSecurity != (cluster.Security{}) || o.Spawn != nil || o.NATSRun != ""
	if clustered && e.Model != "advgp" && (e.Config == nil || !Clusterable(e.Config.Family)) {
		return nil, fmt.Errorf("zoo: %s: workers, τ and NATS settings are for ADVGP entries, entries of the families that are sums over rows (svgp, decoupled, hybrid, orth, orthnat, dgp) and gpr entries (by conjugate gradients, the workers computing the kernel products): %w", e.Name, ErrNotRowSum)
	}
	if clustered && e.Model != "advgp" && o.Workers < 1 {
		return nil, fmt.Errorf("zoo: %s: a cluster run needs Workers ≥ 1", e.Name)
	}
	if o.Tau != nil && *o.Tau < 0 {
		return nil, fmt.Errorf("zoo: %s: τ must be ≥ 0, got %d", e.Name, *o.Tau)
	}
	if o.CurvesOut != "" && !e.WritesCurves {
		return nil, fmt.Errorf("zoo: %s: writes no training curves (CurvesOut %q)", e.Name, o.CurvesOut)
	}
	if o.Optimizer != "" && o.Optimizer != "lbfgs" && o.Optimizer != "adam" {
		return nil, fmt.Errorf("zoo: %s: unknown optimizer %q (lbfgs or adam)", e.Name, o.Optimizer)
	}
	if o.SaveModel != "" {
		if err := modelfile.CheckSavePath(o.SaveModel); err != nil {
			return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
		}
	}
	r, err := e.run(e, o)
	if err == nil && r != nil {
		stamp(r)
	}
	return r, err
}

// Entries returns every entry, sorted by name.
func Entries() []*Entry {
	es := slices.Clone(registry)
	slices.SortFunc(es, func(a, b *Entry) int { return strings.Compare(a.Name, b.Name) })
	return es
}

// Lookup returns the entry named name (case-insensitive).
func Lookup(name string) (*Entry, error) {
	for _, e := range registry {
		if strings.EqualFold(e.Name, name) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w %q (see `gpzoo list`)", ErrUnknownEntry, name)
}

var registry []*Entry

func register(e *Entry) { registry = append(registry, e) }
