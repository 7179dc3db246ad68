package oip

import (
	"encoding/json"
	"math"
	"strconv"
)

// Parameters are the protocol's parameters ($parameters): names mapped to JSON scalars. Values decoded by
// DecodeInferRequest are string, bool or json.Number (so that integers beyond 2⁵³ stay exact); values set by
// programs (a gRPC transport, say) may also be any Go integer or floating-point type. The accessors below read
// a value as a given type and return a *Error with status 400 when it has another.
type Parameters map[string]any

// Bool returns the boolean parameter name (false when absent). A value that is not a boolean is an error.
func (p Parameters) Bool(name string) (bool, error) {
	v, ok := p[name]
	if !ok {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, BadRequest("parameter %q: %s, want a boolean", name, describe(v))
	}
	return b, nil
}

// Int returns the integer parameter name and whether it is present. A value that is not an integer (a number
// with a fraction, a string, a boolean) or lies beyond int64 is an error.
func (p Parameters) Int(name string) (int64, bool, error) {
	v, ok := p[name]
	if !ok {
		return 0, false, nil
	}
	bad := func() (int64, bool, error) {
		return 0, true, BadRequest("parameter %q: %s, want an integer", name, describe(v))
	}
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(x), 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
				return bad()
			}
			i = int64(f)
		}
		return i, true, nil
	case int:
		return int64(x), true, nil
	case int8:
		return int64(x), true, nil
	case int16:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case uint8:
		return int64(x), true, nil
	case uint16:
		return int64(x), true, nil
	case uint32:
		return int64(x), true, nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return bad()
		}
		return int64(x), true, nil
	case uint64:
		if x > math.MaxInt64 {
			return bad()
		}
		return int64(x), true, nil
	case float32:
		return floatInt(float64(x), bad)
	case float64:
		return floatInt(x, bad)
	}
	return bad()
}

func floatInt(f float64, bad func() (int64, bool, error)) (int64, bool, error) {
	if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return bad()
	}
	return int64(f), true, nil
}

// Uint returns the non-negative integer parameter name and whether it is present. A value that is not an
// integer in [0, 2⁶⁴) is an error.
func (p Parameters) Uint(name string) (uint64, bool, error) {
	v, ok := p[name]
	if !ok {
		return 0, false, nil
	}
	bad := func() (uint64, bool, error) {
		return 0, true, BadRequest("parameter %q: %s, want a non-negative integer", name, describe(v))
	}
	switch x := v.(type) {
	case json.Number:
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u, true, nil
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || f != math.Trunc(f) || f < 0 || f >= 1<<64 {
			return bad()
		}
		return uint64(f), true, nil
	case uint:
		return uint64(x), true, nil
	case uint8:
		return uint64(x), true, nil
	case uint16:
		return uint64(x), true, nil
	case uint32:
		return uint64(x), true, nil
	case uint64:
		return x, true, nil
	case float32, float64:
		f := toFloat(x)
		if f != math.Trunc(f) || f < 0 || f >= 1<<64 {
			return bad()
		}
		return uint64(f), true, nil
	}
	i, ok, err := p.Int(name)
	if err != nil || i < 0 {
		return bad()
	}
	return uint64(i), ok, nil
}

// String returns the string parameter name and whether it is present. A value that is not a string is an error.
func (p Parameters) String(name string) (string, bool, error) {
	v, ok := p[name]
	if !ok {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, BadRequest("parameter %q: %s, want a string", name, describe(v))
	}
	return s, true, nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// describe names a parameter value's JSON type and value for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "the string " + strconv.Quote(truncate(x, 40))
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case json.Number:
		return "the number " + truncate(string(x), 40)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "an unsupported value"
	}
	return "the value " + truncate(string(b), 40)
}

// truncate shortens s to at most n bytes (at a rune boundary) for an error message, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !runeStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
