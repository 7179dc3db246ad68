// Package client is a Go client of the Open Inference Protocol (KServe v2) over REST and gRPC, made for gpzoo's
// prediction server (gpzoo serve) and usable with any server speaking the protocol with FP64 tensors.
//
// New takes a target: an http:// or https:// base URL (REST, the protocol's /v2/... paths beneath it) or
// grpc://HOST:PORT or grpcs://HOST:PORT (gRPC, plaintext or TLS). Client.Infer sends the rows of a matrix as one
// FP64 tensor [N, D] named "input" (or, with Params.Features, one FP64 tensor [N] per named feature) with the
// request parameters gpzoo serve reads (latent, full_cov, samples, seed, row_offset), and reads the answer into matrices:
// the predictive mean and variance, or a classifier's probabilities and labels, and the full covariances and
// joint samples on request. Metadata and Ready read the model's metadata and readiness.
//
// A bearer token (Options.Token) goes in the "Authorization: Bearer" header (REST) or the "authorization"
// metadata of every RPC (gRPC). The client refuses to send it in plaintext (http://, grpc://) to a host that is
// not loopback unless Options.Insecure says so. TLS is configured by Options.TLS or Options.CAFile (a PEM
// bundle of the certificate authorities to trust).
//
// Errors: a failure the server answers is an *oip.Error with its HTTP status (gRPC status codes mapped to HTTP
// statuses: InvalidArgument 400, Unauthenticated 401, PermissionDenied 403, NotFound 404, ResourceExhausted
// 413, OutOfRange 422, Unavailable 503, DeadlineExceeded 504, …); a server that cannot be reached or an answer
// that cannot be read is a *TransportError; bad options are a *ConfigError; bad arguments to Infer (rows that do
// not match the features named) an *oip.Error with status 400, as the server would answer them.
package client
