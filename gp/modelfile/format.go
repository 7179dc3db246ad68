package modelfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime/debug"
	"slices"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"gonum.org/v1/gonum/mat"

	// Every model family registers its kinds in init: link them all so that any model file can be loaded.
	_ "github.com/gpzoo/gpzoo/gp/approx"
	_ "github.com/gpzoo/gpzoo/gp/bayes"
	_ "github.com/gpzoo/gpzoo/gp/cg"
	_ "github.com/gpzoo/gpzoo/gp/dgp"
	_ "github.com/gpzoo/gpzoo/gp/layers"
	_ "github.com/gpzoo/gpzoo/gp/likelihoods"
	_ "github.com/gpzoo/gpzoo/gp/models"
)

// FormatVersion is the newest model-file format version this package writes and reads. Version 2 added two
// things a version-1 reader would drop silently: priors on Params (gp.Spec.Priors, anywhere in the spec) and
// the optional prediction cache of a gp.Cached model (the CG exact GP's α and LOVE cache). A file with neither
// is written as version 1, byte for byte what earlier versions of gpzoo wrote and read; a file with either as
// version 2, which earlier versions refuse as newer (a *VersionError).
const FormatVersion = 2

// versionOf returns the format version a file of spec is written as: 2 with priors, else 1 (Save raises it to
// cacheVersion for a prediction cache).
func versionOf(s gp.Spec) uint32 {
	if hasPriors(s) {
		return 2
	}
	return 1
}

func hasPriors(s gp.Spec) bool {
	if len(s.Priors) > 0 {
		return true
	}
	for _, c := range s.Children {
		if hasPriors(c) {
			return true
		}
	}
	return false
}

// cacheVersion is the first format version with the prediction cache.
const cacheVersion = 2

// MaxPayload is the largest payload length Load accepts (16 GiB); a larger length field is ErrCorrupt.
const MaxPayload = 16 << 30

// magic starts every model file (see the package documentation).
var magic = [8]byte{0x89, 'G', 'P', 'Z', '\r', '\n', 0x1a, '\n'}

// headerLen is the length of magic, version and payload length.
const headerLen = len(magic) + 4 + 8

// readChunk is how much of the payload Load reads at a time, so that memory grows with the bytes read rather
// than with the length field.
const readChunk = 1 << 20

// Model is what a model file holds: a gp.Model that can describe itself. Every gpzoo family is also a
// gp.Predictor (File.Predict needs one); a gp.DataHolder's training data (exact GP, SGPR: standardised, what
// its predictions condition on) is saved with it and restored on loading.
type Model interface {
	gp.Model
	gp.Describer
}

// File is the content of a model file.
type File struct {
	// Model is the model, parameters included.
	Model Model
	// Standardizer is the data standardisation applied before training (nil: none).
	Standardizer *datasets.Standardizer
	// Meta is free metadata: entry, seed, column names, target, created_by, ... Load sets "created_by" to the
	// writing gpzoo's version when the file's Meta has no such key. Every saved file names its inputs: Save
	// writes "features" (a JSON list) as x0 … x{D−1} when Meta has none (see InputNames).
	Meta map[string]string

	state *predictState // Predict's compiled programs and the model's profile (predict.go)
}

// payload is the JSON part of a model file.
type payload struct {
	CreatedBy    string            `json:"created_by"`
	Spec         gp.Spec           `json:"spec"`
	Params       []paramRecord     `json:"params"`
	Standardizer *stdRecord        `json:"standardizer,omitempty"`
	TrainX       *matrixRecord     `json:"train_x,omitempty"`
	TrainY       *matrixRecord     `json:"train_y,omitempty"`
	Meta         map[string]string `json:"meta,omitempty"`
	Cache        map[string]bits   `json:"cache,omitempty"`
}

// paramRecord is one Param: its structure and its raw values as float64 bits.
type paramRecord struct {
	Name      string `json:"name"`
	Shape     []int  `json:"shape"`
	Transform string `json:"transform"`
	Trainable bool   `json:"trainable"`
	Raw       bits   `json:"raw"`
}

// stdRecord is a datasets.Standardizer.
type stdRecord struct {
	XMean bits `json:"x_mean"`
	XStd  bits `json:"x_std"`
	YMean bits `json:"y_mean"`
	YStd  bits `json:"y_std"`
}

// matrixRecord is a row-major matrix.
type matrixRecord struct {
	Rows int  `json:"rows"`
	Cols int  `json:"cols"`
	Data bits `json:"data"`
}

// bits is a []float64 that marshals as base64 of its little-endian IEEE-754 bits.
type bits []float64

// MarshalJSON encodes the bits.
func (b bits) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 8*len(b))
	for i, v := range b {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(buf))
}

