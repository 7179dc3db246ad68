package oip

// LiveResponse is the server live response object ($live_server_response).
type LiveResponse struct {
	Live bool `json:"live"`
}

// ReadyResponse is the server ready response object ($ready_server_response).
type ReadyResponse struct {
	Ready bool `json:"ready"`
}

// ModelReadyResponse is the model ready response object ($ready_model_response).
type ModelReadyResponse struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
}
