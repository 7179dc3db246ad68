package serve

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/oip"
	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

// grpcServer is a Server serving REST and gRPC on loopback ports, shut down at the test's end.
type grpcServer struct {
	*testServer
	grpcAddr string
	conn     *grpc.ClientConn
	client   pb.GRPCInferenceServiceClient // built from oip/pb only
}

func startGRPC(t *testing.T, cfg Config, sources ...ModelSource) *grpcServer {
	t.Helper()
	cfg.GRPCListen = "127.0.0.1:0" // enables the transport; the test's own listener serves it
	ts := start(t, cfg, sources...)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ts.ServeGRPC(l) }()
	t.Cleanup(func() {
		// Before start's cleanup (registered first, so run last), whose second Shutdown returns at once.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ts.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("ServeGRPC: %v", err)
		}
	})
	gs := &grpcServer{testServer: ts, grpcAddr: l.Addr().String()}
	creds := insecure.NewCredentials()
	if cfg.TLSCert != "" {
		pemBytes, err := os.ReadFile(cfg.TLSCert)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pemBytes)
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool})
	}
	gs.conn, err = grpc.NewClient(gs.grpcAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.conn.Close() })
	gs.client = pb.NewGRPCInferenceServiceClient(gs.conn)
	return gs
}

// ctx returns a context carrying the token ("" for none).
func withToken(token string) context.Context {
	ctx := context.Background()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	return ctx
}

// protoRequest is a gRPC request of one [N, D] FP64 tensor in fp64_contents.
func protoRequest(model string, rows [][]float64, params map[string]*pb.InferParameter) *pb.ModelInferRequest {
	var data []float64
	for _, r := range rows {
		data = append(data, r...)
	}
	return &pb.ModelInferRequest{ModelName: model, Parameters: params, Inputs: []*pb.ModelInferRequest_InferInputTensor{{
		Name: "input", Datatype: "FP64", Shape: []int64{int64(len(rows)), int64(len(rows[0]))},
		Contents: &pb.InferTensorContents{Fp64Contents: data}}}}
}

func rawBytes(data []float64) []byte {
	b := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func u64Param(v uint64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: v}}
}

func i64Param(v int64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
}

// sameAsREST checks that the gRPC answer has REST's outputs, bit for bit.
func sameAsREST(t *testing.T, what string, g *pb.ModelInferResponse, r *oip.InferResponse) {
	t.Helper()
	if g.ModelName != r.ModelName || g.ModelVersion != r.ModelVersion || len(g.Outputs) != len(r.Outputs) || len(g.RawOutputContents) != 0 {
		t.Fatalf("%s: gRPC answered %s@%s with %d outputs, REST %s@%s with %d", what, g.ModelName, g.ModelVersion, len(g.Outputs), r.ModelName, r.ModelVersion, len(r.Outputs))
	}
	for i, o := range g.Outputs {
		ro := r.Outputs[i]
		if o.Name != ro.Name || o.Datatype != ro.Datatype || !jsonEqual(o.Shape, ro.Shape) {
			t.Errorf("%s: output %d: gRPC %s %s %v, REST %s %s %v", what, i, o.Name, o.Datatype, o.Shape, ro.Name, ro.Datatype, ro.Shape)
			continue
		}
		if !sameBits(o.Contents.GetFp64Contents(), ro.Data) {
			t.Errorf("%s: output %q differs between gRPC and REST", what, o.Name)
		}
	}
}

