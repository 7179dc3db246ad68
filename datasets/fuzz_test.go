package datasets

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkResult is the fuzz property: an error that wraps a package sentinel,
// or a dataset that passes Validate.
func checkResult(t *testing.T, d *Dataset, err error) {
	t.Helper()
	if err != nil {
		if d != nil {
			t.Fatalf("both a dataset and an error: %v", err)
		}
		if !hasSentinel(err) {
			t.Fatalf("error without sentinel: %v", err)
		}
		return
	}
	if verr := d.Validate(); verr != nil {
		t.Fatalf("result fails Validate: %v", verr)
	}
}

// matrixDataset wraps a matrix as a dataset with a zero target column.
func matrixDataset(m *mat.Dense) *Dataset {
	if m == nil {
		return nil
	}
	r, _ := m.Dims()
	return &Dataset{X: m, Y: mat.NewDense(r, 1, nil)}
}

func FuzzReadMatrix(f *testing.F) {
	for _, s := range []string{"1 2 3\n4 5 6\n", "1,2\n3,4", "1\t2\r\n", "NaN 1\n", "1 2\n3\n", "", "\n\n", "1e999",
		"0x1p-2 1_0", ",,\n", "\uFEFF1,2"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Add(gz([]byte("1,2\n3,4\n")), true)
	f.Fuzz(func(t *testing.T, data []byte, comma bool) {
		sep := rune(0)
		if comma {
			sep = ','
		}
		m, err := ReadMatrix(bytes.NewReader(data), sep)
		checkResult(t, matrixDataset(m), err)
	})
}

func FuzzParseEvans(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "1\n", "1,2,3\n4,5\n", "1,inf\n", "-0.5,1e-5,3\n"} {
		f.Add([]byte(s))
	}
	f.Add(gz([]byte("1,2\n3,4\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseEvans(bytes.NewReader(data))
		checkResult(t, d, err)
		if err == nil && d.P() != 1 {
			t.Fatalf("P = %d", d.P())
		}
	})
}

func FuzzParseIDXImages(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{0, 1, 2, 3, 4, 5, 6, 255}))
	f.Add(gz(idxBytes([]int{1, 1, 3}, []byte{9, 8, 7})))
	f.Add(idxBytes([]int{1, 2, 2}, []byte{1}))
	f.Add(idxBytes([]int{0, 2, 2}, nil))
	f.Add([]byte{0, 0, 8, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseIDXImages(bytes.NewReader(data))
		checkResult(t, matrixDataset(m), err)
		if err == nil {
			for _, v := range m.RawMatrix().Data {
				if v < 0 || v > 1 {
					t.Fatalf("pixel %v outside [0, 1]", v)
				}
			}
		}
	})
}

func FuzzParseIDXLabels(f *testing.F) {
	f.Add(idxBytes([]int{3}, []byte{1, 2, 3}))
	f.Add(gz(idxBytes([]int{1}, []byte{9})))
	f.Add(idxBytes([]int{4}, []byte{1}))
	f.Add(idxBytes([]int{1, 1, 1}, []byte{1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, err := ParseIDXLabels(bytes.NewReader(data))
		var d *Dataset
		if err == nil {
			y := mat.NewDense(len(labels), 1, nil)
			for i, l := range labels {
				if l < 0 || l > 255 {
					t.Fatalf("label %d", l)
				}
				y.Set(i, 0, float64(l))
			}
			d = &Dataset{X: mat.NewDense(len(labels), 1, nil), Y: y, NumClasses: 256}
		}
		checkResult(t, d, err)
	})
}

func FuzzParseIndices(f *testing.F) {
	for _, s := range []string{"1\n2\n", "1 2 3", "1.0\n", "1.5", "-3", "1e300", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := ParseIndices(bytes.NewReader(data))
		if err != nil && !hasSentinel(err) {
			t.Fatalf("error without sentinel: %v", err)
		}
		if err == nil && len(idx) == 0 {
			t.Fatal("no indices and no error")
		}
	})
}

func FuzzReadTable(f *testing.F) {
	f.Add([]byte("a,b,y\n1,2,3\n4,5,6\n"), "y", "", false)
	f.Add([]byte("a,b,y\n1,2,0\n4,5,1\n"), "y", "b", true)
	f.Add([]byte("colour,y\nred,1\n"), "y", "", false)
	f.Add([]byte("id,x,y\nq,1,2\n"), "y", "x", false)
	f.Add([]byte("x,y\n1,NaN\n"), "y", "", false)
	f.Add([]byte("x,y\n1\n"), "y", "", false)
	f.Add([]byte("x,,y\n1,2,3\n"), "y", "", false)
	f.Add([]byte("x,y\n\"1\n\",2.5\n"), "y", "", true)
	f.Add(gz([]byte("x,y\n1,2\n")), "y", "x", false)
	f.Fuzz(func(t *testing.T, data []byte, target, features string, classify bool) {
		var feats []string
		if features != "" {
			feats = strings.Split(features, ",")
		}
		tb, err := ReadTable(bytes.NewReader(data), TableOptions{Target: target, Features: feats, Classify: classify})
		if err != nil {
			if tb != nil {
				t.Fatalf("both a table and an error: %v", err)
			}
			if !hasSentinel(err) {
				t.Fatalf("error without sentinel: %v", err)
			}
		} else {
			checkResult(t, tb.Data, nil)
			if len(tb.Data.FeatureNames) != tb.Data.D() || tb.Data.P() != 1 {
				t.Fatalf("%d names for %d columns, P = %d", len(tb.Data.FeatureNames), tb.Data.D(), tb.Data.P())
			}
			if classify != (tb.Labels != nil) || len(tb.Labels) != tb.Data.NumClasses {
				t.Fatalf("classify %v: labels %v, K %d", classify, tb.Labels, tb.Data.NumClasses)
			}
			for k := 1; k < len(tb.Labels); k++ {
				if tb.Labels[k-1] >= tb.Labels[k] {
					t.Fatalf("labels not strictly increasing: %v", tb.Labels)
				}
			}
		}
		if feats == nil {
			return
		}
		x, err := ReadInputs(bytes.NewReader(data), feats)
		if err != nil {
			if !hasSentinel(err) {
				t.Fatalf("ReadInputs: error without sentinel: %v", err)
			}
			return
		}
		if _, c := x.Dims(); c != len(feats) {
			t.Fatalf("ReadInputs: %d columns for %d features", c, len(feats))
		}
		checkResult(t, matrixDataset(x), nil)
	})
}
