package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path"
	"time"

	"github.com/gpzoo/gpzoo/oip"
	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// The gRPC transport: the protocol's GRPCInferenceService on top of the same core as REST (Server.infer,
// ModelMetadata, ModelReady, ...), with the same semantics. A failure answers the gRPC status code of the HTTP
// status REST would answer (grpcCode), with the same message. With a token configured, every RPC but the
// health RPCs (ServerLive, ServerReady) needs the metadata "authorization: Bearer <token>". A request message
// beyond Config.MaxBodyBytes is refused by gRPC itself (ResourceExhausted); server reflection is on.

func init() { newGRPC = newGRPCTransport }

// grpcTransport serves GRPCInferenceService for a Server.
type grpcTransport struct {
	pb.UnimplementedGRPCInferenceServiceServer
	s   *Server
	srv *grpc.Server
}

func newGRPCTransport(s *Server) (transport, error) {
	t := &grpcTransport{s: s}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(min(s.cfg.MaxBodyBytes, 1<<31-1))),
		grpc.ChainUnaryInterceptor(t.intercept),
	}
	if s.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tls)))
	}
	t.srv = grpc.NewServer(opts...)
	pb.RegisterGRPCInferenceServiceServer(t.srv, t)
	reflection.Register(t.srv)
	return t, nil
}

// Serve answers on l until Shutdown (nil then).
func (t *grpcTransport) Serve(l net.Listener) error {
	err := t.srv.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for the RPCs in flight; when ctx ends first, it closes every connection
// and returns ctx's error.
func (t *grpcTransport) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		t.srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.srv.Stop()
		<-done
		return ctx.Err()
	}
}

// ServeGRPC serves the gRPC transport on l until Shutdown (nil then), for a caller that makes its own
// listener; ListenAndServe serves it on Config.GRPCListen. The server must have been made with
// Config.GRPCListen set (a *ConfigError otherwise); l's address is checked against the listening rule as
// Config.GRPCListen is.
func (s *Server) ServeGRPC(l net.Listener) error {
	if s.grpc == nil {
		l.Close()
		return &ConfigError{Field: "GRPCListen", Msg: "the server was made without a gRPC address: ServeGRPC needs Config.GRPCListen"}
	}
	return s.serveGRPC(l)
}

// grpcCode maps an HTTP status of the core's errors to the gRPC status code of the same failure.
func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.Aborted
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusUnprocessableEntity:
		return codes.OutOfRange
	case http.StatusNotImplemented, http.StatusMethodNotAllowed:
		return codes.Unimplemented
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout, http.StatusRequestTimeout:
		return codes.DeadlineExceeded
	}
	if httpStatus >= 400 && httpStatus < 500 {
		return codes.InvalidArgument
	}
	return codes.Internal
}

// grpcError converts the core's error into a gRPC status error (a non-*oip.Error is the server's own failure).
func grpcError(err error) error {
	var e *oip.Error
	if !errors.As(err, &e) {
		e = errorf(http.StatusInternalServerError, "%v", err)
	}
	return status.Error(grpcCode(e.Status), e.Msg)
}

// grpcInfo is an RPC's requestInfo, filled by the handlers for the access log and metrics.
type grpcInfoKey struct{}

