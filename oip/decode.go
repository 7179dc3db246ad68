package oip

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Default limits of DecodeInferRequest (a zero field of Limits takes its default).
const (
	DefaultMaxBytes    = 8 << 20
	DefaultMaxInputs   = 1024
	DefaultMaxElements = 1 << 24
	DefaultMaxDims     = 16
)

// Limits bound what DecodeInferRequest accepts; a zero field takes its default.
type Limits struct {
	// MaxBytes is the largest body read (DefaultMaxBytes); a longer one is a 413 (Request Entity Too Large).
	MaxBytes int64
	// MaxInputs is the largest number of input tensors (DefaultMaxInputs); more is a 400.
	MaxInputs int
	// MaxElements is the largest total number of tensor elements over every input (DefaultMaxElements); more
	// is a 413.
	MaxElements int
	// MaxDims is the largest number of dimensions of a tensor (DefaultMaxDims); more is a 400.
	MaxDims int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxInputs <= 0 {
		l.MaxInputs = DefaultMaxInputs
	}
	if l.MaxElements <= 0 {
		l.MaxElements = DefaultMaxElements
	}
	if l.MaxDims <= 0 {
		l.MaxDims = DefaultMaxDims
	}
	return l
}

// DecodeInferRequest reads one inference request object from r (nothing but white space may follow it) and
// checks it strictly; every failure is a *Error with a 4xx status naming what is wrong:
//
//   - the body: longer than limits.MaxBytes (413), not one JSON object (400);
//   - the object's fields, case-sensitive: id (a string), parameters (an object of strings, numbers and
//     booleans), inputs (a non-empty array, at most limits.MaxInputs), outputs (an array of {name,
//     parameters} with distinct non-empty names); any other field is refused;
//   - each input: name (a non-empty string, distinct from the other inputs'), shape (an array of at most
//     limits.MaxDims integers ≥ 0), datatype (one of the protocol's; BOOL, FP16 and BYTES are known but
//     refused: numeric tensors only), parameters, data (required);
//   - data: JSON numbers only, either flat (a one-dimensional array of as many elements as the shape's
//     product) or nested in the tensor's natural form (arrays nested exactly as the shape), row-major; the
//     elements of an integer type must be integers in its range (64-bit types: within ±2⁵³, where float64 is
//     exact), FP32's are rounded to float32; limits.MaxElements bounds the total (413).
//
// A number beyond float64's range (1e999, say) is decoded as ±Inf, as strconv.ParseFloat reads it: callers
// that need finite inputs check them (and can then name the row and feature). JSON has no NaN.
func DecodeInferRequest(r io.Reader, limits Limits) (*InferRequest, error) {
	limits = limits.withDefaults()
	body, err := io.ReadAll(io.LimitReader(r, limits.MaxBytes+1))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, Errorf(http.StatusRequestEntityTooLarge, "the request body exceeds the %d-byte limit", mb.Limit)
		}
		return nil, BadRequest("reading the request body: %v", err)
	}
	if int64(len(body)) > limits.MaxBytes {
		return nil, Errorf(http.StatusRequestEntityTooLarge, "the request body exceeds the %d-byte limit", limits.MaxBytes)
	}
	return decodeInferRequest(body, limits)
}

