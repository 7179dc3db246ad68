package cluster

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"github.com/gpzoo/gpzoo/train"
)

// CheckpointFile is the server checkpoint's file name inside ServerConfig.CheckpointDir.
const CheckpointFile = "cluster-server.ckpt"

var checkpointMagic = []byte("GPZCLUS1")

// ErrCheckpoint is wrapped by every error about a server checkpoint that exists but cannot be used.
var ErrCheckpoint = errors.New("cluster: unusable server checkpoint")

// serverCheckpoint is what the server saves: the version, every Param's raw value, the Optimizer's and each
// Hook's state (train.Stateful; nil for a stateless one) and the run's record so far.
type serverCheckpoint struct {
	Run       string
	Names     []string
	Version   int
	Raw       [][]float64
	Optimizer []byte
	Hooks     [][]byte
	Res       Result
	Book      [4]int // stale, unknown, joins, rejoins
}

func (s *server) checkpointPath() string { return filepath.Join(s.cfg.CheckpointDir, CheckpointFile) }

// save writes the checkpoint atomically: magic, SHA-256 of the payload, gob payload.
func (s *server) save() error {
	s.copyCounters()
	b := s.book
	c := serverCheckpoint{Run: s.cfg.Job.Run, Names: s.cfg.Job.Names, Version: b.version, Res: *s.res,
		Book: [4]int{b.stale, b.unknown, b.joins, b.rejoins}}
	for _, p := range s.params {
		c.Raw = append(c.Raw, slices.Clone(p.Raw()))
	}
	var err error
	if st, ok := s.up.Optimizer().(train.Stateful); ok {
		if c.Optimizer, err = st.MarshalState(s.up.OptimizedParams()); err != nil {
			return err
		}
	}
	for _, h := range s.up.Hooks() {
		var data []byte
		if st, ok := h.(train.Stateful); ok {
			if data, err = st.MarshalState(s.params); err != nil {
				return err
			}
		}
		c.Hooks = append(c.Hooks, data)
	}
	payload, err := encode(c)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(payload)
	data := append(append(append([]byte(nil), checkpointMagic...), sum[:]...), payload...)
	if err := os.MkdirAll(s.cfg.CheckpointDir, 0o755); err != nil {
		return fmt.Errorf("cluster: checkpoint: %w", err)
	}
	if err := atomicfile.WriteFile(s.checkpointPath(), data, 0o644); err != nil {
		return fmt.Errorf("cluster: checkpoint: %w", err)
	}
	return nil
}

// restore loads the checkpoint into the model, the optimisers and the record; nothing is changed on error.
func (s *server) restore() error {
	path := s.checkpointPath()
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cluster: resuming: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrCheckpoint, path, fmt.Sprintf(format, args...))
	}
	if len(data) < len(checkpointMagic)+sha256.Size || !bytes.Equal(data[:len(checkpointMagic)], checkpointMagic) {
		return bad("not a gpzoo cluster server checkpoint (or truncated)")
	}
	payload := data[len(checkpointMagic)+sha256.Size:]
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], data[len(checkpointMagic):len(checkpointMagic)+sha256.Size]) {
		return bad("checksum mismatch (corrupt or truncated)")
	}
	var c serverCheckpoint
	if err := decode(payload, &c); err != nil {
		return bad("%v", err)
	}
	if !slices.Equal(c.Names, s.cfg.Job.Names) || len(c.Raw) != len(s.params) {
		return bad("saved for parameters %v, this model has %v", c.Names, s.cfg.Job.Names)
	}
	for i, p := range s.params {
		if len(c.Raw[i]) != p.Size() {
			return bad("%s has %d values, want %d", p.Name(), len(c.Raw[i]), p.Size())
		}
	}
	if c.Version > s.cfg.Iters {
		return bad("it is at update %d, past Iters %d", c.Version, s.cfg.Iters)
	}
	if len(c.Hooks) != len(s.up.Hooks()) {
		return bad("saved with %d hooks, this run has %d", len(c.Hooks), len(s.up.Hooks()))
	}
	if st, ok := s.up.Optimizer().(train.Stateful); ok && c.Optimizer != nil {
		if err := st.UnmarshalState(s.up.OptimizedParams(), c.Optimizer); err != nil {
			return bad("%v", err)
		}
	}
	for i, h := range s.up.Hooks() {
		if st, ok := h.(train.Stateful); ok && c.Hooks[i] != nil {
			if err := st.UnmarshalState(s.params, c.Hooks[i]); err != nil {
				return bad("%v", err)
			}
		}
	}
	for i, p := range s.params {
		if err := p.SetRaw(c.Raw[i]); err != nil {
			return bad("%v", err)
		}
	}
	*s.res = c.Res
	s.globalAt = -1
	if s.conv != nil { // the criterion's state is a function of the losses
		for _, l := range s.res.Losses {
			s.done = s.conv.Add(l * float64(s.cfg.Job.NumData))
		}
	}
	if len(s.res.PerShard) != s.cfg.Job.Workers {
		s.res.PerShard = make([]int, s.cfg.Job.Workers)
	}
	b := s.book
	b.version = c.Version
	b.stale, b.unknown, b.joins, b.rejoins = c.Book[0], c.Book[1], c.Book[2], c.Book[3]
	s.logf("cluster server resumed", "version", c.Version, "path", path)
	return nil
}
