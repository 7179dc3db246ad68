package client

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/gpzoo/gpzoo/oip"
	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// maxResponseMessage bounds one gRPC answer (a full covariance of a few thousand rows is tens of MB).
const maxResponseMessage = 1 << 30

// grpcTransport speaks the protocol's GRPCInferenceService.
type grpcTransport struct {
	conn   *grpc.ClientConn
	c      pb.GRPCInferenceServiceClient
	target string
}

func newGRPC(hostport string, o Options, tlsConf *tls.Config, target string) (*grpcTransport, error) {
	opts := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseMessage))}
	if tlsConf != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tlsConf)))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerCreds{token: o.Token, secure: tlsConf != nil}))
	}
	conn, err := grpc.NewClient(hostport, opts...)
	if err != nil {
		return nil, &ConfigError{Field: "target", Msg: err.Error()}
	}
	return &grpcTransport{conn: conn, c: pb.NewGRPCInferenceServiceClient(conn), target: target}, nil
}

// bearerCreds sends the token as the "authorization" metadata of every RPC. Over plaintext only where New
// allowed it (loopback, or Options.Insecure).
type bearerCreds struct {
	token  string
	secure bool
}

func (b bearerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearerCreds) RequireTransportSecurity() bool { return b.secure }

// codeStatus maps a gRPC status code to the HTTP status of the same failure.
var codeStatus = map[codes.Code]int{
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.FailedPrecondition: http.StatusBadRequest,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.Aborted:            http.StatusConflict,
	codes.ResourceExhausted:  http.StatusRequestEntityTooLarge,
	codes.OutOfRange:         http.StatusUnprocessableEntity,
	codes.Canceled:           499,
	codes.Unimplemented:      http.StatusNotImplemented,
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
}

// rpcError converts an RPC's error: the caller's context ending is a *TransportError, a status from the
// server an *oip.Error with the mapped HTTP status (500 for Internal, Unknown, DataLoss).
func (t *grpcTransport) rpcError(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return &TransportError{Op: op, Target: t.target, Err: ctx.Err()}
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// The deadline has passed but the context's timer has not fired yet (a loaded machine): the server,
		// which got the deadline in the request, may have cancelled the stream first.
		return &TransportError{Op: op, Target: t.target, Err: context.DeadlineExceeded}
	}
	st, ok := status.FromError(err)
	if !ok {
		return &TransportError{Op: op, Target: t.target, Err: err}
	}
	code, ok := codeStatus[st.Code()]
	if !ok {
		code = http.StatusInternalServerError
	}
	return &oip.Error{Status: code, Msg: st.Message()}
}

func (t *grpcTransport) infer(ctx context.Context, model, version string, req *oip.InferRequest) (*oip.InferResponse, error) {
	m, err := oip.InferRequestToProto(model, version, req)
	if err != nil {
		return nil, err
	}
	resp, err := t.c.ModelInfer(ctx, m)
	if err != nil {
		return nil, t.rpcError(ctx, "infer", err)
	}
	return oip.InferResponseFromProto(resp)
}

func (t *grpcTransport) metadata(ctx context.Context, model, version string) (*oip.ModelMetadata, error) {
	resp, err := t.c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: model, Version: version})
	if err != nil {
		return nil, t.rpcError(ctx, "metadata", err)
	}
	return oip.ModelMetadataFromProto(resp), nil
}

func (t *grpcTransport) ready(ctx context.Context, model, version string) (bool, error) {
	resp, err := t.c.ModelReady(ctx, &pb.ModelReadyRequest{Name: model, Version: version})
	if err != nil {
		return false, t.rpcError(ctx, "ready", err)
	}
	return resp.GetReady(), nil
}

func (t *grpcTransport) close() error { return t.conn.Close() }