func decodeInferRequest(body []byte, limits Limits) (*InferRequest, error) {
	fields, err := object(body, "the request body")
	if err != nil {
		return nil, err
	}
	if err := onlyFields(fields, "the inference request", "id", "parameters", "inputs", "outputs"); err != nil {
		return nil, err
	}
	req := &InferRequest{}
	if raw, ok := present(fields, "id"); ok {
		if req.ID, err = str(raw, `"id"`); err != nil {
			return nil, err
		}
	}
	if raw, ok := present(fields, "parameters"); ok {
		if req.Parameters, err = parameters(raw, "the request's parameters"); err != nil {
			return nil, err
		}
	}
	raw, ok := present(fields, "inputs")
	if !ok {
		return nil, BadRequest(`the inference request has no "inputs"`)
	}
	var inputs []json.RawMessage
	if err := json.Unmarshal(raw, &inputs); err != nil {
		return nil, BadRequest(`"inputs" must be an array of input tensors`)
	}
	if len(inputs) == 0 {
		return nil, BadRequest(`"inputs" is empty: the request needs at least one input tensor`)
	}
	if len(inputs) > limits.MaxInputs {
		return nil, BadRequest(`%d input tensors: at most %d are accepted`, len(inputs), limits.MaxInputs)
	}
	elements := 0
	seen := make(map[string]bool, len(inputs))
	for k, raw := range inputs {
		in, err := requestInput(raw, k, limits, limits.MaxElements-elements)
		if err != nil {
			return nil, err
		}
		if seen[in.Name] {
			return nil, BadRequest("input %q is given twice", in.Name)
		}
		seen[in.Name] = true
		elements += len(in.Data)
		req.Inputs = append(req.Inputs, in)
	}
	if raw, ok := present(fields, "outputs"); ok {
		if req.Outputs, err = requestOutputs(raw); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// requestInput decodes the k-th input tensor, which may hold at most budget elements.
func requestInput(raw json.RawMessage, k int, limits Limits, budget int) (RequestInput, error) {
	var in RequestInput
	what := "input " + strconv.Itoa(k)
	fields, err := object(raw, what)
	if err != nil {
		return in, err
	}
	if err := onlyFields(fields, what, "name", "shape", "datatype", "parameters", "data"); err != nil {
		return in, err
	}
	nameRaw, ok := present(fields, "name")
	if !ok {
		return in, BadRequest(`%s has no "name"`, what)
	}
	if in.Name, err = str(nameRaw, what+`'s "name"`); err != nil {
		return in, err
	}
	if in.Name == "" {
		return in, BadRequest(`%s has an empty "name"`, what)
	}
	what = "input " + strconv.Quote(truncate(in.Name, 64))
	shapeRaw, ok := present(fields, "shape")
	if !ok {
		return in, BadRequest(`%s has no "shape"`, what)
	}
	if in.Shape, err = shape(shapeRaw, what, limits.MaxDims); err != nil {
		return in, err
	}
	dtRaw, ok := present(fields, "datatype")
	if !ok {
		return in, BadRequest(`%s has no "datatype"`, what)
	}
	if in.Datatype, err = str(dtRaw, what+`'s "datatype"`); err != nil {
		return in, err
	}
	info, known := datatypes[in.Datatype]
	if !known {
		return in, BadRequest("%s: unknown datatype %q (the protocol's are BOOL, UINT8…UINT64, INT8…INT64, FP16, FP32, FP64, BYTES)", what, truncate(in.Datatype, 32))
	}
	if !info.numeric {
		return in, BadRequest("%s: datatype %s is not supported: numeric tensors only (FP64, FP32, integers)", what, in.Datatype)
	}
	if raw, ok := present(fields, "parameters"); ok {
		if in.Parameters, err = parameters(raw, what+"'s parameters"); err != nil {
			return in, err
		}
	}
	dataRaw, ok := present(fields, "data")
	if !ok {
		return in, BadRequest(`%s has no "data"`, what)
	}
	want, overflow := product(in.Shape)
	if overflow {
		return in, BadRequest("%s: shape %v has too many elements", what, in.Shape)
	}
	if want > int64(budget) {
		return in, Errorf(http.StatusRequestEntityTooLarge, "%s: shape %v has %d elements: the request may hold at most %d", what, in.Shape, want, limits.MaxElements)
	}
	t, err := parseTensorData(dataRaw, len(in.Shape), budget)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Msg = what + ": " + e.Msg
		}
		return in, err
	}
	switch {
	case len(t.dims) == 1:
		if t.dims[0] != want {
			return in, BadRequest("%s: shape %v has %d elements, data has %d", what, in.Shape, want, t.dims[0])
		}
	case !slices.Equal(t.dims, in.Shape):
		return in, BadRequest("%s: data nested as %v, shape is %v (nest the data as the shape, or give it flat)", what, t.dims, in.Shape)
	}
	for i, v := range t.values {
		if err := info.check(&t.values[i], v); err != nil {
			return in, BadRequest("%s: element %d: %s", what, i, err.Msg)
		}
	}
	in.Data = t.values
	return in, nil
}

