// Package pb holds the Open Inference Protocol's (KServe v2) gRPC service,
// package inference, service GRPCInferenceService, as Go code generated from
// its published proto, open_inference_grpc.proto beside this file (from
// kserve/open-inference-protocol, Apache-2.0, LICENSE beside it).
//
// The generated files are committed: building and testing need neither protoc
// nor its plugins. To regenerate them, have protoc and the plugins
// protoc-gen-go v1.36.12 and protoc-gen-go-grpc v1.6.2 on PATH (see README.md)
// and run `go generate ./oip/pb`.
package pb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative open_inference_grpc.proto