// TestGRPCSameAsREST: a client built from oip/pb alone gets REST's bits for an SVGP and a deep GP with a seed,
// whether it sends fp64_contents, raw_input_contents or one tensor per feature.
func TestGRPCSameAsREST(t *testing.T) {
	gs := startGRPC(t, Config{Token: "tok", Logger: discard}, named(t, "svgp", golden("SVGP_gaussian")), named(t, "dgp", golden("DGP_coupled")))
	ctx := withToken("tok")
	rows := testRows(7, 3)
	cases := []struct {
		model string
		rest  oip.Parameters
		grpc  map[string]*pb.InferParameter
	}{
		{"svgp", nil, nil},
		{"svgp", oip.Parameters{"full_cov": true, "latent": true}, map[string]*pb.InferParameter{
			"full_cov": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}, "latent": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}},
		{"svgp", oip.Parameters{"samples": 3, "seed": 11}, map[string]*pb.InferParameter{"samples": i64Param(3), "seed": u64Param(11)}},
		{"dgp", oip.Parameters{"seed": 7}, map[string]*pb.InferParameter{"seed": u64Param(7)}},
		{"dgp", oip.Parameters{"seed": 7, "samples": 2}, map[string]*pb.InferParameter{"seed": i64Param(7), "samples": u64Param(2)}},
	}
	for _, c := range cases {
		what := c.model + " " + strings.ReplaceAll(jsonString(c.rest), `"`, "")
		rest := gs.infer(t, c.model, matrixRequest(rows, c.rest))
		req := protoRequest(c.model, rows, c.grpc)
		g, err := gs.client.ModelInfer(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sameAsREST(t, what, g, rest)
		// The same rows as raw bytes.
		raw := protoRequest(c.model, rows, c.grpc)
		raw.RawInputContents = [][]byte{rawBytes(raw.Inputs[0].Contents.Fp64Contents)}
		raw.Inputs[0].Contents = nil
		if g, err = gs.client.ModelInfer(ctx, raw); err != nil {
			t.Fatalf("%s, raw: %v", what, err)
		}
		sameAsREST(t, what+" raw", g, rest)
		// One tensor per feature (x0, x1), in reverse order.
		feat := &pb.ModelInferRequest{ModelName: c.model, Parameters: c.grpc}
		for j := 1; j >= 0; j-- {
			col := make([]float64, len(rows))
			for i := range rows {
				col[i] = rows[i][j]
			}
			feat.Inputs = append(feat.Inputs, &pb.ModelInferRequest_InferInputTensor{Name: []string{"x0", "x1"}[j], Datatype: "FP64", Shape: []int64{int64(len(rows))},
				Contents: &pb.InferTensorContents{Fp64Contents: col}})
		}
		if g, err = gs.client.ModelInfer(ctx, feat); err != nil {
			t.Fatalf("%s, per feature: %v", what, err)
		}
		sameAsREST(t, what+" per feature", g, rest)
	}

	// Metadata, readiness and health agree with REST; health answers without the token.
	md, err := gs.client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "svgp"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := oip.ModelMetadataFromProto(md), gs.metadata(t, "svgp"); !jsonEqual(got, want) {
		t.Errorf("metadata: gRPC %+v, REST %+v", got, want)
	}
	sm, err := gs.client.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	if err != nil || sm.Name != "gpzoo" || sm.Version != gs.ServerMetadata().Version {
		t.Errorf("server metadata %+v, %v", sm, err)
	}
	if r, err := gs.client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "dgp"}); err != nil || !r.Ready {
		t.Errorf("model ready: %v, %v", r, err)
	}
	if r, err := gs.client.ServerLive(context.Background(), &pb.ServerLiveRequest{}); err != nil || !r.Live {
		t.Errorf("live without the token: %v, %v", r, err)
	}
	if r, err := gs.client.ServerReady(context.Background(), &pb.ServerReadyRequest{}); err != nil || !r.Ready {
		t.Errorf("ready without the token: %v, %v", r, err)
	}

	// Server reflection lists the service.
	stream, err := reflectionpb.NewServerReflectionClient(gs.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	res, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range res.GetListServicesResponse().GetService() {
		found = found || s.Name == "inference.GRPCInferenceService"
	}
	if !found {
		t.Errorf("reflection lists %v", res.GetListServicesResponse().GetService())
	}
	stream.CloseSend()

	// The gRPC requests are counted under protocol "grpc".
	dgp, err := gs.client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "dgp"})
	if err != nil {
		t.Fatal(err)
	}
	series := `gpzoo_serve_requests_total{code="OK",model="dgp",protocol="grpc",version="` + dgp.Versions[len(dgp.Versions)-1] + `"}`
	if n := gs.metricValue(t, series); n < 7 {
		t.Errorf("%s %v", series, n)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGRPCBadInput: every bad request over gRPC answers the status code of REST's HTTP status, and the server
// keeps answering.
func TestGRPCBadInput(t *testing.T) {
	path := withFeatures(t, "SVGP_gaussian", "temp", "pressure")
	gs := startGRPC(t, Config{MaxRows: 10, MaxBodyBytes: 4096, Token: "s3cret", Logger: discard}, named(t, "m", path), named(t, "dgp", golden("DGP_coupled")))
	ctx := withToken("s3cret")
	fp64 := func(name string, shape []int64, data ...float64) *pb.ModelInferRequest_InferInputTensor {
		return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: "FP64", Shape: shape, Contents: &pb.InferTensorContents{Fp64Contents: data}}
	}
	req := func(model string, ins ...*pb.ModelInferRequest_InferInputTensor) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{ModelName: model, Inputs: ins}
	}
	good := req("m", fp64("x", []int64{1, 2}, 1, 2))
	withRaw := func(r *pb.ModelInferRequest, raw ...[]byte) *pb.ModelInferRequest {
		r.RawInputContents = raw
		return r
	}
	withParams := func(r *pb.ModelInferRequest, p map[string]*pb.InferParameter) *pb.ModelInferRequest {
		r.Parameters = p
		return r
	}
	boolParam := &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	cases := []struct {
		name string
		ctx  context.Context
		req  *pb.ModelInferRequest
		code codes.Code
		msg  string
	}{
		{"fp64_contents short", ctx, req("m", fp64("x", []int64{2, 2}, 1, 2, 3)), codes.InvalidArgument, "shape [2 2] has 4 elements, fp64_contents holds 3"},
		{"fp64_contents long", ctx, req("m", fp64("x", []int64{1, 2}, 1, 2, 3)), codes.InvalidArgument, "fp64_contents holds 3"},
		{"raw not a multiple of 8", ctx, withRaw(req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{1, 2}}), make([]byte, 15)), codes.InvalidArgument, "15 bytes of raw contents"},
		{"raw count", ctx, withRaw(req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{1, 2}}), rawBytes([]float64{1, 2, 3})), codes.InvalidArgument, "raw contents hold 3"},
		{"raw and typed", ctx, withRaw(req("m", fp64("x", []int64{1, 2}, 1, 2)), rawBytes([]float64{1, 2})), codes.InvalidArgument, "raw_input_contents is given too"},
		{"raw entries", ctx, withRaw(req("m", &pb.ModelInferRequest_InferInputTensor{Name: "temp", Datatype: "FP64", Shape: []int64{1}}, &pb.ModelInferRequest_InferInputTensor{Name: "pressure", Datatype: "FP64", Shape: []int64{1}}), rawBytes([]float64{1})), codes.InvalidArgument, "1 entries for 2 inputs"},
		{"wrong field", ctx, req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{1, 2}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1, 2}}}), codes.InvalidArgument, "not fp32_contents"},
		{"wrong datatype", ctx, req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP32", Shape: []int64{1, 2}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1, 2}}}), codes.InvalidArgument, "datatype FP32: the model takes FP64"},
		{"unknown datatype", ctx, req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "DOUBLE", Shape: []int64{1, 2}}), codes.InvalidArgument, `unknown datatype "DOUBLE"`},
		{"bytes datatype", ctx, req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "BYTES", Shape: []int64{1}, Contents: &pb.InferTensorContents{BytesContents: [][]byte{{1}}}}), codes.InvalidArgument, "not supported"},
		{"negative dimension", ctx, req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{-1, 2}}), codes.InvalidArgument, "dimensions are integers ≥ 0"},
		{"wrong width", ctx, req("m", fp64("x", []int64{1, 3}, 1, 2, 3)), codes.InvalidArgument, "the model takes one FP64 tensor [N, 2]"},
		{"no inputs", ctx, req("m"), codes.InvalidArgument, "no inputs"},
		{"missing feature", ctx, req("m", fp64("temp", []int64{1}, 1)), codes.InvalidArgument, `missing features "pressure"`},
		{"NaN", ctx, req("m", fp64("x", []int64{1, 2}, math.NaN(), 1)), codes.InvalidArgument, `input row 0, feature "temp": NaN`},
		{"+Inf", ctx, req("m", fp64("x", []int64{2, 2}, 1, 2, 3, math.Inf(1))), codes.InvalidArgument, `input row 1, feature "pressure": +Inf`},
		{"-Inf per feature", ctx, req("m", fp64("temp", []int64{2}, math.Inf(-1), 0), fp64("pressure", []int64{2}, 1, 2)), codes.InvalidArgument, `input row 0, feature "temp": -Inf`},
		{"NaN raw", ctx, withRaw(req("m", &pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: "FP64", Shape: []int64{1, 2}}), rawBytes([]float64{1, math.NaN()})), codes.InvalidArgument, "NaN"},
		{"unknown model", ctx, req("nope", fp64("x", []int64{1, 2}, 1, 2)), codes.NotFound, `model "nope" is not loaded (loaded: dgp, m)`},
		{"unknown version", ctx, &pb.ModelInferRequest{ModelName: "m", ModelVersion: "v9", Inputs: good.Inputs}, codes.NotFound, `model "m" has no version "v9"`},
		{"rows over the limit", ctx, req("m", fp64("x", []int64{11, 2}, make([]float64, 22)...)), codes.ResourceExhausted, "11 rows: at most 10"},
		{"message over the limit", ctx, req("m", fp64("x", []int64{300, 2}, make([]float64, 600)...)), codes.ResourceExhausted, "larger than max"},
		{"unknown parameter", ctx, withParams(req("m", fp64("x", []int64{1, 2}, 1, 2)), map[string]*pb.InferParameter{"full-cov": boolParam}), codes.InvalidArgument, `unknown parameters ["full-cov"]`},
		{"parameter without value", ctx, withParams(req("m", fp64("x", []int64{1, 2}, 1, 2)), map[string]*pb.InferParameter{"seed": {}}), codes.InvalidArgument, `"seed" has no value`},
		{"negative seed", ctx, withParams(req("m", fp64("x", []int64{1, 2}, 1, 2)), map[string]*pb.InferParameter{"seed": i64Param(-1)}), codes.InvalidArgument, `parameter "seed"`},
		{"latent not bool", ctx, withParams(req("m", fp64("x", []int64{1, 2}, 1, 2)), map[string]*pb.InferParameter{"latent": i64Param(1)}), codes.InvalidArgument, `parameter "latent"`},
		{"full_cov of a deep GP", ctx, withParams(req("dgp", fp64("x", []int64{1, 2}, 1, 2)), map[string]*pb.InferParameter{"full_cov": boolParam}), codes.InvalidArgument, "no full covariance"},
		{"unavailable output", ctx, &pb.ModelInferRequest{ModelName: "m", Inputs: good.Inputs, Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "covariance"}}}, codes.InvalidArgument, "covariance needs parameters.full_cov"},
		{"missing token", context.Background(), good, codes.Unauthenticated, "missing bearer token"},
		{"wrong token", withToken("s3cre"), good, codes.Unauthenticated, "invalid bearer token"},
		{"not bearer", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Basic eDp5"), good, codes.Unauthenticated, "invalid bearer token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gs.client.ModelInfer(c.ctx, c.req)
			st := status.Convert(err)
			if st.Code() != c.code || !strings.Contains(st.Message(), c.msg) {
				t.Errorf("%v %q, want %v containing %q", st.Code(), st.Message(), c.code, c.msg)
			}
			// The server is alive and answers a good request.
			if _, err := gs.client.ModelInfer(ctx, good); err != nil {
				t.Fatalf("after: %v", err)
			}
		})
	}
	// Metadata and readiness need the token too; the health RPCs do not.
	for name, call := range map[string]func(context.Context) error{
		"metadata": func(c context.Context) error {
			_, err := gs.client.ModelMetadata(c, &pb.ModelMetadataRequest{Name: "m"})
			return err
		},
		"model ready": func(c context.Context) error {
			_, err := gs.client.ModelReady(c, &pb.ModelReadyRequest{Name: "m"})
			return err
		},
		"server metadata": func(c context.Context) error {
			_, err := gs.client.ServerMetadata(c, &pb.ServerMetadataRequest{})
			return err
		},
	} {
		if code := status.Code(call(withToken("x"))); code != codes.Unauthenticated {
			t.Errorf("%s with a wrong token: %v", name, code)
		}
		if err := call(ctx); err != nil {
			t.Errorf("%s with the token: %v", name, err)
		}
	}
	for name, call := range map[string]func(context.Context) error{
		"unknown model metadata": func(c context.Context) error {
			_, err := gs.client.ModelMetadata(c, &pb.ModelMetadataRequest{Name: "nope"})
			return err
		},
		"unknown model ready": func(c context.Context) error {
			_, err := gs.client.ModelReady(c, &pb.ModelReadyRequest{Name: "m", Version: "v9"})
			return err
		},
	} {
		if code := status.Code(call(ctx)); code != codes.NotFound {
			t.Errorf("%s: %v, want NotFound", name, code)
		}
	}
	if _, err := gs.client.ServerLive(context.Background(), &pb.ServerLiveRequest{}); err != nil {
		t.Errorf("live: %v", err)
	}
}