// check validates (and for FP32 rounds) one element of the data type.
func (d datatypeInfo) check(dst *float64, v float64) *Error {
	switch {
	case d.integer:
		if v != math.Trunc(v) || v < d.min || v > d.max {
			return BadRequest("%s is not an integer in [%.0f, %.0f]", strconv.FormatFloat(v, 'g', -1, 64), d.min, d.max)
		}
	case d.fp32:
		*dst = float64(float32(v))
	}
	return nil
}

// product returns the product of the dimensions, and whether it overflows int64.
func product(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d != 0 && n > (1<<62)/d {
			for _, e := range shape {
				if e == 0 {
					return 0, false
				}
			}
			return 0, true
		}
		n *= d
	}
	return n, false
}

func requestOutputs(raw json.RawMessage) ([]RequestOutput, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, BadRequest(`"outputs" must be an array of {"name", "parameters"} objects`)
	}
	outs := make([]RequestOutput, 0, len(list))
	seen := make(map[string]bool, len(list))
	for k, raw := range list {
		what := "requested output " + strconv.Itoa(k)
		fields, err := object(raw, what)
		if err != nil {
			return nil, err
		}
		if err := onlyFields(fields, what, "name", "parameters"); err != nil {
			return nil, err
		}
		var o RequestOutput
		nameRaw, ok := present(fields, "name")
		if !ok {
			return nil, BadRequest(`%s has no "name"`, what)
		}
		if o.Name, err = str(nameRaw, what+`'s "name"`); err != nil {
			return nil, err
		}
		if o.Name == "" {
			return nil, BadRequest(`%s has an empty "name"`, what)
		}
		if seen[o.Name] {
			return nil, BadRequest("output %q is requested twice", truncate(o.Name, 64))
		}
		seen[o.Name] = true
		if raw, ok := present(fields, "parameters"); ok {
			if o.Parameters, err = parameters(raw, what+"'s parameters"); err != nil {
				return nil, err
			}
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// object decodes raw as a JSON object.
func object(raw []byte, what string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, BadRequest("%s is not valid JSON: %v (at byte %d)", what, syn, syn.Offset)
		}
		return nil, BadRequest("%s must be a JSON object", what)
	}
	return fields, nil
}

// onlyFields refuses fields other than the given ones (JSON keys are case-sensitive in the protocol).
func onlyFields(fields map[string]json.RawMessage, what string, allowed ...string) error {
	var extra []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			extra = append(extra, strconv.Quote(truncate(k, 32)))
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return BadRequest("%s has unknown fields %s (its fields are %s)", what, strings.Join(extra, ", "), strings.Join(allowed, ", "))
	}
	return nil
}

// present returns the field and whether it is present and not null.
func present(fields map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := fields[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, false
	}
	return raw, true
}

func str(raw json.RawMessage, what string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", BadRequest("%s must be a string", what)
	}
	return s, nil
}

// shape decodes an array of at most maxDims integers ≥ 0 (written as JSON integers: 2, not 2.0 or "2").
func shape(raw json.RawMessage, what string, maxDims int) ([]int64, error) {
	var dims []json.RawMessage
	if err := json.Unmarshal(raw, &dims); err != nil {
		return nil, BadRequest(`%s: "shape" must be an array of integers`, what)
	}
	if len(dims) > maxDims {
		return nil, BadRequest("%s: %d dimensions: at most %d are accepted", what, len(dims), maxDims)
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		v, err := strconv.ParseInt(string(bytes.TrimSpace(d)), 10, 64)
		if err != nil || v < 0 {
			return nil, BadRequest(`%s: "shape" dimension %d is %s: dimensions are integers ≥ 0`, what, i, truncate(string(d), 32))
		}
		out[i] = v
	}
	return out, nil
}

// parameters decodes a $parameters object: names mapped to strings, numbers (kept as json.Number) and booleans.
func parameters(raw json.RawMessage, what string) (Parameters, error) {
	fields, err := object(raw, what)
	if err != nil {
		return nil, err
	}
	p := make(Parameters, len(fields))
	for k, v := range fields {
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return nil, BadRequest("%s: %q is not valid JSON", what, truncate(k, 32))
		}
		switch x.(type) {
		case string, bool, json.Number:
			p[k] = x
		default:
			return nil, BadRequest("%s: %q is %s: parameters are strings, numbers or booleans", what, truncate(k, 32), describe(x))
		}
	}
	return p, nil
}
