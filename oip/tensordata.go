package oip

import (
	"net/http"
	"strconv"
)

// tensorData is a tensor's data decoded from JSON: the elements in row-major order and the dimensions of the
// nesting ([len] for a flat array).
type tensorData struct {
	values []float64
	dims   []int64
}

// parseTensorData reads raw, a JSON array of numbers, flat or nested as a regular (rectangular) array of at most
// max(ndims, 1) levels holding at most budget numbers. Errors are *Error (400, or 413 beyond the budget).
func parseTensorData(raw []byte, ndims, budget int) (*tensorData, error) {
	p := &tensorParser{buf: raw, maxDepth: max(ndims, 1), budget: budget, leafDepth: -1, values: []float64{}}
	p.skipSpace()
	if p.pos >= len(p.buf) || p.buf[p.pos] != '[' {
		return nil, BadRequest(`"data" must be an array of numbers`)
	}
	if err := p.array(0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.buf) {
		return nil, BadRequest(`"data": unexpected %q after the array`, p.buf[p.pos])
	}
	depth := len(p.lens)
	if p.leafDepth >= 0 && p.leafDepth != depth {
		return nil, BadRequest(`"data" is not a regular array: numbers at depth %d and arrays below it`, p.leafDepth)
	}
	return &tensorData{values: p.values, dims: p.lens}, nil
}

type tensorParser struct {
	buf      []byte
	pos      int
	maxDepth int
	budget   int
	values   []float64
	// lens[k] is the length of every array at depth k+1 (the outermost array is depth 1; -1 until one is
	// closed, arrays closing innermost first): the data are regular when all arrays at one depth have the same
	// length.
	lens []int64
	// leafDepth is the depth of the arrays holding numbers (-1: none seen yet).
	leafDepth int
}

func (p *tensorParser) skipSpace() {
	for p.pos < len(p.buf) {
		switch p.buf[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// array reads the array at p.pos, at the given depth (0: outermost).
func (p *tensorParser) array(depth int) error {
	if depth >= p.maxDepth {
		return BadRequest(`"data" is nested deeper than the shape's %d dimensions`, p.maxDepth)
	}
	p.pos++ // '['
	n := int64(0)
	numbers, arrays := false, false
	for {
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return BadRequest(`"data" ends inside an array`)
		}
		c := p.buf[p.pos]
		if c == ']' && n == 0 {
			p.pos++
			break
		}
		switch {
		case c == '[':
			if numbers {
				return BadRequest(`"data" is not a regular array: numbers and arrays mixed at depth %d`, depth+1)
			}
			arrays = true
			if err := p.array(depth + 1); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if arrays {
				return BadRequest(`"data" is not a regular array: numbers and arrays mixed at depth %d`, depth+1)
			}
			if p.leafDepth >= 0 && p.leafDepth != depth+1 {
				return BadRequest(`"data" is not a regular array: numbers at depths %d and %d`, p.leafDepth, depth+1)
			}
			p.leafDepth = depth + 1
			numbers = true
			if err := p.number(); err != nil {
				return err
			}
		default:
			return BadRequest(`"data": element %d is %s: tensor data are numbers (or arrays of numbers)`, len(p.values), p.token())
		}
		n++
		p.skipSpace()
		if p.pos >= len(p.buf) {
			return BadRequest(`"data" ends inside an array`)
		}
		if p.buf[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.buf[p.pos] == ']' {
			p.pos++
			break
		}
		return BadRequest(`"data": expected ',' or ']', found %s`, p.token())
	}
	if arrays && p.leafDepth >= 0 && p.leafDepth <= depth+1 {
		return BadRequest(`"data" is not a regular array: numbers at depth %d and arrays below it`, p.leafDepth)
	}
	for len(p.lens) <= depth {
		p.lens = append(p.lens, -1)
	}
	switch p.lens[depth] {
	case -1:
		p.lens[depth] = n
	case n:
	default:
		return BadRequest(`"data" is not a regular array: arrays of %d and %d elements at depth %d`, p.lens[depth], n, depth+1)
	}
	return nil
}

// number reads a JSON number at p.pos (strictly: an optional minus, an integer part without leading zeros,
// an optional fraction and exponent).
func (p *tensorParser) number() error {
	start := p.pos
	b := p.buf
	i := p.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		k := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			k++
		}
		return k
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return p.badNumber(start, i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return p.badNumber(start, i)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return p.badNumber(start, i)
		}
	}
	v, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return p.badNumber(start, i)
		}
		// Out of range: v is ±Inf (overflow) or ±0 (underflow), as documented; callers check finiteness.
	}
	if len(p.values) >= p.budget {
		return Errorf(http.StatusRequestEntityTooLarge, `"data": more than the %d elements the request may hold`, p.budget)
	}
	p.values = append(p.values, v)
	p.pos = i
	return nil
}

func (p *tensorParser) badNumber(start, end int) error {
	end = min(max(end+1, start+1), len(p.buf))
	return BadRequest(`"data": element %d: %q is not a JSON number`, len(p.values), truncate(string(p.buf[start:end]), 32))
}

// token describes the JSON value at p.pos for an error message.
func (p *tensorParser) token() string {
	if p.pos >= len(p.buf) {
		return "the end of the data"
	}
	switch c := p.buf[p.pos]; c {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	default:
		return strconv.Quote(string(c))
	}
}
