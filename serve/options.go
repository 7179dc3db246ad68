package serve

import (
	"net/http"
	"sort"
	"strings"

	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
)

// The request parameters the server reads.
const (
	ParamLatent  = "latent"   // bool: the latent functions f instead of y
	ParamFullCov = "full_cov" // bool: the "covariance" output [P, N, N]
	ParamSamples = "samples"  // integer ≥ 0: the "samples" output [S, N, L]
	ParamSeed    = "seed"     // unsigned integer: the seed of every Monte-Carlo number (default 1)
	// unsigned integer: row i of the request draws its Monte-Carlo numbers as row row_offset + i would (default
	// 0), so that a client splitting a table into requests gets the numbers of one request.
	ParamRowOffset = "row_offset"
)

// maxRowOffset bounds parameters.row_offset (row indices stay far within int).
const maxRowOffset = 1 << 48

// DefaultSeed is the seed of a request without parameters.seed.
const DefaultSeed = 1

// options reads a request's parameters (unknown names are refused, so that a misspelt option is not silently
// ignored) and returns the prediction options and the row offset.
func (s *Server) options(p oip.Parameters) (modelfile.PredictOptions, int, error) {
	o := modelfile.PredictOptions{Seed: DefaultSeed}
	var unknown []string
	for k := range p {
		switch k {
		case ParamLatent, ParamFullCov, ParamSamples, ParamSeed, ParamRowOffset:
		default:
			unknown = append(unknown, clip(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return o, 0, errorf(http.StatusBadRequest, "unknown parameters %q (the parameters are %s, %s, %s, %s, %s)",
			unknown, ParamLatent, ParamFullCov, ParamSamples, ParamSeed, ParamRowOffset)
	}
	var err error
	if o.Latent, err = p.Bool(ParamLatent); err != nil {
		return o, 0, err
	}
	if o.FullCov, err = p.Bool(ParamFullCov); err != nil {
		return o, 0, err
	}
	samples, _, err := p.Int(ParamSamples)
	if err != nil {
		return o, 0, err
	}
	if samples < 0 || samples > int64(s.cfg.MaxSamples) {
		return o, 0, errorf(http.StatusBadRequest, "parameter %q is %d: want 0 … %d", ParamSamples, samples, s.cfg.MaxSamples)
	}
	o.Draws = int(samples)
	if seed, ok, err := p.Uint(ParamSeed); err != nil {
		return o, 0, err
	} else if ok {
		o.Seed = seed
	}
	offset, _, err := p.Uint(ParamRowOffset)
	if err != nil {
		return o, 0, err
	}
	if offset > maxRowOffset {
		return o, 0, errorf(http.StatusBadRequest, "parameter %q is %d: want 0 … %d", ParamRowOffset, offset, uint64(maxRowOffset))
	}
	return o, int(offset), nil
}

// offsetKeys returns the Monte-Carlo keys of n rows starting at row offset of a request with seed.
func offsetKeys(seed uint64, offset, n int) []modelfile.RowKey {
	keys := make([]modelfile.RowKey, n)
	for i := range keys {
		keys[i] = modelfile.RowKey{Seed: seed, Index: offset + i}
	}
	return keys
}

// listNames quotes up to 20 names for an error message.
func listNames(names []string) string {
	q := make([]string, 0, min(len(names), 21))
	for i, n := range names {
		if i == 20 {
			q = append(q, "…")
			break
		}
		q = append(q, `"`+clip(n)+`"`)
	}
	return strings.Join(q, ", ")
}
