package oip

import (
	"encoding/binary"
	"maps"
	"math"
	"net/http"
	"slices"

	"github.com/gpzoo/gpzoo/oip/pb"
)

// The tensor contents of the gRPC messages: read from raw little-endian bytes or the typed field of the
// tensor's datatype into float64 values, and written into the typed field.

// wireData is one tensor's contents as a gRPC message carries them: raw bytes, or the typed contents message.
type wireData struct {
	typed *pb.InferTensorContents
	raw   []byte
	isRaw bool
}

// rawSize is the size in bytes of one element of each numeric datatype in raw contents.
var rawSize = map[string]int{
	UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, UINT32: 4, INT32: 4, FP32: 4, UINT64: 8, INT64: 8, FP64: 8,
}

// typedField names the field of InferTensorContents that holds each numeric datatype's elements.
var typedField = map[string]string{
	UINT8: "uint_contents", UINT16: "uint_contents", UINT32: "uint_contents", UINT64: "uint64_contents",
	INT8: "int_contents", INT16: "int_contents", INT32: "int_contents", INT64: "int64_contents",
	FP32: "fp32_contents", FP64: "fp64_contents",
}

// typedCounts returns the number of elements in each field of c, by field name.
func typedCounts(c *pb.InferTensorContents) map[string]int {
	return map[string]int{
		"bool_contents":   len(c.GetBoolContents()),
		"int_contents":    len(c.GetIntContents()),
		"int64_contents":  len(c.GetInt64Contents()),
		"uint_contents":   len(c.GetUintContents()),
		"uint64_contents": len(c.GetUint64Contents()),
		"fp32_contents":   len(c.GetFp32Contents()),
		"fp64_contents":   len(c.GetFp64Contents()),
		"bytes_contents":  len(c.GetBytesContents()),
	}
}

// typedCount returns the number of elements over every field of c.
func typedCount(c *pb.InferTensorContents) int {
	n := 0
	for _, k := range typedCounts(c) {
		n += k
	}
	return n
}

// tensorFromProto checks a tensor's shape and datatype and reads its contents, which may hold at most budget
// elements (more is a 413); every other failure is bad's error.
func tensorFromProto(what string, shape []int64, dt string, data wireData, limits Limits, budget int, bad func(string, ...any) *Error) ([]int64, []float64, error) {
	if len(shape) > limits.MaxDims {
		return nil, nil, bad("%s: %d dimensions: at most %d are accepted", what, len(shape), limits.MaxDims)
	}
	for i, d := range shape {
		if d < 0 {
			return nil, nil, bad("%s: shape dimension %d is %d: dimensions are integers ≥ 0", what, i, d)
		}
	}
	shape = slices.Clone(shape)
	if shape == nil {
		shape = []int64{}
	}
	info, known := datatypes[dt]
	if !known {
		return nil, nil, bad("%s: unknown datatype %q (the protocol's are BOOL, UINT8…UINT64, INT8…INT64, FP16, FP32, FP64, BYTES)", what, truncate(dt, 32))
	}
	if !info.numeric {
		return nil, nil, bad("%s: datatype %s is not supported: numeric tensors only (FP64, FP32, integers)", what, dt)
	}
	want, overflow := product(shape)
	if overflow {
		return nil, nil, bad("%s: shape %v has too many elements", what, shape)
	}
	if want > int64(budget) {
		return nil, nil, Errorf(http.StatusRequestEntityTooLarge, "%s: shape %v has %d elements: the request may hold at most %d", what, shape, want, limits.MaxElements)
	}
	var values []float64
	var err *Error
	if data.isRaw {
		values, err = rawValues(what, shape, dt, data.raw, want, bad)
	} else {
		values, err = typedValues(what, shape, dt, data.typed, want, bad)
	}
	if err != nil {
		return nil, nil, err
	}
	if values == nil {
		values = []float64{}
	}
	for i, v := range values {
		if e := info.check(&values[i], v); e != nil {
			return nil, nil, bad("%s: element %d: %s", what, i, e.Msg)
		}
	}
	return shape, values, nil
}

