package oip

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/gpzoo/gpzoo/oip/pb"
)

// The conversions between the protocol's gRPC messages (package oip/pb) and its REST types, so that a gRPC
// transport and a gRPC client share the REST types' checks and code paths. A request from the wire
// (InferRequestFromProto) is checked as strictly as DecodeInferRequest checks a JSON body; a message built here
// (…ToProto) carries typed contents (fp64_contents for FP64), never raw bytes. Tensor contents are read by
// grpctensor.go, parameters converted by grpcparams.go.

// InferRequestFromProto converts a gRPC inference request into the REST request type, checked as
// InferRequestFromProtoLimits checks it with the default limits.
func InferRequestFromProto(m *pb.ModelInferRequest) (*InferRequest, error) {
	return InferRequestFromProtoLimits(m, Limits{})
}

// InferRequestFromProtoLimits converts a gRPC inference request into the REST request type (the model's name
// and version, which REST carries in the URL, are m's ModelName and ModelVersion). Every failure is a *Error
// with a 4xx status, as DecodeInferRequest's:
//
//   - inputs: at least one, at most limits.MaxInputs, with distinct non-empty names; shapes of at most
//     limits.MaxDims dimensions ≥ 0; one of the protocol's numeric datatypes (BOOL, FP16 and BYTES are known
//     but refused);
//   - contents: either every input's in raw_input_contents (one entry per input, little-endian, the
//     datatype's size per element: a length that is not a multiple of it is a 400) or each input's in the
//     typed field of its datatype (fp64_contents for FP64, fp32_contents for FP32, int_contents for INT8…INT32,
//     int64_contents, uint_contents for UINT8…UINT32, uint64_contents): raw and typed contents together,
//     contents in another type's field, or an element count other than the product of the shape is a 400;
//     integer elements must lie in their type's range (64-bit types: within ±2⁵³, where float64 is exact);
//     limits.MaxElements bounds the total (413);
//   - parameters: each a set InferParameter (a finite double: JSON has no NaN or infinity);
//   - requested outputs: distinct non-empty names.
//
// The message's size is the transport's to bound (limits.MaxBytes is not read). NaN and ±Inf elements of
// floating-point inputs are kept: callers that need finite inputs check them (and can then name the row and
// feature).
func InferRequestFromProtoLimits(m *pb.ModelInferRequest, limits Limits) (*InferRequest, error) {
	limits = limits.withDefaults()
	if m == nil {
		return nil, BadRequest("no inference request")
	}
	req := &InferRequest{ID: m.GetId()}
	var err error
	if req.Parameters, err = parametersFromProto(m.GetParameters(), "the request's parameters"); err != nil {
		return nil, err
	}
	inputs := m.GetInputs()
	if len(inputs) == 0 {
		return nil, BadRequest("the inference request has no inputs: it needs at least one input tensor")
	}
	if len(inputs) > limits.MaxInputs {
		return nil, BadRequest("%d input tensors: at most %d are accepted", len(inputs), limits.MaxInputs)
	}
	raw := m.GetRawInputContents()
	if len(raw) > 0 && len(raw) != len(inputs) {
		return nil, BadRequest("raw_input_contents has %d entries for %d inputs: give one per input, in the inputs' order", len(raw), len(inputs))
	}
	elements := 0
	seen := make(map[string]bool, len(inputs))
	req.Inputs = make([]RequestInput, 0, len(inputs))
	for k, t := range inputs {
		if t == nil {
			return nil, BadRequest("input %d is null", k)
		}
		in := RequestInput{Name: t.GetName(), Datatype: t.GetDatatype()}
		if in.Name == "" {
			return nil, BadRequest("input %d has an empty name", k)
		}
		what := "input " + strconv.Quote(truncate(in.Name, 64))
		if seen[in.Name] {
			return nil, BadRequest("%s is given twice", what)
		}
		seen[in.Name] = true
		if in.Parameters, err = parametersFromProto(t.GetParameters(), what+"'s parameters"); err != nil {
			return nil, err
		}
		var data wireData
		if len(raw) > 0 {
			if n := typedCount(t.GetContents()); n > 0 {
				return nil, BadRequest("%s has %d elements in contents and raw_input_contents is given too: use one or the other", what, n)
			}
			data = wireData{raw: raw[k], isRaw: true}
		} else {
			data = wireData{typed: t.GetContents()}
		}
		if in.Shape, in.Data, err = tensorFromProto(what, t.GetShape(), in.Datatype, data, limits, limits.MaxElements-elements, BadRequest); err != nil {
			return nil, err
		}
		elements += len(in.Data)
		req.Inputs = append(req.Inputs, in)
	}
	outs := m.GetOutputs()
	seenOut := make(map[string]bool, len(outs))
	for k, o := range outs {
		name := o.GetName()
		if name == "" {
			return nil, BadRequest("requested output %d has an empty name", k)
		}
		if seenOut[name] {
			return nil, BadRequest("output %q is requested twice", truncate(name, 64))
		}
		seenOut[name] = true
		p, err := parametersFromProto(o.GetParameters(), "requested output "+strconv.Quote(truncate(name, 64))+"'s parameters")
		if err != nil {
			return nil, err
		}
		req.Outputs = append(req.Outputs, RequestOutput{Name: name, Parameters: p})
	}
	return req, nil
}

