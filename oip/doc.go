// Package oip holds the message types of the Open Inference Protocol's HTTP/REST API (the KServe v2 inference
// protocol, also spoken by Triton, Seldon MLServer and OpenVINO Model Server) and a strict decoder of its
// inference requests.
//
// The JSON field names are the protocol's (kserve/open-inference-protocol, specification/protocol/
// inference_rest.md): an inference request {id, parameters, inputs: [{name, shape, datatype, parameters,
// data}], outputs: [{name, parameters}]}, an inference response {model_name, model_version, id, parameters,
// outputs: [{name, shape, datatype, parameters, data}]}, model metadata {name, versions, platform, inputs,
// outputs: [{name, datatype, shape}]}, server metadata {name, version, extensions}, and the error object
// {"error": "..."}.
//
// Tensor data are held as float64 values, flattened in row-major order: DecodeInferRequest accepts the
// protocol's flat and natural (nested) representations of numeric tensors and checks them against the tensor's
// shape and datatype; encoding writes the flat form. Every bad input is a *Error carrying a 4xx HTTP status and
// a message for the protocol's error object; the decoder never panics (FuzzDecodeInferRequest).
//
// The protocol's gRPC messages (package oip/pb) convert to and from these types (InferRequestFromProto,
// InferResponseToProto, InferRequestToProto, InferResponseFromProto, the metadata conversions): a gRPC request
// is checked as strictly as a JSON body, inconsistent sizes included (FuzzInferRequestFromProto).
//
// The package imports the standard library and oip/pb only, so that transports (REST, gRPC) and clients share
// it.
package oip