// rawValues reads want little-endian elements of datatype dt from raw.
func rawValues(what string, shape []int64, dt string, raw []byte, want int64, bad func(string, ...any) *Error) ([]float64, *Error) {
	size := rawSize[dt]
	if len(raw)%size != 0 {
		return nil, bad("%s: %d bytes of raw contents are not a whole number of %s elements (%d bytes each)", what, len(raw), dt, size)
	}
	if n := int64(len(raw) / size); n != want {
		return nil, bad("%s: shape %v has %d elements, raw contents hold %d", what, shape, want, n)
	}
	values := make([]float64, want)
	le := binary.LittleEndian
	for i := range values {
		b := raw[i*size : (i+1)*size]
		switch dt {
		case FP64:
			values[i] = math.Float64frombits(le.Uint64(b))
		case FP32:
			values[i] = float64(math.Float32frombits(le.Uint32(b)))
		case INT8:
			values[i] = float64(int8(b[0]))
		case UINT8:
			values[i] = float64(b[0])
		case INT16:
			values[i] = float64(int16(le.Uint16(b)))
		case UINT16:
			values[i] = float64(le.Uint16(b))
		case INT32:
			values[i] = float64(int32(le.Uint32(b)))
		case UINT32:
			values[i] = float64(le.Uint32(b))
		case INT64:
			v := int64(le.Uint64(b))
			if v < -maxExactInt || v > maxExactInt {
				return nil, bad("%s: element %d: %d is not an integer in [-%d, %d]", what, i, v, maxExactInt, maxExactInt)
			}
			values[i] = float64(v)
		case UINT64:
			v := le.Uint64(b)
			if v > maxExactInt {
				return nil, bad("%s: element %d: %d is not an integer in [0, %d]", what, i, v, maxExactInt)
			}
			values[i] = float64(v)
		}
	}
	return values, nil
}

// typedValues reads want elements of datatype dt from the typed field of c that holds them (any other field
// holding elements is an error).
func typedValues(what string, shape []int64, dt string, c *pb.InferTensorContents, want int64, bad func(string, ...any) *Error) ([]float64, *Error) {
	field := typedField[dt]
	counts := typedCounts(c)
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if name != field && counts[name] > 0 {
			return nil, bad("%s: datatype %s takes its elements in %s, not %s (or give raw contents)", what, dt, field, name)
		}
	}
	if n := int64(counts[field]); n != want {
		if n == 0 {
			return nil, bad("%s: shape %v has %d elements, the tensor has no contents (%s or raw contents)", what, shape, want, field)
		}
		return nil, bad("%s: shape %v has %d elements, %s holds %d", what, shape, want, field, n)
	}
	switch field {
	case "fp64_contents":
		return slices.Clone(c.GetFp64Contents()), nil
	case "fp32_contents":
		return convert(c.GetFp32Contents()), nil
	case "int_contents":
		return convert(c.GetIntContents()), nil
	case "uint_contents":
		return convert(c.GetUintContents()), nil
	case "int64_contents":
		for i, v := range c.GetInt64Contents() {
			if v < -maxExactInt || v > maxExactInt {
				return nil, bad("%s: element %d: %d is not an integer in [-%d, %d]", what, i, v, maxExactInt, maxExactInt)
			}
		}
		return convert(c.GetInt64Contents()), nil
	default: // uint64_contents
		for i, v := range c.GetUint64Contents() {
			if v > maxExactInt {
				return nil, bad("%s: element %d: %d is not an integer in [0, %d]", what, i, v, maxExactInt)
			}
		}
		return convert(c.GetUint64Contents()), nil
	}
}

// contentsToProto writes a tensor's elements into the typed field of its datatype; an inconsistent tensor is a
// *Error with the given status.
func contentsToProto(what string, shape []int64, dt string, data []float64, status int) (*pb.InferTensorContents, error) {
	n, overflow := product(shape)
	for _, d := range shape {
		overflow = overflow || d < 0
	}
	if overflow || n != int64(len(data)) {
		return nil, Errorf(status, "%s: shape %v does not hold its %d elements", what, shape, len(data))
	}
	info, known := datatypes[dt]
	if !known || !info.numeric {
		return nil, Errorf(status, "%s: datatype %q: numeric tensors only (FP64, FP32, integers)", what, truncate(dt, 32))
	}
	for i, v := range data {
		if e := info.check(new(float64), v); e != nil {
			return nil, Errorf(status, "%s: element %d: %s", what, i, e.Msg)
		}
	}
	c := &pb.InferTensorContents{}
	switch typedField[dt] {
	case "fp64_contents":
		c.Fp64Contents = slices.Clone(data)
	case "fp32_contents":
		c.Fp32Contents = convertTo[float32](data)
	case "int_contents":
		c.IntContents = convertTo[int32](data)
	case "uint_contents":
		c.UintContents = convertTo[uint32](data)
	case "int64_contents":
		c.Int64Contents = convertTo[int64](data)
	default:
		c.Uint64Contents = convertTo[uint64](data)
	}
	return c, nil
}

type number interface {
	~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

func convert[T number](xs []T) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func convertTo[T number](xs []float64) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}
