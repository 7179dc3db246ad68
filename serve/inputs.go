package serve

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/oip"
	"gonum.org/v1/gonum/mat"
)

// inputs assembles a request's input tensors into the matrix x [N, D] of the model's feature columns: either
// one FP64 tensor [N, D] (any name), or one FP64 tensor [N] or [N, 1] per feature, named as the features, in
// any order. Every bad input is a 400 naming it (413 beyond maxRows rows); NaN and ±Inf name the row and
// feature.
func (m *model) inputs(ins []oip.RequestInput, maxRows int) (*mat.Dense, error) {
	d := len(m.features)
	if len(ins) == 0 {
		return nil, errorf(http.StatusBadRequest, "no inputs: %s", m.inputHint())
	}
	for _, in := range ins {
		if in.Datatype != oip.FP64 {
			return nil, errorf(http.StatusBadRequest, "input %q: datatype %s: the model takes FP64 tensors", clip(in.Name), clip(in.Datatype))
		}
		want := int64(1)
		for _, k := range in.Shape {
			if k < 0 || (k > 0 && want > math.MaxInt32/k) {
				return nil, errorf(http.StatusBadRequest, "input %q: shape %v: dimensions must be ≥ 0 and their product small", clip(in.Name), in.Shape)
			}
			want *= k
		}
		if want != int64(len(in.Data)) {
			return nil, errorf(http.StatusBadRequest, "input %q: shape %v has %d elements, data has %d", clip(in.Name), in.Shape, want, len(in.Data))
		}
	}
	var x *mat.Dense
	if in := ins[0]; len(ins) == 1 && len(in.Shape) == 2 && in.Shape[1] == int64(d) {
		n := int(in.Shape[0])
		if err := checkRows(n, maxRows); err != nil {
			return nil, err
		}
		x = mat.NewDense(n, d, in.Data)
	} else {
		if _, ok := m.column[in.Name]; len(ins) == 1 && !ok {
			return nil, errorf(http.StatusBadRequest, "input %q: shape %v: %s", clip(in.Name), in.Shape, m.inputHint())
		}
		var err error
		if x, err = m.featureInputs(ins, maxRows); err != nil {
			return nil, err
		}
	}
	n, _ := x.Dims()
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errorf(http.StatusBadRequest, "input row %d, feature %q: %v is not finite (a JSON number beyond ±1.8e308 overflows to ±Inf)", i, clip(m.features[j]), v)
			}
		}
	}
	return x, nil
}

// featureInputs assembles one [N] or [N, 1] tensor per feature.
func (m *model) featureInputs(ins []oip.RequestInput, maxRows int) (*mat.Dense, error) {
	d := len(m.features)
	var extra, repeated []string
	seen := make([]bool, d)
	n, first := -1, ""
	for _, in := range ins {
		j, ok := m.column[in.Name]
		switch {
		case !ok:
			extra = append(extra, in.Name)
			continue
		case seen[j]:
			repeated = append(repeated, in.Name)
			continue
		}
		seen[j] = true
		if !(len(in.Shape) == 1 || len(in.Shape) == 2 && in.Shape[1] == 1) {
			return nil, errorf(http.StatusBadRequest, "input %q (a feature): shape %v: want [N] or [N, 1] (or give one tensor [N, %d] of every feature)", clip(in.Name), in.Shape, d)
		}
		rows := int(in.Shape[0])
		if n < 0 {
			n, first = rows, in.Name
		} else if rows != n {
			return nil, errorf(http.StatusBadRequest, "inputs %q and %q have %d and %d rows: every feature needs one value per row", clip(first), clip(in.Name), n, rows)
		}
	}
	var missing []string
	for j, ok := range seen {
		if !ok {
			missing = append(missing, m.features[j])
		}
	}
	if len(missing)+len(extra)+len(repeated) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing features "+listNames(missing))
		}
		if len(extra) > 0 {
			parts = append(parts, "unknown inputs "+listNames(extra))
		}
		if len(repeated) > 0 {
			parts = append(parts, "repeated inputs "+listNames(slices.Compact(slices.Sorted(slices.Values(repeated)))))
		}
		return nil, errorf(http.StatusBadRequest, "inputs: %s (%s)", strings.Join(parts, "; "), m.inputHint())
	}
	if err := checkRows(n, maxRows); err != nil {
		return nil, err
	}
	x := mat.NewDense(n, d, nil)
	for _, in := range ins {
		j := m.column[in.Name]
		for i, v := range in.Data {
			x.Set(i, j, v)
		}
	}
	return x, nil
}

func checkRows(n, maxRows int) error {
	if n == 0 {
		return errorf(http.StatusBadRequest, "no rows: the inputs have 0 rows")
	}
	if n > maxRows {
		return errorf(http.StatusRequestEntityTooLarge, "%d rows: at most %d rows per request", n, maxRows)
	}
	return nil
}

// inputHint says what inputs the model takes.
func (m *model) inputHint() string {
	return "the model takes one FP64 tensor [N, " + strconv.Itoa(len(m.features)) + "] (any name) or one FP64 tensor [N] per feature, named " + listNames(m.features)
}
