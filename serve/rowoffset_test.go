package serve

import (
	"net/http"
	"testing"

	"github.com/gpzoo/gpzoo/oip"
)

// TestRowOffset: rows sent with parameters.row_offset = K get the bits of rows K… of one request with the same
// seed (a deep GP's marginals and per-row samples), batched or alone; a bad offset is a 400.
func TestRowOffset(t *testing.T) {
	rows := testRows(9, 4)
	for _, maxBatch := range []int{0, 1} {
		ts := start(t, Config{MaxBatch: maxBatch, Logger: discard}, named(t, "dgp", golden("DGP_coupled")))
		whole := ts.infer(t, "dgp", matrixRequest(rows, oip.Parameters{"seed": 5, "samples": 2}))
		part := ts.infer(t, "dgp", matrixRequest(rows[4:], oip.Parameters{"seed": 5, "samples": 2, "row_offset": 4}))
		for _, name := range []string{OutMean, OutVariance} {
			w, p := output(t, whole, name), output(t, part, name)
			width := int(w.Shape[1])
			if !sameBits(p.Data, w.Data[4*width:]) {
				t.Errorf("MaxBatch %d: %s of rows 4… differs from the whole request's", maxBatch, name)
			}
		}
		w, p := output(t, whole, OutSamples), output(t, part, OutSamples)
		l := int(w.Shape[2])
		for s := range int(w.Shape[0]) {
			if !sameBits(p.Data[s*5*l:(s+1)*5*l], w.Data[(s*9+4)*l:(s+1)*9*l]) {
				t.Errorf("MaxBatch %d: sample %d of rows 4… differs", maxBatch, s)
			}
		}
		// Without the offset the rows draw other numbers.
		alone := ts.infer(t, "dgp", matrixRequest(rows[4:], oip.Parameters{"seed": 5}))
		if sameBits(output(t, alone, OutMean).Data, output(t, part, OutMean).Data) {
			t.Errorf("MaxBatch %d: the offset changed nothing", maxBatch)
		}
		for _, bad := range []string{`-1`, `1.5`, `"4"`, `281474976710657`} {
			body := `{"parameters":{"row_offset":` + bad + `},"inputs":[{"name":"x","shape":[1,2],"datatype":"FP64","data":[1,2]}]}`
			if status, b := ts.do(t, "POST", "/v2/models/dgp/infer", body); status != http.StatusBadRequest {
				t.Errorf("row_offset %s: %d %s", bad, status, b)
			}
		}
	}
}