func grpcInfo(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(grpcInfoKey{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

// rpcKinds names each RPC's kind for the log and metrics, as REST's endpoints are named.
var rpcKinds = map[string]string{
	"ServerLive": "health", "ServerReady": "health", "ServerMetadata": "server_metadata",
	"ModelMetadata": "model_metadata", "ModelReady": "model_ready", "ModelInfer": "infer",
}

// intercept wraps every unary RPC: the token (but for the health RPCs), a recovered panic as Internal, the
// access log and the request metrics.
func (t *grpcTransport) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	s := t.s
	start := time.Now()
	method := path.Base(info.FullMethod)
	kind, known := rpcKinds[method]
	if !known {
		kind = "unknown"
	}
	infer := kind == "infer"
	if infer {
		s.met.inflight.Inc()
		defer s.met.inflight.Dec()
	}
	ri := &requestInfo{}
	ctx = context.WithValue(ctx, grpcInfoKey{}, ri)
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", info.FullMethod, "panic", p)
			resp, err = nil, status.Error(codes.Internal, "internal error")
		}
		d := time.Since(start)
		st := status.Convert(err)
		if kind != "health" && kind != "unknown" {
			rows := 0
			if st.Code() == codes.OK {
				rows = ri.rows
			}
			s.met.observe("grpc", ri.model, ri.version, st.Code().String(), infer, rows, d)
		}
		level := slog.LevelInfo
		if kind == "health" {
			level = slog.LevelDebug
		}
		remote := ""
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			remote = p.Addr.String()
		}
		attrs := []slog.Attr{slog.String("method", "grpc"), slog.String("path", clip(info.FullMethod)), slog.String("kind", kind),
			slog.String("model", ri.model), slog.String("version", ri.version), slog.String("status", st.Code().String()),
			slog.Int("rows", ri.rows), slog.Duration("duration", d), slog.String("remote", remote)}
		if err != nil {
			attrs = append(attrs, slog.String("error", st.Message()))
		}
		s.log.LogAttrs(ctx, level, "request", attrs...)
	}()
	if kind != "health" {
		if err := t.authorize(ctx); err != nil {
			return nil, err
		}
	}
	return handler(ctx, req)
}

// authorize checks the "authorization" metadata against the server's token (none configured: always true).
func (t *grpcTransport) authorize(ctx context.Context) error {
	if t.s.token == nil {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "missing bearer token: send the metadata authorization: Bearer <token>")
	}
	tok, ok := bearer(vals[0])
	if !ok || len(vals) > 1 || !t.s.authorize(tok) {
		return status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return nil
}

func (t *grpcTransport) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: t.s.Live()}, nil
}

func (t *grpcTransport) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: t.s.Ready()}, nil
}

func (t *grpcTransport) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return oip.ServerMetadataToProto(t.s.ServerMetadata()), nil
}

func (t *grpcTransport) ModelMetadata(ctx context.Context, req *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	md, err := t.s.ModelMetadata(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	ri := grpcInfo(ctx)
	ri.model, ri.version = md.Name, resolvedVersion(t.s, req.GetName(), req.GetVersion())
	return oip.ModelMetadataToProto(md), nil
}

func (t *grpcTransport) ModelReady(ctx context.Context, req *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	ready, err := t.s.ModelReady(req.GetName(), req.GetVersion())
	if err != nil {
		return nil, grpcError(err)
	}
	ri := grpcInfo(ctx)
	ri.model, ri.version = req.GetName(), resolvedVersion(t.s, req.GetName(), req.GetVersion())
	return &pb.ModelReadyResponse{Ready: ready}, nil
}

// ModelInfer converts the request (checked as strictly as REST's JSON body: inconsistent sizes are
// InvalidArgument), answers it through the core and converts the answer.
func (t *grpcTransport) ModelInfer(ctx context.Context, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	s := t.s
	name, version := req.GetModelName(), req.GetModelVersion()
	ri := grpcInfo(ctx)
	// An unknown model is a NotFound before the tensors are read; the element limit follows from the model's
	// width as REST's does.
	m, err := s.reg.lookup(name, version)
	if err != nil {
		return nil, grpcError(err)
	}
	maxElements := (2*s.cfg.MaxRows + 16) * max(len(m.features), 1)
	ri.model, ri.version = m.name, m.version
	m.release()
	r, err := oip.InferRequestFromProtoLimits(req, oip.Limits{MaxElements: maxElements})
	if err != nil {
		return nil, grpcError(err)
	}
	res, err := s.infer(ctx, name, version, r, ri)
	if err != nil {
		return nil, grpcError(err)
	}
	out, err := oip.InferResponseToProto(res)
	if err != nil {
		return nil, grpcError(err)
	}
	return out, nil
}
