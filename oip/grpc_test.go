package oip

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/oip/pb"
	"google.golang.org/protobuf/proto"
)

func fp64Input(name string, shape []int64, data ...float64) *pb.ModelInferRequest_InferInputTensor {
	return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: FP64, Shape: shape,
		Contents: &pb.InferTensorContents{Fp64Contents: data}}
}

func rawFP64(data ...float64) []byte {
	b := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func boolParam(b bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: b}}
}

func TestInferRequestFromProtoValid(t *testing.T) {
	odd := []float64{0.1, math.MaxFloat64, -5e-324, math.Inf(1)}
	cases := []struct {
		name string
		m    *pb.ModelInferRequest
		want *InferRequest
	}{
		{"fp64 contents", &pb.ModelInferRequest{ModelName: "m", Id: "7", Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{2, 2}, odd...)}},
			&InferRequest{ID: "7", Inputs: []RequestInput{{Name: "x", Shape: []int64{2, 2}, Datatype: FP64, Data: odd}}}},
		{"raw fp64", &pb.ModelInferRequest{
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "a", Datatype: FP64, Shape: []int64{2}}, {Name: "b", Datatype: FP64, Shape: []int64{1, 1}}},
			RawInputContents: [][]byte{rawFP64(odd[:2]...), rawFP64(math.Copysign(0, -1))}},
			&InferRequest{Inputs: []RequestInput{{Name: "a", Shape: []int64{2}, Datatype: FP64, Data: odd[:2]},
				{Name: "b", Shape: []int64{1, 1}, Datatype: FP64, Data: []float64{math.Copysign(0, -1)}}}}},
		{"raw int16 and uint32", &pb.ModelInferRequest{
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "a", Datatype: INT16, Shape: []int64{2}}, {Name: "b", Datatype: UINT32, Shape: []int64{1}}},
			RawInputContents: [][]byte{{0xff, 0xff, 0x02, 0x00}, {0xff, 0xff, 0xff, 0xff}}},
			&InferRequest{Inputs: []RequestInput{{Name: "a", Shape: []int64{2}, Datatype: INT16, Data: []float64{-1, 2}},
				{Name: "b", Shape: []int64{1}, Datatype: UINT32, Data: []float64{math.MaxUint32}}}}},
		{"typed others", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "i8", Datatype: INT8, Shape: []int64{1}, Contents: &pb.InferTensorContents{IntContents: []int32{-128}}},
			{Name: "f32", Datatype: FP32, Shape: []int64{1}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{0.1}}},
			{Name: "u64", Datatype: UINT64, Shape: []int64{1}, Contents: &pb.InferTensorContents{Uint64Contents: []uint64{1 << 53}}},
			{Name: "i64", Datatype: INT64, Shape: []int64{}, Contents: &pb.InferTensorContents{Int64Contents: []int64{-3}}},
			{Name: "empty", Datatype: FP64, Shape: []int64{0, 3}},
		}},
			&InferRequest{Inputs: []RequestInput{
				{Name: "i8", Shape: []int64{1}, Datatype: INT8, Data: []float64{-128}},
				{Name: "f32", Shape: []int64{1}, Datatype: FP32, Data: []float64{float64(float32(0.1))}},
				{Name: "u64", Shape: []int64{1}, Datatype: UINT64, Data: []float64{1 << 53}},
				{Name: "i64", Shape: []int64{}, Datatype: INT64, Data: []float64{-3}},
				{Name: "empty", Shape: []int64{0, 3}, Datatype: FP64, Data: []float64{}},
			}}},
		{"parameters and outputs", &pb.ModelInferRequest{
			Parameters: map[string]*pb.InferParameter{
				"latent": boolParam(true),
				"seed":   {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: math.MaxUint64}},
				"n":      {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -2}},
				"s":      {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "v"}},
				"d":      {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: 2.5}},
			},
			Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "mean"},
				{Name: "variance", Parameters: map[string]*pb.InferParameter{"q": boolParam(false)}}}},
			&InferRequest{Parameters: Parameters{"latent": true, "seed": uint64(math.MaxUint64), "n": int64(-2), "s": "v", "d": 2.5},
				Inputs:  []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: FP64, Data: []float64{1}}},
				Outputs: []RequestOutput{{Name: "mean"}, {Name: "variance", Parameters: Parameters{"q": false}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := InferRequestFromProto(c.m)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	// NaN is kept (the caller checks finiteness and names the row).
	got, err := InferRequestFromProto(&pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, math.NaN())}})
	if err != nil || !math.IsNaN(got.Inputs[0].Data[0]) {
		t.Errorf("NaN input: %v, %v", got, err)
	}
}

