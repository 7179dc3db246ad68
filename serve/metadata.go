package serve

import (
	"runtime/debug"

	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/oip"
)

// Platform is the platform the model metadata reports.
const Platform = "gpzoo"

// ServerMetadata returns the server metadata (/v2): name "gpzoo", the version, no extensions.
func (s *Server) ServerMetadata() *oip.ServerMetadata {
	return &oip.ServerMetadata{Name: "gpzoo", Version: s.version, Extensions: []string{}}
}

// ModelMetadata returns the metadata of the model name at version ("": the default): its loaded versions, its
// inputs (the tensor "input" FP64 [-1, D], then, equivalently, one FP64 [-1] tensor per feature: a request
// sends either form) and its default outputs (mean and variance [-1, P], or probabilities [-1, C] and label
// [-1]). Errors: a 404 *oip.Error for an unknown model or version.
func (s *Server) ModelMetadata(name, version string) (*oip.ModelMetadata, error) {
	m, err := s.reg.lookup(name, version)
	if err != nil {
		return nil, err
	}
	defer m.release()
	md := &oip.ModelMetadata{Name: m.name, Versions: versions(s.reg.table.Load().models[m.name]), Platform: Platform}
	d := int64(len(m.features))
	md.Inputs = append(md.Inputs, oip.TensorMetadata{Name: "input", Datatype: oip.FP64, Shape: []int64{-1, d}})
	for _, f := range m.features {
		md.Inputs = append(md.Inputs, oip.TensorMetadata{Name: f, Datatype: oip.FP64, Shape: []int64{-1}})
	}
	w := int64(m.width)
	if m.task == modelfile.TaskClassification {
		md.Outputs = []oip.TensorMetadata{{Name: OutProbabilities, Datatype: oip.FP64, Shape: []int64{-1, w}},
			{Name: OutLabel, Datatype: oip.FP64, Shape: []int64{-1}}}
	} else {
		md.Outputs = []oip.TensorMetadata{{Name: OutMean, Datatype: oip.FP64, Shape: []int64{-1, w}},
			{Name: OutVariance, Datatype: oip.FP64, Shape: []int64{-1, w}}}
	}
	return md, nil
}

// ModelReady reports whether the model name at version ("": the default) is ready: loaded, and the server not
// shutting down. Errors: a 404 *oip.Error for an unknown model or version.
func (s *Server) ModelReady(name, version string) (bool, error) {
	m, err := s.reg.lookup(name, version)
	if err != nil {
		return false, err
	}
	m.release()
	return !s.closing.Load(), nil
}

// Ready reports whether the server is ready for inference: not shutting down, and at least one model loaded.
func (s *Server) Ready() bool {
	return !s.closing.Load() && s.reg.table.Load().count() > 0
}

// Live reports whether the server is live: true while it runs (also while it drains at shutdown).
func (s *Server) Live() bool { return true }

// moduleVersion is gpzoo's module version from the build information ("(devel)" in a development build).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == "github.com/gpzoo/gpzoo" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/gpzoo/gpzoo" {
			return d.Version
		}
	}
	return "unknown"
}