// InferRequestToProto converts a REST inference request for the given model and version ("" for the server's
// choice) into a gRPC request with typed contents. A tensor whose element count is not the product of its
// shape, an unknown or non-numeric datatype, an element not representable in its datatype, or a parameter that
// is not a scalar is a *Error with status 400.
func InferRequestToProto(model, version string, r *InferRequest) (*pb.ModelInferRequest, error) {
	if r == nil {
		return nil, BadRequest("no inference request")
	}
	m := &pb.ModelInferRequest{ModelName: model, ModelVersion: version, Id: r.ID}
	var err error
	if m.Parameters, err = parametersToProto(r.Parameters, "the request's parameters", http.StatusBadRequest); err != nil {
		return nil, err
	}
	for _, in := range r.Inputs {
		what := "input " + strconv.Quote(truncate(in.Name, 64))
		c, err := contentsToProto(what, in.Shape, in.Datatype, in.Data, http.StatusBadRequest)
		if err != nil {
			return nil, err
		}
		p, err := parametersToProto(in.Parameters, what+"'s parameters", http.StatusBadRequest)
		if err != nil {
			return nil, err
		}
		m.Inputs = append(m.Inputs, &pb.ModelInferRequest_InferInputTensor{
			Name: in.Name, Datatype: in.Datatype, Shape: slices.Clone(in.Shape), Parameters: p, Contents: c})
	}
	for _, o := range r.Outputs {
		p, err := parametersToProto(o.Parameters, "requested output "+strconv.Quote(truncate(o.Name, 64))+"'s parameters", http.StatusBadRequest)
		if err != nil {
			return nil, err
		}
		m.Outputs = append(m.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name, Parameters: p})
	}
	return m, nil
}

// InferResponseToProto converts a REST inference response into a gRPC response with typed contents. An output
// whose element count is not the product of its shape, an unknown or non-numeric datatype, an element not
// representable in its datatype, or a parameter that is not a scalar (a NaN double among them) is the server's
// own failure: a *Error with status 500.
func InferResponseToProto(r *InferResponse) (*pb.ModelInferResponse, error) {
	if r == nil {
		return nil, Errorf(http.StatusInternalServerError, "no inference response")
	}
	m := &pb.ModelInferResponse{ModelName: r.ModelName, ModelVersion: r.ModelVersion, Id: r.ID}
	var err error
	if m.Parameters, err = parametersToProto(r.Parameters, "the response's parameters", http.StatusInternalServerError); err != nil {
		return nil, err
	}
	for _, o := range r.Outputs {
		what := "output " + strconv.Quote(truncate(o.Name, 64))
		c, err := contentsToProto(what, o.Shape, o.Datatype, o.Data, http.StatusInternalServerError)
		if err != nil {
			return nil, err
		}
		p, err := parametersToProto(o.Parameters, what+"'s parameters", http.StatusInternalServerError)
		if err != nil {
			return nil, err
		}
		m.Outputs = append(m.Outputs, &pb.ModelInferResponse_InferOutputTensor{
			Name: o.Name, Datatype: o.Datatype, Shape: slices.Clone(o.Shape), Parameters: p, Contents: c})
	}
	return m, nil
}