func TestInferRequestFromProtoInvalid(t *testing.T) {
	x := func(ts ...*pb.ModelInferRequest_InferInputTensor) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{Inputs: ts}
	}
	typed := func(dt string, shape []int64, c *pb.InferTensorContents) *pb.ModelInferRequest {
		return x(&pb.ModelInferRequest_InferInputTensor{Name: "x", Datatype: dt, Shape: shape, Contents: c})
	}
	raw := func(dt string, shape []int64, b []byte) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: dt, Shape: shape}}, RawInputContents: [][]byte{b}}
	}
	cases := []struct {
		name   string
		m      *pb.ModelInferRequest
		status int
		msg    string
	}{
		{"nil", nil, 400, "no inference request"},
		{"no inputs", &pb.ModelInferRequest{}, 400, "no inputs"},
		{"null input", x(nil), 400, "null"},
		{"empty name", x(fp64Input("", []int64{1}, 1)), 400, "empty name"},
		{"twice", x(fp64Input("x", []int64{1}, 1), fp64Input("x", []int64{1}, 2)), 400, "twice"},
		{"unknown datatype", typed("FLOAT", []int64{1}, &pb.InferTensorContents{Fp64Contents: []float64{1}}), 400, "unknown datatype"},
		{"bytes datatype", typed(BYTES, []int64{1}, &pb.InferTensorContents{BytesContents: [][]byte{{1}}}), 400, "not supported"},
		{"bool datatype", typed(BOOL, []int64{1}, &pb.InferTensorContents{BoolContents: []bool{true}}), 400, "not supported"},
		{"negative dim", typed(FP64, []int64{-1}, nil), 400, "dimensions are integers ≥ 0"},
		{"too many dims", typed(FP64, make([]int64, 17), nil), 400, "17 dimensions"},
		{"overflow", typed(FP64, []int64{1 << 32, 1 << 32, 1 << 32}, nil), 400, "too many elements"},
		{"over element limit", typed(FP64, []int64{1 << 30}, nil), 413, "at most"},
		{"count short", typed(FP64, []int64{2, 2}, &pb.InferTensorContents{Fp64Contents: []float64{1, 2, 3}}), 400, "shape [2 2] has 4 elements, fp64_contents holds 3"},
		{"count long", typed(FP64, []int64{1}, &pb.InferTensorContents{Fp64Contents: []float64{1, 2}}), 400, "has 1 elements, fp64_contents holds 2"},
		{"no contents", typed(FP64, []int64{3}, nil), 400, "no contents"},
		{"wrong field", typed(FP64, []int64{1}, &pb.InferTensorContents{Fp32Contents: []float32{1}}), 400, "takes its elements in fp64_contents, not fp32_contents"},
		{"two fields", typed(FP64, []int64{1}, &pb.InferTensorContents{Fp64Contents: []float64{1}, Int64Contents: []int64{1}}), 400, "not int64_contents"},
		{"int8 range", typed(INT8, []int64{1}, &pb.InferTensorContents{IntContents: []int32{128}}), 400, "not an integer in [-128, 127]"},
		{"uint16 range", typed(UINT16, []int64{1}, &pb.InferTensorContents{UintContents: []uint32{1 << 16}}), 400, "not an integer in [0, 65535]"},
		{"int64 beyond 2^53", typed(INT64, []int64{1}, &pb.InferTensorContents{Int64Contents: []int64{1<<53 + 1}}), 400, "not an integer"},
		{"uint64 beyond 2^53", typed(UINT64, []int64{1}, &pb.InferTensorContents{Uint64Contents: []uint64{math.MaxUint64}}), 400, "not an integer"},
		{"raw not multiple of 8", raw(FP64, []int64{1}, make([]byte, 7)), 400, "7 bytes of raw contents are not a whole number of FP64 elements"},
		{"raw not multiple of 4", raw(INT32, []int64{1}, make([]byte, 6)), 400, "not a whole number of INT32 elements (4 bytes each)"},
		{"raw short", raw(FP64, []int64{2, 2}, rawFP64(1, 2, 3)), 400, "shape [2 2] has 4 elements, raw contents hold 3"},
		{"raw long", raw(FP64, []int64{1}, rawFP64(1, 2)), 400, "raw contents hold 2"},
		{"raw int64 beyond 2^53", raw(INT64, []int64{1}, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}), 400, "not an integer"},
		{"raw and typed", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)}, RawInputContents: [][]byte{rawFP64(1)}}, 400, "raw_input_contents is given too"},
		{"raw count", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "a", Datatype: FP64, Shape: []int64{1}}, {Name: "b", Datatype: FP64, Shape: []int64{1}}},
			RawInputContents: [][]byte{rawFP64(1)}}, 400, "1 entries for 2 inputs"},
		{"param without value", &pb.ModelInferRequest{Parameters: map[string]*pb.InferParameter{"seed": {}}, Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)}}, 400, `"seed" has no value`},
		{"param NaN", &pb.ModelInferRequest{Parameters: map[string]*pb.InferParameter{"d": {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: math.NaN()}}},
			Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)}}, 400, "finite"},
		{"output empty name", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)}, Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{}}}, 400, "empty name"},
		{"output twice", &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("x", []int64{1}, 1)},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "m"}, {Name: "m"}}}, 400, "twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := InferRequestFromProto(c.m)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %+v, %v; want a *oip.Error", got, err)
			}
			if e.Status != c.status || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("error %d %q, want %d containing %q", e.Status, e.Msg, c.status, c.msg)
			}
		})
	}
	// Limits: inputs, elements over two inputs.
	two := &pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{fp64Input("a", []int64{2}, 1, 2), fp64Input("b", []int64{2}, 1, 2)}}
	if _, err := InferRequestFromProtoLimits(two, Limits{MaxElements: 3}); statusOf(err) != 413 {
		t.Errorf("elements over the limit: %v, want 413", err)
	}
	if _, err := InferRequestFromProtoLimits(two, Limits{MaxInputs: 1}); statusOf(err) != 400 {
		t.Errorf("inputs over the limit: %v, want 400", err)
	}
	if _, err := InferRequestFromProtoLimits(two, Limits{MaxElements: 4}); err != nil {
		t.Errorf("elements at the limit: %v", err)
	}
}

