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
)

// DefaultSeed is the seed of a request without parameters.seed.
const DefaultSeed = 1

// options reads a request's parameters (unknown names are refused, so that a misspelt option is not silently
// ignored).
func (s *Server) options(p oip.Parameters) (modelfile.PredictOptions, error) {
	o := modelfile.PredictOptions{Seed: DefaultSeed}
	var unknown []string
	for k := range p {
		switch k {
		case ParamLatent, ParamFullCov, ParamSamples, ParamSeed:
		default:
			unknown = append(unknown, clip(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return o, errorf(http.StatusBadRequest, "unknown parameters %q (the parameters are %s, %s, %s, %s)",
			unknown, ParamLatent, ParamFullCov, ParamSamples, ParamSeed)
	}
	var err error
	if o.Latent, err = p.Bool(ParamLatent); err != nil {
		return o, err
	}
	if o.FullCov, err = p.Bool(ParamFullCov); err != nil {
		return o, err
	}
	samples, _, err := p.Int(ParamSamples)
	if err != nil {
		return o, err
	}
	if samples < 0 || samples > int64(s.cfg.MaxSamples) {
		return o, errorf(http.StatusBadRequest, "parameter %q is %d: want 0 … %d", ParamSamples, samples, s.cfg.MaxSamples)
	}
	o.Draws = int(samples)
	if seed, ok, err := p.Uint(ParamSeed); err != nil {
		return o, err
	} else if ok {
		o.Seed = seed
	}
	return o, nil
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
