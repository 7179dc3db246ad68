package oip

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/gpzoo/gpzoo/oip/pb"
)

// The parameters of the gRPC messages (InferParameter, a oneof of bool, int64, uint64, double and string)
// mapped to and from Parameters' JSON scalars.

// parametersFromProto converts gRPC parameters: bool_param → bool, int64_param → int64, uint64_param → uint64,
// double_param → float64 (finite only: JSON has no NaN or infinity), string_param → string. A parameter
// without a value is a 400. No parameters give nil.
func parametersFromProto(ps map[string]*pb.InferParameter, what string) (Parameters, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make(Parameters, len(ps))
	for _, name := range sortedNames(ps) {
		switch v := ps[name].GetParameterChoice().(type) {
		case *pb.InferParameter_BoolParam:
			out[name] = v.BoolParam
		case *pb.InferParameter_Int64Param:
			out[name] = v.Int64Param
		case *pb.InferParameter_Uint64Param:
			out[name] = v.Uint64Param
		case *pb.InferParameter_StringParam:
			out[name] = v.StringParam
		case *pb.InferParameter_DoubleParam:
			if math.IsNaN(v.DoubleParam) || math.IsInf(v.DoubleParam, 0) {
				return nil, BadRequest("%s: %q is %v: parameters are finite numbers", what, truncate(name, 32), v.DoubleParam)
			}
			out[name] = v.DoubleParam
		default:
			return nil, BadRequest("%s: %q has no value (set one of bool_param, int64_param, uint64_param, double_param, string_param)", what, truncate(name, 32))
		}
	}
	return out, nil
}

// parametersToProto converts Parameters into gRPC parameters: a bool, a string, a Go integer (int64_param, or
// uint64_param for unsigned types), a Go float (double_param), or a json.Number (int64_param when it is an
// integer in int64's range, uint64_param when in uint64's, double_param otherwise). Any other value, or a
// non-finite number, is a *Error with the given status.
func parametersToProto(p Parameters, what string, status int) (map[string]*pb.InferParameter, error) {
	if len(p) == 0 {
		return nil, nil
	}
	out := make(map[string]*pb.InferParameter, len(p))
	for name, v := range p {
		param, ok := parameterToProto(v)
		if !ok {
			return nil, Errorf(status, "%s: %q is %s: parameters are strings, booleans or finite numbers", what, truncate(name, 32), describe(v))
		}
		out[name] = param
	}
	return out, nil
}

func parameterToProto(v any) (*pb.InferParameter, bool) {
	i64 := func(x int64) (*pb.InferParameter, bool) {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: x}}, true
	}
	u64 := func(x uint64) (*pb.InferParameter, bool) {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: x}}, true
	}
	f64 := func(x float64) (*pb.InferParameter, bool) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: x}}, true
	}
	switch x := v.(type) {
	case bool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: x}}, true
	case string:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: x}}, true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i64(i)
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u64(u)
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, false
		}
		return f64(f)
	case int:
		return i64(int64(x))
	case int8:
		return i64(int64(x))
	case int16:
		return i64(int64(x))
	case int32:
		return i64(int64(x))
	case int64:
		return i64(x)
	case uint:
		return u64(uint64(x))
	case uint8:
		return u64(uint64(x))
	case uint16:
		return u64(uint64(x))
	case uint32:
		return u64(uint64(x))
	case uint64:
		return u64(x)
	case float32:
		return f64(float64(x))
	case float64:
		return f64(x)
	}
	return nil, false
}

func sortedNames(ps map[string]*pb.InferParameter) []string {
	names := make([]string, 0, len(ps))
	for k := range ps {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