func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// A request converted to gRPC, through the wire and back is the request it was (parameters read back as the
// same values by Parameters' accessors), for every numeric datatype.
func TestInferRequestProtoRoundTrip(t *testing.T) {
	req := &InferRequest{ID: "a",
		Parameters: Parameters{"latent": true, "seed": json.Number("18446744073709551615"), "samples": json.Number("50"),
			"neg": json.Number("-3"), "frac": json.Number("0.25"), "name": "s", "i": 7, "u": uint8(9), "f": float32(1.5)},
		Inputs: []RequestInput{
			{Name: "x", Shape: []int64{2, 2}, Datatype: FP64, Data: []float64{0.1, math.MaxFloat64, -5e-324, math.Copysign(0, -1)}, Parameters: Parameters{"k": "v"}},
			{Name: "f32", Shape: []int64{2}, Datatype: FP32, Data: []float64{float64(float32(0.1)), -2}},
			{Name: "i8", Shape: []int64{1}, Datatype: INT8, Data: []float64{-128}},
			{Name: "i16", Shape: []int64{1}, Datatype: INT16, Data: []float64{-32768}},
			{Name: "i32", Shape: []int64{1}, Datatype: INT32, Data: []float64{math.MinInt32}},
			{Name: "i64", Shape: []int64{1}, Datatype: INT64, Data: []float64{-(1 << 53)}},
			{Name: "u8", Shape: []int64{1}, Datatype: UINT8, Data: []float64{255}},
			{Name: "u16", Shape: []int64{1}, Datatype: UINT16, Data: []float64{65535}},
			{Name: "u32", Shape: []int64{1}, Datatype: UINT32, Data: []float64{math.MaxUint32}},
			{Name: "u64", Shape: []int64{1}, Datatype: UINT64, Data: []float64{1 << 53}},
		},
		Outputs: []RequestOutput{{Name: "mean", Parameters: Parameters{"b": false}}, {Name: "variance"}},
	}
	m, err := InferRequestToProto("model", "3", req)
	if err != nil {
		t.Fatal(err)
	}
	if m.ModelName != "model" || m.ModelVersion != "3" {
		t.Errorf("model %q version %q", m.ModelName, m.ModelVersion)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var wire pb.ModelInferRequest
	if err := proto.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	got, err := InferRequestFromProto(&wire)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Inputs, req.Inputs) || !reflect.DeepEqual(got.Outputs, req.Outputs) || got.ID != req.ID {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, req)
	}
	if math.Signbit(got.Inputs[0].Data[3]) != true {
		t.Error("-0 lost its sign")
	}
	same := func(name string) {
		t.Helper()
		switch req.Parameters[name].(type) {
		case bool:
			a, _ := got.Parameters.Bool(name)
			if a != req.Parameters[name] {
				t.Errorf("parameter %s: %v", name, a)
			}
		case string:
			a, _, _ := got.Parameters.String(name)
			if a != req.Parameters[name] {
				t.Errorf("parameter %s: %v", name, a)
			}
		default:
			a, _, errA := got.Parameters.Uint(name)
			b, _, errB := req.Parameters.Uint(name)
			c, _, errC := got.Parameters.Int(name)
			d, _, errD := req.Parameters.Int(name)
			if a != b || (errA == nil) != (errB == nil) || c != d || (errC == nil) != (errD == nil) {
				t.Errorf("parameter %s: %v %v / %v %v, want %v %v / %v %v", name, a, errA, c, errC, b, errB, d, errD)
			}
		}
	}
	for name := range req.Parameters {
		same(name)
	}
	if got.Parameters["frac"] != 0.25 || got.Parameters["f"] != 1.5 {
		t.Errorf("floating parameters %v %v", got.Parameters["frac"], got.Parameters["f"])
	}
}

