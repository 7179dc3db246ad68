package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"gonum.org/v1/gonum/mat"
)

// model is one loaded version of a model: its file, what its metadata says, and its batcher. It is shared by
// every request for it and never modified after loading; the registry retires it when it is replaced or
// removed, and its compiled programs are released once the last request using it is done.
type model struct {
	name, version, path string
	file                *modelfile.File
	sha256              string
	loaded              time.Time

	task     string         // modelfile.TaskRegression, TaskClassification or TaskCounts
	features []string       // the input feature names, in column order
	column   map[string]int // feature name → column
	outputs  []string       // the target names
	width    int            // P: the columns of mean/variance (regression, counts) or C of probabilities
	batcher  *batcher

	mu      sync.Mutex
	refs    int
	retired bool
}

// loadModel reads the model file at path, checks it (modelfile.Load's checks, nothing after the checksum, a
// prediction of one row) and returns it as name at version ("": the first 12 hex digits of the file's
// SHA-256). Errors are *LoadError.
func loadModel(name, version, path string) (*model, error) {
	fail := func(err error) (*model, error) { return nil, &LoadError{Name: name, Path: path, Err: err} }
	data, err := readRegular(path)
	if err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(data)
	r := bytes.NewReader(data)
	f, err := modelfile.Load(r, gp.BuildOptions{})
	if err != nil {
		return fail(err)
	}
	if r.Len() != 0 {
		return fail(fmt.Errorf("%w: %d bytes after the checksum", modelfile.ErrCorrupt, r.Len()))
	}
	m := &model{name: name, version: version, path: path, file: f, sha256: hex.EncodeToString(sum[:]), loaded: time.Now(),
		task: f.Task(), features: f.InputNames(), outputs: f.OutputNames()}
	if m.version == "" {
		m.version = m.sha256[:12]
	}
	m.column = make(map[string]int, len(m.features))
	for j, name := range m.features {
		m.column[name] = j
	}
	if len(m.column) != len(m.features) || len(m.features) == 0 {
		return fail(fmt.Errorf("the model's input names %q are not distinct and non-empty", m.features))
	}
	// One prediction, at the training inputs' mean (zeros without a standardizer), checks that the model
	// predicts, compiles its programs before the first request, and tells the outputs' width.
	x := mat.NewDense(1, len(m.features), nil)
	if s := f.Standardizer; s != nil && len(s.XMean) == len(m.features) {
		x.SetRow(0, s.XMean)
	}
	p, err := f.Predict(x, modelfile.PredictOptions{})
	if err != nil {
		f.Close()
		return fail(fmt.Errorf("predicting one row: %w", err))
	}
	switch {
	case p.Probs != nil:
		_, m.width = p.Probs.Dims()
	case p.Mean != nil:
		_, m.width = p.Mean.Dims()
	default:
		f.Close()
		return fail(fmt.Errorf("predicting one row: no mean and no probabilities"))
	}
	return m, nil
}

// readRegular reads a regular file (a directory, FIFO or device is refused at once).
func readRegular(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%v)", path, st.Mode().Type())
	}
	var buf bytes.Buffer
	buf.Grow(int(min(st.Size(), 1<<30)) + 1)
	if _, err := buf.ReadFrom(fh); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// acquire marks the model in use by one request (or batch); release undoes it. A retired model's compiled
// programs are released when its last user is done (or at once when it has none); a request that acquires it
// after that predicts all the same (modelfile compiles again) and releases again.
func (m *model) acquire() {
	m.mu.Lock()
	m.refs++
	m.mu.Unlock()
}

func (m *model) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refs--
	if m.refs == 0 && m.retired {
		m.file.Close()
	}
}

// retire marks the model replaced or removed: it serves the requests that already have it and is released
// after them.
func (m *model) retire() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retired = true
	if m.refs == 0 {
		m.file.Close()
	}
}
