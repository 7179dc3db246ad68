package oip

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/protobuf/proto"
)

// FuzzInferRequestFromProto: any bytes that unmarshal as a gRPC inference request convert without panicking,
// to a consistent request or a 4xx *Error; a converted request converts back and forth unchanged.
func FuzzInferRequestFromProto(f *testing.F) {
	seeds := []*pb.ModelInferRequest{
		{ModelName: "m", Id: "1", Parameters: map[string]*pb.InferParameter{"latent": boolParam(true), "seed": {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 7}}},
			Inputs:  []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{2, 2}, 1, 2, 3, 4)},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "mean"}}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "a", Datatype: FP64, Shape: []int64{2}}, {Name: "b", Datatype: INT16, Shape: []int64{1}}},
			RawInputContents: [][]byte{rawFP64(1, math.NaN()), {1, 2}}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: FP64, Shape: []int64{1}}}, RawInputContents: [][]byte{make([]byte, 7)}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: UINT64, Shape: []int64{3}, Contents: &pb.InferTensorContents{Uint64Contents: []uint64{1, 2, 1 << 60}}}}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: FP32, Shape: []int64{0, 4}, Contents: &pb.InferTensorContents{Fp64Contents: []float64{1}}}}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: BYTES, Shape: []int64{1}, Contents: &pb.InferTensorContents{BytesContents: [][]byte{{0}}}}}},
		{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: FP64, Shape: []int64{1 << 40, 1 << 40}}}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x22, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m pb.ModelInferRequest
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		limits := Limits{MaxElements: 1 << 12}
		req, err := InferRequestFromProtoLimits(&m, limits)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 || e.Msg == "" {
				t.Fatalf("error %T %v, want a 4xx *oip.Error", err, err)
			}
			return
		}
		if len(req.Inputs) == 0 {
			t.Fatal("no inputs converted")
		}
		for _, in := range req.Inputs {
			n, overflow := product(in.Shape)
			if overflow || n != int64(len(in.Data)) || !KnownDatatype(in.Datatype) || in.Name == "" {
				t.Fatalf("input %q: shape %v, %d elements, datatype %q", in.Name, in.Shape, len(in.Data), in.Datatype)
			}
		}
		back, err := InferRequestToProto(m.ModelName, m.ModelVersion, req)
		if err != nil {
			t.Fatalf("converting the converted request back: %v", err)
		}
		again, err := InferRequestFromProtoLimits(back, limits)
		if err != nil {
			t.Fatalf("converting the request again: %v", err)
		}
		if !sameRequest(again, req) {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", again, req)
		}
	})
}

// sameRequest compares requests with tensor elements compared by their bits (NaN equals NaN).
func sameRequest(a, b *InferRequest) bool {
	if len(a.Inputs) != len(b.Inputs) {
		return false
	}
	for i := range a.Inputs {
		x, y := a.Inputs[i], b.Inputs[i]
		if len(x.Data) != len(y.Data) {
			return false
		}
		for k := range x.Data {
			if math.Float64bits(x.Data[k]) != math.Float64bits(y.Data[k]) {
				return false
			}
		}
		x.Data, y.Data = nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return a.ID == b.ID && reflect.DeepEqual(a.Parameters, b.Parameters) && reflect.DeepEqual(a.Outputs, b.Outputs)
}
