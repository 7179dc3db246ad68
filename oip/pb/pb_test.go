package pb

import (
	"encoding/binary"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestModelInferRequestRoundTrip(t *testing.T) {
	vals := []float64{1.5, -2.25, math.Pi, 0}
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(v))
	}
	req := &ModelInferRequest{
		ModelName:    "gp",
		ModelVersion: "1",
		Id:           "req-1",
		Parameters: map[string]*InferParameter{
			"samples": {ParameterChoice: &InferParameter_Int64Param{Int64Param: 3}},
		},
		Inputs: []*ModelInferRequest_InferInputTensor{
			{Name: "x_raw", Datatype: "FP64", Shape: []int64{2, 2}},
			{
				Name:     "x_typed",
				Datatype: "FP64",
				Shape:    []int64{2, 2},
				Contents: &InferTensorContents{Fp64Contents: vals},
			},
		},
		Outputs:          []*ModelInferRequest_InferRequestedOutputTensor{{Name: "mean"}},
		RawInputContents: [][]byte{raw},
	}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	got := &ModelInferRequest{}
	if err := proto.Unmarshal(b, got); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if !proto.Equal(req, got) {
		t.Fatalf("round trip differs:\n sent %v\n got  %v", req, got)
	}
	if n := len(got.GetRawInputContents()); n != 1 {
		t.Fatalf("raw_input_contents: got %d entries, want 1", n)
	}
	r := got.GetRawInputContents()[0]
	for i, v := range vals {
		if g := math.Float64frombits(binary.LittleEndian.Uint64(r[8*i:])); g != v {
			t.Errorf("raw[%d] = %v, want %v", i, g, v)
		}
	}
	fp := got.GetInputs()[1].GetContents().GetFp64Contents()
	if len(fp) != len(vals) {
		t.Fatalf("fp64_contents: got %d values, want %d", len(fp), len(vals))
	}
	for i, v := range vals {
		if fp[i] != v {
			t.Errorf("fp64_contents[%d] = %v, want %v", i, fp[i], v)
		}
	}
}

func TestServiceName(t *testing.T) {
	const want = "inference.GRPCInferenceService"
	if got := GRPCInferenceService_ServiceDesc.ServiceName; got != want {
		t.Errorf("ServiceDesc.ServiceName = %q, want %q", got, want)
	}
	sd := File_open_inference_grpc_proto.Services().ByName("GRPCInferenceService")
	if sd == nil {
		t.Fatal("GRPCInferenceService not in the file descriptor")
	}
	if got := string(sd.FullName()); got != want {
		t.Errorf("descriptor full name = %q, want %q", got, want)
	}
	if got := sd.Methods().Len(); got != 6 {
		t.Errorf("service has %d methods, want 6", got)
	}
}