// UnmarshalJSON decodes the bits.
func (b *bits) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	buf, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	if len(buf)%8 != 0 {
		return fmt.Errorf("%d bytes of float64 bits, not a multiple of 8", len(buf))
	}
	out := make([]float64, len(buf)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	*b = out
	return nil
}

// Save writes f to w as a model file. The model's Spec must rebuild to Params of the same names, shapes and
// transforms (checked), every raw value must be finite, and the standardizer must agree with the model's input
// dimension and with the training data a gp.DataHolder holds (saved with it).
func Save(w io.Writer, f *File) error {
	data, err := encode(f)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("modelfile: writing: %w", err)
	}
	return nil
}

// SaveFile writes f to path atomically: to a temporary file in the same directory, synced, then renamed over
// path, so that a crash never leaves a partial model file at path.
func SaveFile(path string, f *File) (err error) {
	data, err := encode(f)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("modelfile: writing %s: %w", path, err)
	}
	return nil
}

// Load reads a model file from r (exactly the file's bytes: nothing after its checksum is read) and rebuilds
// its model with o. Errors: ErrNotModelFile, *VersionError, ErrTruncated, ErrCorrupt (see the package
// documentation), or r's read error.
func Load(r io.Reader, o gp.BuildOptions) (*File, error) {
	h := sha256.New()
	tr := io.TeeReader(r, h)
	var head [headerLen]byte
	n, err := io.ReadFull(tr, head[:])
	if err != nil && !isShort(err) {
		return nil, fmt.Errorf("modelfile: reading: %w", err)
	}
	if m := min(n, len(magic)); !bytes.Equal(head[:m], magic[:m]) || n == 0 {
		return nil, fmt.Errorf("%w (its first bytes are %q)", ErrNotModelFile, head[:min(n, len(magic))])
	}
	if n < len(magic)+4 {
		return nil, truncated("header", headerLen, n)
	}
	version := binary.LittleEndian.Uint32(head[len(magic):])
	if version > FormatVersion {
		return nil, &VersionError{Got: version, Max: FormatVersion}
	}
	if version == 0 {
		return nil, corrupt("format version 0")
	}
	if n < headerLen {
		return nil, truncated("header", headerLen, n)
	}
	length := binary.LittleEndian.Uint64(head[len(magic)+4:])
	if length > MaxPayload {
		return nil, corrupt("payload length %d exceeds the %d-byte limit", length, uint64(MaxPayload))
	}
	var body bytes.Buffer
	for got := uint64(0); got < length; {
		k, err := io.CopyN(&body, tr, int64(min(length-got, readChunk)))
		got += uint64(k)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, truncated("payload", uint64(headerLen)+length+sha256.Size, uint64(headerLen)+got)
			}
			return nil, fmt.Errorf("modelfile: reading: %w", err)
		}
	}
	want := h.Sum(nil)
	var sum [sha256.Size]byte
	if k, err := io.ReadFull(r, sum[:]); err != nil {
		if isShort(err) {
			return nil, truncated("checksum", uint64(headerLen)+length+sha256.Size, uint64(headerLen)+length+uint64(k))
		}
		return nil, fmt.Errorf("modelfile: reading: %w", err)
	}
	if !bytes.Equal(sum[:], want) {
		return nil, corrupt("SHA-256 checksum mismatch")
	}
	return decode(body.Bytes(), version, o)
}

// CheckSavePath returns an error when SaveFile(path, …) would certainly fail because path's folder is missing or
// path is a directory: callers check before training rather than after.
func CheckSavePath(path string) error {
	if err := atomicfile.CheckWritable(path); err != nil {
		return fmt.Errorf("modelfile: %w", err)
	}
	return nil
}

// LoadFile loads the model file at path (see Load); bytes after the checksum are ErrCorrupt.
func LoadFile(path string, o gp.BuildOptions) (*File, error) {
	fh, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	defer fh.Close()
	br := bufio.NewReader(fh)
	f, err := Load(br, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, fmt.Errorf("%s: %w", path, corrupt("data after the checksum"))
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("modelfile: reading %s: %w", path, err)
	}
	return f, nil
}

func isShort(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) }

func truncated[T int | uint64](part string, want, got T) error {
	return fmt.Errorf("%w: the file ends in its %s: expected %d bytes, got %d", ErrTruncated, part, want, got)
}

