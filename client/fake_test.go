package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/oip"
	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// fake is a stand-in server core, served over REST and gRPC alike: model "m" (versions "1", "2"; "2" the
// default) answers mean = the row's sum and variance = the row's width, with every option echoed in the
// answer's parameters; a token, when set, is required.
type fake struct {
	token string
	mu    sync.Mutex
	last  *oip.InferRequest // the last request received
	// answer, when set, replaces the computed answer.
	answer func(req *oip.InferRequest) (*oip.InferResponse, error)
}

func (f *fake) lastRequest() *oip.InferRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fake) version(model, version string) (string, error) {
	if model == "z" { // known, never ready
		return "1", nil
	}
	if model != "m" {
		return "", oip.Errorf(404, "no model %q", model)
	}
	switch version {
	case "":
		return "2", nil
	case "1", "2":
		return version, nil
	}
	return "", oip.Errorf(404, "model %q has no version %q", model, version)
}

func (f *fake) infer(model, version string, req *oip.InferRequest) (*oip.InferResponse, error) {
	f.mu.Lock()
	f.last = req
	f.mu.Unlock()
	v, err := f.version(model, version)
	if err != nil {
		return nil, err
	}
	if f.answer != nil {
		return f.answer(req)
	}
	var n, d int
	var x [][]float64
	if len(req.Inputs) == 1 && len(req.Inputs[0].Shape) == 2 {
		n, d = int(req.Inputs[0].Shape[0]), int(req.Inputs[0].Shape[1])
		for i := range n {
			x = append(x, req.Inputs[0].Data[i*d:(i+1)*d])
		}
	} else {
		n, d = int(req.Inputs[0].Shape[0]), len(req.Inputs)
		x = make([][]float64, n)
		for _, in := range req.Inputs {
			for i := range n {
				x[i] = append(x[i], in.Data[i])
			}
		}
	}
	if n == 0 {
		return nil, oip.BadRequest("no rows")
	}
	mean := make([]float64, n)
	variance := make([]float64, n)
	for i, row := range x {
		for _, v := range row {
			mean[i] += v
		}
		variance[i] = float64(d)
	}
	res := &oip.InferResponse{ModelName: model, ModelVersion: v, ID: req.ID, Parameters: req.Parameters, Outputs: []oip.ResponseOutput{
		{Name: OutMean, Shape: []int64{int64(n), 1}, Datatype: oip.FP64, Data: mean},
		{Name: OutVariance, Shape: []int64{int64(n), 1}, Datatype: oip.FP64, Data: variance},
	}}
	if full, _ := req.Parameters.Bool(ParamFullCov); full {
		cov := make([]float64, n*n)
		for i := range n {
			for j := range n {
				cov[i*n+j] = float64(i + j)
			}
		}
		res.Outputs = append(res.Outputs, oip.ResponseOutput{Name: OutCovariance, Shape: []int64{1, int64(n), int64(n)}, Datatype: oip.FP64, Data: cov})
	}
	if s, ok, _ := req.Parameters.Int(ParamSamples); ok {
		data := make([]float64, int(s)*n)
		for k := range data {
			data[k] = float64(k)
		}
		res.Outputs = append(res.Outputs, oip.ResponseOutput{Name: OutSamples, Shape: []int64{s, int64(n), 1}, Datatype: oip.FP64, Data: data})
	}
	return res, nil
}

func (f *fake) metadata(model, version string) (*oip.ModelMetadata, error) {
	if _, err := f.version(model, version); err != nil {
		return nil, err
	}
	return &oip.ModelMetadata{Name: model, Versions: []string{"1", "2"}, Platform: "fake",
		Inputs:  []oip.TensorMetadata{{Name: "input", Datatype: oip.FP64, Shape: []int64{-1, 2}}, {Name: "a", Datatype: oip.FP64, Shape: []int64{-1}}, {Name: "b", Datatype: oip.FP64, Shape: []int64{-1}}},
		Outputs: []oip.TensorMetadata{{Name: OutMean, Datatype: oip.FP64, Shape: []int64{-1, 1}}}}, nil
}

