package oip

// InferRequest is the protocol's inference request object ($inference_request). Decode it from JSON with
// DecodeInferRequest, which checks it and accepts nested tensor data; encoding/json writes it in the protocol's
// form (flat data).
type InferRequest struct {
	// ID identifies the request; a response echoes it.
	ID string `json:"id,omitempty"`
	// Parameters are the request's parameters (server-specific: see the server's documentation).
	Parameters Parameters `json:"parameters,omitempty"`
	// Inputs are the input tensors.
	Inputs []RequestInput `json:"inputs"`
	// Outputs, when given, are the outputs to return (all the model's outputs otherwise).
	Outputs []RequestOutput `json:"outputs,omitempty"`
}

// RequestInput is one input tensor of an inference request ($request_input).
type RequestInput struct {
	Name string `json:"name"`
	// Shape is the tensor's shape; every dimension is ≥ 0 and their product is len(Data).
	Shape []int64 `json:"shape"`
	// Datatype is one of the protocol's data types (FP64, FP32, INT64, ...).
	Datatype   string     `json:"datatype"`
	Parameters Parameters `json:"parameters,omitempty"`
	// Data are the tensor's elements in row-major order (integer types hold integral values).
	Data []float64 `json:"data"`
}

// RequestOutput names one output an inference request asks for ($request_output).
type RequestOutput struct {
	Name       string     `json:"name"`
	Parameters Parameters `json:"parameters,omitempty"`
}