// encode validates f and returns the whole file.
func encode(f *File) ([]byte, error) {
	if f == nil || f.Model == nil {
		return nil, errors.New("modelfile: Save: no model")
	}
	spec, err := gp.Describe(f.Model) // the Params' priors included
	if err != nil {
		return nil, fmt.Errorf("modelfile: Save: %w", err)
	}
	ps := f.Model.Params()
	meta := f.Meta
	if meta["features"] == "" {
		if m, ok := f.Model.(gp.Predictor); ok && m.InputDim() > 0 {
			meta = maps.Clone(meta)
			if meta == nil {
				meta = map[string]string{}
			}
			names, _ := json.Marshal(GeneratedInputNames(m.InputDim()))
			meta["features"] = string(names)
		}
	}
	p := payload{CreatedBy: createdBy(), Spec: spec, Meta: meta, Params: make([]paramRecord, len(ps))}
	for i, q := range ps {
		if q == nil {
			return nil, fmt.Errorf("modelfile: Save: Param %d is nil", i)
		}
		for j, v := range q.Raw() {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("modelfile: Save: Param %q entry %d is %v", q.Name(), j, v)
			}
		}
		p.Params[i] = paramRecord{Name: q.Name(), Shape: q.Shape(), Transform: q.Transform().String(),
			Trainable: q.Trainable(), Raw: bits(q.Raw())} // marshalled below, before anything changes it
	}
	if f.Standardizer != nil {
		s := f.Standardizer
		p.Standardizer = &stdRecord{XMean: s.XMean, XStd: s.XStd, YMean: s.YMean, YStd: s.YStd}
	}
	if dh, ok := f.Model.(gp.DataHolder); ok {
		if x, y := dh.TrainingData(); x != nil && y != nil {
			p.TrainX, p.TrainY = matrix(x), matrix(y)
		}
	}
	if err := validateData(f.Model, p.Standardizer, p.TrainX, p.TrainY); err != nil {
		return nil, fmt.Errorf("modelfile: Save: %w", err)
	}
	version := versionOf(spec)
	if c, ok := f.Model.(gp.Cached); ok && p.TrainX != nil {
		cache, err := c.PredictionCache()
		if err != nil {
			return nil, fmt.Errorf("modelfile: Save: the prediction cache: %w", err)
		}
		p.Cache = make(map[string]bits, len(cache))
		for k, v := range cache {
			p.Cache[k] = v
		}
		version = cacheVersion
	}
	js, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("modelfile: Save: %w", err)
	}
	out := make([]byte, 0, headerLen+len(js)+sha256.Size)
	out = append(out, magic[:]...)
	out = binary.LittleEndian.AppendUint32(out, version)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(js)))
	out = append(out, js...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...), nil
}

// decode turns a checksummed payload of a file of the given format version into a File.
func decode(data []byte, version uint32, o gp.BuildOptions) (*File, error) {
	var p payload
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, corrupt("payload: %v", err)
	}
	if dec.More() {
		return nil, corrupt("payload: data after the JSON object")
	}
	if version < 2 && hasPriors(p.Spec) {
		return nil, corrupt("priors in a version-%d file (priors came with version 2)", version)
	}
	built, err := gp.BuildSpec(p.Spec, o)
	if err != nil {
		return nil, fmt.Errorf("%w: rebuilding the model: %w", ErrCorrupt, err)
	}
	m, ok := built.(Model)
	if !ok {
		return nil, corrupt("the spec of kind %q builds a %T, not a model", p.Spec.Kind, built)
	}
	ps := m.Params()
	if err := matchParams(p.Params, ps); err != nil {
		return nil, err
	}
	for i, q := range ps {
		if err := q.SetRaw(p.Params[i].Raw); err != nil {
			return nil, fmt.Errorf("%w: Param %q: %w", ErrCorrupt, q.Name(), err)
		}
		q.SetTrainable(p.Params[i].Trainable)
	}
	if err := validateData(m, p.Standardizer, p.TrainX, p.TrainY); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	f := &File{Model: m, Meta: p.Meta}
	if s := p.Standardizer; s != nil {
		f.Standardizer = &datasets.Standardizer{XMean: s.XMean, XStd: s.XStd, YMean: s.YMean, YStd: s.YStd}
	}
	if p.TrainX != nil {
		dh, ok := m.(gp.DataHolder)
		if !ok {
			return nil, corrupt("training data stored with a %T, which holds none", m)
		}
		if err := dh.SetTrainingData(mat.NewDense(p.TrainX.Rows, p.TrainX.Cols, p.TrainX.Data), mat.NewDense(p.TrainY.Rows, p.TrainY.Cols, p.TrainY.Data)); err != nil {
			return nil, fmt.Errorf("%w: training data: %w", ErrCorrupt, err)
		}
	}
	if p.Cache != nil {
		c, ok := m.(gp.Cached)
		switch {
		case version < cacheVersion:
			return nil, corrupt("a prediction cache in a version-%d file", version)
		case !ok || p.TrainX == nil:
			return nil, corrupt("a prediction cache stored with a %T without training data or a cache", m)
		}
		cache := make(map[string][]float64, len(p.Cache))
		for k, v := range p.Cache {
			cache[k] = v
		}
		if err := c.SetPredictionCache(cache); err != nil {
			return nil, fmt.Errorf("%w: prediction cache: %w", ErrCorrupt, err)
		}
	}
	if p.CreatedBy != "" && f.Meta["created_by"] == "" {
		if f.Meta == nil {
			f.Meta = map[string]string{}
		}
		f.Meta["created_by"] = p.CreatedBy
	}
	return f, nil
}