// TestGRPCTLS: with TLS configured, gRPC speaks TLS, and a plaintext client gets no answer.
func TestGRPCTLS(t *testing.T) {
	cert, key := selfSigned(t)
	gs := startGRPC(t, Config{TLSCert: cert, TLSKey: key, Token: "tok", Logger: discard}, named(t, "m", golden("SVGP_gaussian")))
	if _, err := gs.client.ModelInfer(withToken("tok"), protoRequest("m", testRows(2, 1), nil)); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	plain, err := grpc.NewClient(gs.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx, cancel := context.WithTimeout(withToken("tok"), 2*time.Second)
	defer cancel()
	if _, err := pb.NewGRPCInferenceServiceClient(plain).ModelInfer(ctx, protoRequest("m", testRows(2, 1), nil)); err == nil {
		t.Error("a plaintext client was answered")
	}
}

// TestGRPCConfig: ServeGRPC needs Config.GRPCListen; a public gRPC address needs TLS and a token.
func TestGRPCConfig(t *testing.T) {
	s, err := New(Config{Logger: discard}, named(t, "m", golden("SVGP_gaussian")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if err := s.ServeGRPC(l); !errorsAs(err, &ce) {
		t.Errorf("ServeGRPC without GRPCListen: %v", err)
	}
	var ie *InsecureListenError
	if _, err := New(Config{GRPCListen: "0.0.0.0:8081", Logger: discard}, named(t, "m", golden("SVGP_gaussian"))); !errorsAs(err, &ie) {
		t.Errorf("public gRPC address without TLS and token: %v", err)
	}
	if code := grpcCode(http.StatusUnprocessableEntity); code != codes.OutOfRange {
		t.Errorf("422 → %v", code)
	}
}