// rest serves f's REST API.
func (f *fake) rest() http.Handler {
	mux := http.NewServeMux()
	fail := func(w http.ResponseWriter, err error) {
		var e *oip.Error
		if !errors.As(err, &e) {
			e = oip.Errorf(500, "%v", err)
		}
		w.WriteHeader(e.Status)
		json.NewEncoder(w).Encode(e.Response())
	}
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
				fail(w, oip.Errorf(401, "invalid bearer token"))
				return
			}
			h(w, r)
		}
	}
	infer := auth(func(w http.ResponseWriter, r *http.Request) {
		req, err := oip.DecodeInferRequest(r.Body, oip.Limits{})
		if err != nil {
			fail(w, err)
			return
		}
		res, err := f.infer(r.PathValue("name"), r.PathValue("version"), req)
		if err != nil {
			fail(w, err)
			return
		}
		json.NewEncoder(w).Encode(res)
	})
	meta := auth(func(w http.ResponseWriter, r *http.Request) {
		md, err := f.metadata(r.PathValue("name"), r.PathValue("version"))
		if err != nil {
			fail(w, err)
			return
		}
		json.NewEncoder(w).Encode(md)
	})
	ready := auth(func(w http.ResponseWriter, r *http.Request) {
		if _, err := f.version(r.PathValue("name"), r.PathValue("version")); err != nil {
			fail(w, err)
			return
		}
		ready := r.PathValue("name") != "z"
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(oip.ModelReadyResponse{Name: r.PathValue("name"), Ready: ready})
	})
	mux.HandleFunc("POST /v2/models/{name}/infer", infer)
	mux.HandleFunc("POST /v2/models/{name}/versions/{version}/infer", infer)
	mux.HandleFunc("GET /v2/models/{name}", meta)
	mux.HandleFunc("GET /v2/models/{name}/versions/{version}", meta)
	mux.HandleFunc("GET /v2/models/{name}/ready", ready)
	return mux
}

// grpcFake serves f's gRPC API.
type grpcFake struct {
	pb.UnimplementedGRPCInferenceServiceServer
	f *fake
}

var statusCode = map[int]codes.Code{400: codes.InvalidArgument, 401: codes.Unauthenticated, 404: codes.NotFound,
	413: codes.ResourceExhausted, 422: codes.OutOfRange, 503: codes.Unavailable}

func grpcError(err error) error {
	var e *oip.Error
	if errors.As(err, &e) {
		code, ok := statusCode[e.Status]
		if !ok {
			code = codes.Internal
		}
		return status.Error(code, e.Msg)
	}
	return status.Error(codes.Internal, err.Error())
}

func (g grpcFake) auth(ctx context.Context) error {
	if g.f.token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) != 1 || v[0] != "Bearer "+g.f.token {
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}

func (g grpcFake) ModelInfer(ctx context.Context, m *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if err := g.auth(ctx); err != nil {
		return nil, err
	}
	req, err := oip.InferRequestFromProto(m)
	if err != nil {
		return nil, grpcError(err)
	}
	res, err := g.f.infer(m.ModelName, m.ModelVersion, req)
	if err != nil {
		return nil, grpcError(err)
	}
	out, err := oip.InferResponseToProto(res)
	if err != nil {
		return nil, grpcError(err)
	}
	return out, nil
}

func (g grpcFake) ModelMetadata(ctx context.Context, m *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	if err := g.auth(ctx); err != nil {
		return nil, err
	}
	md, err := g.f.metadata(m.Name, m.Version)
	if err != nil {
		return nil, grpcError(err)
	}
	return oip.ModelMetadataToProto(md), nil
}

func (g grpcFake) ModelReady(ctx context.Context, m *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	if err := g.auth(ctx); err != nil {
		return nil, err
	}
	if _, err := g.f.version(m.Name, m.Version); err != nil {
		return nil, grpcError(err)
	}
	return &pb.ModelReadyResponse{Ready: m.Name != "z"}, nil
}

// serveGRPC serves f over gRPC on loopback (over TLS with cert) and returns the address.
func serveGRPC(t *testing.T, f *fake, cert *tls.Certificate) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if cert != nil {
		opts = append(opts, grpc.Creds(credentials.NewServerTLSFromCert(cert)))
	}
	s := grpc.NewServer(opts...)
	pb.RegisterGRPCInferenceServiceServer(s, grpcFake{f: f})
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

// serveREST serves f over REST on loopback and returns the base URL.
func serveREST(t *testing.T, f *fake) string {
	t.Helper()
	srv := httptest.NewServer(f.rest())
	t.Cleanup(srv.Close)
	return srv.URL
}