// InferResponseFromProto converts a gRPC inference response into the REST response type, reading typed
// contents or raw_output_contents (little-endian) as InferRequestFromProto reads a request's, with no limit on
// the element count. A malformed response (inconsistent sizes, a non-numeric datatype, contents in the wrong
// field, parameters without a value) is a *Error with status 502 (Bad Gateway): the server answered wrongly.
func InferResponseFromProto(m *pb.ModelInferResponse) (*InferResponse, error) {
	bad := func(format string, args ...any) *Error { return Errorf(http.StatusBadGateway, format, args...) }
	if m == nil {
		return nil, bad("no inference response")
	}
	r := &InferResponse{ModelName: m.GetModelName(), ModelVersion: m.GetModelVersion(), ID: m.GetId()}
	var err error
	if r.Parameters, err = parametersFromProto(m.GetParameters(), "the response's parameters"); err != nil {
		return nil, asStatus(err, http.StatusBadGateway)
	}
	outs := m.GetOutputs()
	raw := m.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(outs) {
		return nil, bad("raw_output_contents has %d entries for %d outputs", len(raw), len(outs))
	}
	limits := Limits{MaxDims: 1 << 10, MaxElements: int(^uint(0) >> 1)}.withDefaults()
	r.Outputs = make([]ResponseOutput, 0, len(outs))
	for k, t := range outs {
		if t == nil {
			return nil, bad("output %d is null", k)
		}
		o := ResponseOutput{Name: t.GetName(), Datatype: t.GetDatatype()}
		what := "output " + strconv.Quote(truncate(o.Name, 64))
		if o.Parameters, err = parametersFromProto(t.GetParameters(), what+"'s parameters"); err != nil {
			return nil, asStatus(err, http.StatusBadGateway)
		}
		var data wireData
		if len(raw) > 0 {
			if n := typedCount(t.GetContents()); n > 0 {
				return nil, bad("%s has %d elements in contents and raw_output_contents is given too", what, n)
			}
			data = wireData{raw: raw[k], isRaw: true}
		} else {
			data = wireData{typed: t.GetContents()}
		}
		if o.Shape, o.Data, err = tensorFromProto(what, t.GetShape(), o.Datatype, data, limits, limits.MaxElements, bad); err != nil {
			return nil, err
		}
		r.Outputs = append(r.Outputs, o)
	}
	return r, nil
}

// ModelMetadataToProto converts REST model metadata into the gRPC response.
func ModelMetadataToProto(md *ModelMetadata) *pb.ModelMetadataResponse {
	if md == nil {
		return &pb.ModelMetadataResponse{}
	}
	return &pb.ModelMetadataResponse{Name: md.Name, Versions: slices.Clone(md.Versions), Platform: md.Platform,
		Inputs: tensorMetadataToProto(md.Inputs), Outputs: tensorMetadataToProto(md.Outputs)}
}

// ModelMetadataFromProto converts a gRPC model metadata response into the REST type.
func ModelMetadataFromProto(m *pb.ModelMetadataResponse) *ModelMetadata {
	return &ModelMetadata{Name: m.GetName(), Versions: slices.Clone(m.GetVersions()), Platform: m.GetPlatform(),
		Inputs: tensorMetadataFromProto(m.GetInputs()), Outputs: tensorMetadataFromProto(m.GetOutputs())}
}

// ServerMetadataToProto converts REST server metadata into the gRPC response.
func ServerMetadataToProto(md *ServerMetadata) *pb.ServerMetadataResponse {
	if md == nil {
		return &pb.ServerMetadataResponse{}
	}
	return &pb.ServerMetadataResponse{Name: md.Name, Version: md.Version, Extensions: slices.Clone(md.Extensions)}
}

// ServerMetadataFromProto converts a gRPC server metadata response into the REST type.
func ServerMetadataFromProto(m *pb.ServerMetadataResponse) *ServerMetadata {
	ext := slices.Clone(m.GetExtensions())
	if ext == nil {
		ext = []string{}
	}
	return &ServerMetadata{Name: m.GetName(), Version: m.GetVersion(), Extensions: ext}
}

func tensorMetadataToProto(ts []TensorMetadata) []*pb.ModelMetadataResponse_TensorMetadata {
	out := make([]*pb.ModelMetadataResponse_TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: slices.Clone(t.Shape)}
	}
	return out
}

func tensorMetadataFromProto(ts []*pb.ModelMetadataResponse_TensorMetadata) []TensorMetadata {
	out := make([]TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = TensorMetadata{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: slices.Clone(t.GetShape())}
		if out[i].Shape == nil {
			out[i].Shape = []int64{}
		}
	}
	return out
}

// asStatus returns err with a *Error's status replaced.
func asStatus(err error, status int) error {
	if e, ok := err.(*Error); ok {
		return &Error{Status: status, Msg: e.Msg}
	}
	return err
}