// matchParams checks the stored Params against the rebuilt ones, one by one (sizes included).
func matchParams(recs []paramRecord, ps []*graph.Param) error {
	if len(recs) != len(ps) {
		return corrupt("%d Params stored, the model has %d", len(recs), len(ps))
	}
	for i, q := range ps {
		r := recs[i]
		switch {
		case r.Name != q.Name():
			return corrupt("Param %d is %q, the model's is %q", i, r.Name, q.Name())
		case !slices.Equal(r.Shape, q.Shape()):
			return corrupt("Param %q has shape %v, the model's has %v", r.Name, r.Shape, q.Shape())
		case r.Transform != q.Transform().String():
			return corrupt("Param %q has transform %s, the model's has %s", r.Name, r.Transform, q.Transform())
		case len(r.Raw) != q.Size():
			return corrupt("Param %q has %d values, its shape %v holds %d", r.Name, len(r.Raw), q.Shape(), q.Size())
		}
	}
	return nil
}

func matrix(a *mat.Dense) *matrixRecord {
	r, c := a.Dims()
	m := &matrixRecord{Rows: r, Cols: c, Data: make(bits, 0, r*c)}
	for i := range r {
		m.Data = append(m.Data, a.RawRowView(i)...)
	}
	return m
}

// inputDim returns the model's input dimension D when it can tell (a gp.Predictor, or any model with an
// InputDim method, that is complete enough to know it).
func inputDim(m Model) (int, bool) {
	if m, ok := m.(interface{ InputDim() int }); ok && m.InputDim() > 0 {
		return m.InputDim(), true
	}
	return 0, false
}

// validateData checks the standardizer and the training data: finite, consistent lengths and shapes, and
// the model's input dimension.
func validateData(m Model, s *stdRecord, x, y *matrixRecord) error {
	d, knowD := inputDim(m)
	if s != nil {
		if len(s.XMean) == 0 || len(s.XMean) != len(s.XStd) || len(s.YMean) == 0 || len(s.YMean) != len(s.YStd) {
			return fmt.Errorf("standardizer has %d/%d input and %d/%d target means/deviations", len(s.XMean), len(s.XStd), len(s.YMean), len(s.YStd))
		}
		if knowD && len(s.XMean) != d {
			return fmt.Errorf("standardizer has %d input columns, the model takes %d", len(s.XMean), d)
		}
		for _, v := range []struct {
			name     string
			vals     []float64
			positive bool
		}{{"x_mean", s.XMean, false}, {"x_std", s.XStd, true}, {"y_mean", s.YMean, false}, {"y_std", s.YStd, true}} {
			for j, a := range v.vals {
				if math.IsNaN(a) || math.IsInf(a, 0) || (v.positive && !(a > 0)) {
					return fmt.Errorf("standardizer %s column %d is %v", v.name, j, a)
				}
			}
		}
	}
	if (x == nil) != (y == nil) {
		return errors.New("training inputs and targets must be both present or both absent")
	}
	if x == nil {
		return nil
	}
	for _, t := range []struct {
		name string
		m    *matrixRecord
	}{{"training inputs", x}, {"training targets", y}} {
		r, c := t.m.Rows, t.m.Cols
		if r <= 0 || c <= 0 || r > len(t.m.Data) || c > len(t.m.Data) || r*c != len(t.m.Data) {
			return fmt.Errorf("%s are %d×%d with %d values", t.name, r, c, len(t.m.Data))
		}
		for i, a := range t.m.Data {
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return fmt.Errorf("%s row %d, column %d is %v", t.name, i/c, i%c, a)
			}
		}
	}
	if knowD && x.Cols != d {
		return fmt.Errorf("training inputs have %d columns, the model takes %d", x.Cols, d)
	}
	if x.Rows != y.Rows {
		return fmt.Errorf("%d training input rows, %d target rows", x.Rows, y.Rows)
	}
	if s != nil && (x.Cols != len(s.XMean) || y.Cols != len(s.YMean)) {
		return fmt.Errorf("training data are %d and %d columns wide, the standardizer %d and %d", x.Cols, y.Cols, len(s.XMean), len(s.YMean))
	}
	return nil
}

// createdBy names the writing program and its module version.
func createdBy() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "gpzoo " + v
}
