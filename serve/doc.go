// Package serve is gpzoo's prediction server: it serves model files (.gpz) over the Open Inference Protocol
// (KServe v2), the protocol KServe, Triton, Seldon MLServer and OpenVINO Model Server speak, so that their
// clients, gateways and load balancers can call a gpzoo model.
//
// # Models
//
// New loads every model source once: a named file (NAME[@VERSION]=FILE, ParseModelSource) or a watched
// directory (every *.gpz in it, named by its file name without the extension). A model's version is the one
// given, else the first 12 hex digits of its file's SHA-256; a name may have several versions loaded (named
// sources given more than once), and a request without a version gets the one given last. In a watched
// directory a new file adds a model, a replaced file is loaded and swapped in atomically (requests in flight
// finish on the old model), a removed file unloads its model, and a file that does not load (corrupt,
// truncated, or not predicting) is refused, logged and counted while the model it would replace keeps serving.
//
// # Inference
//
// Server.Infer is the transport-independent core (the REST transport here and a gRPC transport call it). A
// request carries either one FP64 tensor of shape [N, D] (any name) or one FP64 tensor of shape [N] (or [N, 1])
// per input feature, named as the model's features (metadata lists both forms), in any order. Missing, extra or
// repeated feature names, another datatype or shape, NaN or ±Inf values (a JSON number beyond float64's range,
// such as 1e999; the error names the row and feature), more rows than Config.MaxRows: each is an *oip.Error with
// a 4xx status.
//
// The outputs, in the target's original units, always 2-D per row even for one target (so [N, P] with P = 1,
// never [N]):
//
//   - regression and counts (Poisson): "mean" and "variance" [N, P] of y (of the count); a model of several
//     targets (gpzoo train --targets a,b) answers one [N, P] tensor per quantity, column p for target p, and
//     names the columns in the tensors' parameters: "targets" (ParamTargets), the target names as a JSON array
//     in a string;
//   - classification: "probabilities" [N, C] and "label" [N] (the most probable class, in the model file's label
//     values);
//   - with parameters.latent = true: "mean" and "variance" [N, L] of the latent functions f instead;
//   - with parameters.full_cov = true: also "covariance" [P, N, N] (Gaussian predictives only; a deep GP's is a
//     mixture: 400);
//   - with parameters.samples = S > 0: also "samples" [S, N, L], draws of f (joint across the rows for a Gaussian
//     predictive, each row propagated through the layers for a deep GP) from generators seeded by
//     parameters.seed (an unsigned integer, default 1).
//
// With parameters.row_offset = K, row i of a request draws its Monte-Carlo numbers as row K + i of a request
// with the same seed would: a client that splits a table into requests of consecutive rows (gpzoo predict --url)
// gets the bits of one request.
//
// Two outputs are answered only when a request names them: "std" [N, P] beside mean and variance (the standard
// deviation as the model file computes it, √v·σ_y in the target's units: the bits gpzoo predict writes, which
// √variance need not have, finite where variance overflows), and a classifier's "classes" [C] (the label value
// of each column of probabilities).
//
// A request's "outputs" restrict the answer to the outputs it names. Every output is FP64. A non-finite output
// value (an overflowed variance) fails the request with status 422 naming the output and row.
//
// Concurrent requests with the same options are coalesced into one prediction of up to Config.MaxBatch rows,
// waiting at most Config.MaxDelay for company. Row i of a request draws its Monte-Carlo numbers from a
// generator keyed by (the request's seed, i), and modelfile.File.Predict makes a row's result depend on the row
// and its key only: a request gets the same bits whether it was predicted alone or in any batch. Joint outputs
// (full_cov; samples of a Gaussian predictive) are never batched.
//
// # gRPC
//
// With Config.GRPCListen the server also serves the protocol's gRPC service (inference.GRPCInferenceService,
// package oip/pb) on that address (ListenAndServe; ServeGRPC on a listener of the caller's), with REST's
// semantics: a request is converted by oip.InferRequestFromProtoLimits (as strict as the JSON decoder:
// inconsistent sizes, raw and typed contents together, contents in the wrong field are errors) and answered
// by the same core, and a failure answers the gRPC code of REST's HTTP status with the same message (400
// InvalidArgument, 401 Unauthenticated, 404 NotFound, 413 ResourceExhausted, 422 OutOfRange, 503 Unavailable,
// 500 Internal). The token goes in the metadata "authorization: Bearer <token>" (ServerLive and ServerReady
// need none); a message beyond Config.MaxBodyBytes is refused (ResourceExhausted); TLS is REST's; server
// reflection is on.
//
// # Security
//
// The server listens on loopback by default. Any other listen address requires both TLS (Config.TLSCert,
// Config.TLSKey) and a bearer token (Config.Token), and New refuses to start without them (an
// *InsecureListenError). With a token set, inference, metadata and /metrics need "Authorization: Bearer
// <token>" (compared in constant time); the health endpoints answer without it. The server trusts its model
// files (loading one runs no code, but predicting costs what the model costs) and nothing in a request: every
// request is bounded in bytes, rows and time.
//
// # Operation
//
// /metrics serves Prometheus metrics (requests by model, version, protocol and status code; latency; batch
// sizes; loaded models; load failures), each request is logged with log/slog (method, path, model, status,
// rows, duration), and Server.Shutdown drains the requests in flight.
package serve
