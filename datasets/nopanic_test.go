package datasets

import (
	"bytes"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// noPanic runs f and fails the test if it panics; it returns f's error.
func noPanic(t *testing.T, name string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", name, r)
		}
	}()
	return f()
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestNoPanicOnBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	rng := rand.New(rand.NewPCG(1, 1))
	readers := map[string]func() io.Reader{
		"nil":     func() io.Reader { return nil },
		"empty":   func() io.Reader { return strings.NewReader("") },
		"failing": func() io.Reader { return errReader{} },
		"junk":    func() io.Reader { return bytes.NewReader([]byte{0x1f, 0x8b, 0, 1, 2}) },
		"text":    func() io.Reader { return strings.NewReader("a,b\n1,2\n") },
	}
	var nilDS *Dataset
	var nilStd *Standardizer
	calls := map[string]func(r func() io.Reader) error{
		"ReadMatrix":     func(r func() io.Reader) error { _, err := ReadMatrix(r(), 0); return err },
		"ReadMatrixSep":  func(r func() io.Reader) error { _, err := ReadMatrix(r(), ';'); return err },
		"ReadTable":      func(r func() io.Reader) error { _, err := ReadTable(r(), TableOptions{Target: "y"}); return err },
		"ParseUCI":       func(r func() io.Reader) error { _, err := ParseUCI(r(), r(), r()); return err },
		"ParseIndices":   func(r func() io.Reader) error { _, err := ParseIndices(r()); return err },
		"ParseEvans":     func(r func() io.Reader) error { _, err := ParseEvans(r()); return err },
		"ParseFoldMask":  func(r func() io.Reader) error { _, err := ParseFoldMask(r(), 0); return err },
		"ParseFoldMask1": func(r func() io.Reader) error { _, err := ParseFoldMask(r(), 1); return err },
		"ParseDelgado":   func(r func() io.Reader) error { _, err := ParseDelgado(r()); return err },
		"ParseRaetsch":   func(r func() io.Reader) error { _, err := ParseRaetsch(r()); return err },
		"ParseIDXImages": func(r func() io.Reader) error { _, err := ParseIDXImages(r()); return err },
		"ParseIDXLabels": func(r func() io.Reader) error { _, err := ParseIDXLabels(r()); return err },
	}
	for cn, call := range calls {
		for rn, r := range readers {
			if err := noPanic(t, cn+"/"+rn, func() error { return call(r) }); err == nil {
				t.Errorf("%s/%s: no error", cn, rn)
			}
		}
	}
	others := map[string]func() error{
		"LoadUCI(\"\")":       func() error { _, err := LoadUCI(""); return err },
		"LoadUCI(missing)":    func() error { _, err := LoadUCI(missing); return err },
		"UCISplit":            func() error { _, _, err := UCISplit("", -1); return err },
		"UCISplit(missing)":   func() error { _, _, err := UCISplit(missing, 0); return err },
		"NumUCISplits":        func() error { _, err := NumUCISplits(""); return err },
		"LoadEvans":           func() error { _, err := LoadEvans(""); return err },
		"LoadFoldMask":        func() error { _, err := LoadFoldMask("", -5); return err },
		"EvansSplit":          func() error { _, _, err := EvansSplit("", 99); return err },
		"LoadDelgado":         func() error { _, err := LoadDelgado(""); return err },
		"LoadRaetsch":         func() error { _, err := LoadRaetsch(missing); return err },
		"LoadMNIST":           func() error { _, err := LoadMNIST("", ""); return err },
		"RandomSplit":         func() error { _, _, err := RandomSplit(-3, 2, rng); return err },
		"RandomSplitNaN":      func() error { _, _, err := RandomSplit(10, nan(), rng); return err },
		"RandomSplitTrain":    func() error { _, _, err := RandomSplitTrain(-3, 200, rng); return err },
		"KFold":               func() error { _, err := KFold(-1, -1, nil); return err },
		"NewSampler":          func() error { _, err := NewSampler(0, 0, nil); return err },
		"Complement":          func() error { _, err := Complement(2, []int{5}); return err },
		"ComplementDup":       func() error { _, err := Complement(1, []int{0, 0, 0, 9}); return err },
		"FitStandardizer":     func() error { _, err := FitStandardizer(nil, true); return err },
		"FitStandardizerZero": func() error { _, err := FitStandardizer(&Dataset{}, false); return err },
		"Apply(nil)":          func() error { _, err := nilStd.Apply(nil); return err },
		"Apply(empty std)":    func() error { _, err := (&Standardizer{}).Apply(&Dataset{}); return err },
		"ApplyX":              func() error { _, err := (&Standardizer{}).ApplyX(nil); return err },
		"Subset(nil)":         func() error { _, err := nilDS.Subset([]int{0}); return err },
		"Subset(mismatch)": func() error {
			_, err := (&Dataset{X: mat.NewDense(2, 1, nil), Y: mat.NewDense(3, 1, nil)}).Subset([]int{0})
			return err
		},
		"Validate(nil)": func() error { return nilDS.Validate() },
		"Validate(names)": func() error {
			return (&Dataset{X: mat.NewDense(2, 1, nil), Y: mat.NewDense(2, 1, nil), FeatureNames: []string{"a", "b"}}).Validate()
		},
		"Validate(K<0)": func() error {
			return (&Dataset{X: mat.NewDense(2, 1, nil), Y: mat.NewDense(2, 1, nil), NumClasses: -1}).Validate()
		},
		"Embedded":        func() error { _, err := Embedded("nope"); return err },
		"EmbeddedFold":    func() error { _, _, err := EmbeddedFold("airfoil", 10); return err },
		"EmbeddedFoldBad": func() error { _, _, err := EmbeddedFold("", 0); return err },
		"CheckGather":     func() error { return CheckGather(nil, nil, nil) },
	}
	for name, f := range others {
		err := noPanic(t, name, f)
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if !hasSentinel(err) && !strings.Contains(err.Error(), "no such file") {
			t.Errorf("%s: error without sentinel: %v", name, err)
		}
	}
	// Methods that return values rather than errors must not panic either.
	noPanic(t, "accessors", func() error {
		_ = nilDS.N() + nilDS.D() + nilDS.P()
		_ = nilStd.InverseMean(0, 1) + nilStd.InverseVar(0, 1) + nilStd.LogDensityOffset(0)
		_ = (&Standardizer{}).InverseMean(2, 1)
		return nil
	})
}

func nan() float64 { z := 0.0; return z / z }
