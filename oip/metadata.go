package oip

// ServerMetadata is the server metadata response object ($metadata_server_response).
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// ModelMetadata is the model metadata response object ($metadata_model_response).
type ModelMetadata struct {
	Name string `json:"name"`
	// Versions are the versions that may be requested explicitly.
	Versions []string         `json:"versions,omitempty"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// TensorMetadata describes one input or output tensor of a model ($metadata_tensor).
type TensorMetadata struct {
	Name     string `json:"name"`
	Datatype string `json:"datatype"`
	// Shape is the tensor's shape, -1 for a variable-size dimension.
	Shape []int64 `json:"shape"`
}
