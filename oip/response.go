package oip

// InferResponse is the protocol's inference response object ($inference_response).
type InferResponse struct {
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version,omitempty"`
	// ID is the request's id ("" when it had none).
	ID         string           `json:"id"`
	Parameters Parameters       `json:"parameters,omitempty"`
	Outputs    []ResponseOutput `json:"outputs"`
}

// ResponseOutput is one output tensor of an inference response ($response_output).
type ResponseOutput struct {
	Name string `json:"name"`
	// Shape is the tensor's shape; the product of its dimensions is len(Data).
	Shape      []int64    `json:"shape"`
	Datatype   string     `json:"datatype"`
	Parameters Parameters `json:"parameters,omitempty"`
	// Data are the tensor's elements in row-major order.
	Data []float64 `json:"data"`
}