func TestInferRequestToProtoInvalid(t *testing.T) {
	cases := []struct {
		name string
		req  *InferRequest
		msg  string
	}{
		{"nil", nil, "no inference request"},
		{"count", &InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{2}, Datatype: FP64, Data: []float64{1}}}}, "does not hold its 1 elements"},
		{"negative", &InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{-1, -1}, Datatype: FP64, Data: []float64{1}}}}, "does not hold"},
		{"datatype", &InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: BYTES, Data: []float64{1}}}}, "numeric tensors only"},
		{"integer", &InferRequest{Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: INT32, Data: []float64{0.5}}}}, "not an integer"},
		{"parameter type", &InferRequest{Parameters: Parameters{"p": []int{1}}, Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: FP64, Data: []float64{1}}}}, "parameters are strings"},
		{"parameter NaN", &InferRequest{Parameters: Parameters{"p": math.NaN()}, Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: FP64, Data: []float64{1}}}}, "finite"},
		{"parameter number", &InferRequest{Parameters: Parameters{"p": json.Number("x")}, Inputs: []RequestInput{{Name: "x", Shape: []int64{1}, Datatype: FP64, Data: []float64{1}}}}, "parameters are strings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := InferRequestToProto("m", "", c.req)
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("error %v, want a 400 containing %q", err, c.msg)
			}
		})
	}
}

func TestInferResponseProtoRoundTrip(t *testing.T) {
	resp := &InferResponse{ModelName: "m", ModelVersion: "abc", ID: "1", Parameters: Parameters{"seed": uint64(3)},
		Outputs: []ResponseOutput{
			{Name: "mean", Shape: []int64{3, 1}, Datatype: FP64, Data: []float64{1.5, -math.SmallestNonzeroFloat64, 1e300}},
			{Name: "label", Shape: []int64{3}, Datatype: INT64, Data: []float64{0, 2, 1}, Parameters: Parameters{"classes": int64(3)}},
		}}
	m, err := InferResponseToProto(resp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var wire pb.ModelInferResponse
	if err := proto.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	got, err := InferResponseFromProto(&wire)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, resp) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, resp)
	}
	// Raw output contents (as Triton answers) are read too.
	raw := &pb.ModelInferResponse{ModelName: "m", Outputs: []*pb.ModelInferResponse_InferOutputTensor{{Name: "mean", Datatype: FP64, Shape: []int64{2}}},
		RawOutputContents: [][]byte{rawFP64(1, 2)}}
	if got, err := InferResponseFromProto(raw); err != nil || !reflect.DeepEqual(got.Outputs[0].Data, []float64{1, 2}) {
		t.Errorf("raw outputs: %+v, %v", got, err)
	}
	// A malformed response is a 502; an inconsistent one cannot be sent (500).
	raw.RawOutputContents = [][]byte{rawFP64(1)}
	if _, err := InferResponseFromProto(raw); statusOf(err) != 502 {
		t.Errorf("short raw output: %v, want 502", err)
	}
	if _, err := InferResponseFromProto(&pb.ModelInferResponse{Parameters: map[string]*pb.InferParameter{"p": {}}}); statusOf(err) != 502 {
		t.Errorf("empty parameter: %v, want 502", err)
	}
	if _, err := InferResponseFromProto(nil); statusOf(err) != 502 {
		t.Errorf("nil: %v, want 502", err)
	}
	bad := &InferResponse{Outputs: []ResponseOutput{{Name: "mean", Shape: []int64{2}, Datatype: FP64, Data: []float64{1}}}}
	if _, err := InferResponseToProto(bad); statusOf(err) != 500 {
		t.Errorf("inconsistent output: %v, want 500", err)
	}
}

func TestMetadataProtoRoundTrip(t *testing.T) {
	md := &ModelMetadata{Name: "m", Versions: []string{"1", "2"}, Platform: "gpzoo",
		Inputs:  []TensorMetadata{{Name: "x", Datatype: FP64, Shape: []int64{-1, 3}}},
		Outputs: []TensorMetadata{{Name: "mean", Datatype: FP64, Shape: []int64{-1, 1}}, {Name: "variance", Datatype: FP64, Shape: []int64{-1, 1}}}}
	if got := ModelMetadataFromProto(ModelMetadataToProto(md)); !reflect.DeepEqual(got, md) {
		t.Errorf("model metadata: %+v, want %+v", got, md)
	}
	sm := &ServerMetadata{Name: "gpzoo", Version: "1", Extensions: []string{}}
	if got := ServerMetadataFromProto(ServerMetadataToProto(sm)); !reflect.DeepEqual(got, sm) {
		t.Errorf("server metadata: %+v, want %+v", got, sm)
	}
}
