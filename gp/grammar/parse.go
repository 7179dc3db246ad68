package grammar

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpzoo/gpzoo/gp"
)

// SyntaxError is the error of Parse and ParseList for malformed input.
type SyntaxError struct {
	// Input is the whole string that was parsed.
	Input string
	// Pos is the byte offset in Input where the problem was found.
	Pos int
	// Msg describes the problem.
	Msg string
}

// Error shows the input, the byte position and the message.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("grammar: syntax error in %q at byte %d: %s", e.Input, e.Pos, e.Msg)
}

// maxDepth bounds the nesting of parentheses, so that hostile input cannot exhaust the stack.
const maxDepth = 1000

// baseKinds are the Spec kinds of the base kernels, by Base: a registered family of one of these kinds is that
// base kernel.
var baseKinds = [numBases]string{gp.KindPeriodic, gp.KindLinear, gp.KindRationalQuadratic, gp.KindSquaredExp}

// validKernelNames lists the base-kernel names and every other registered kernel family for error messages.
func validKernelNames() string {
	names := []string{"PER", "LIN", "RQ", "SE"}
	for _, f := range gp.KernelFamilies() {
		base := false
		for _, kind := range baseKinds {
			base = base || f.Kind == kind
		}
		if !base {
			names = append(names, f.Name)
		}
		if f.Sized != nil {
			names = append(names, f.Name+"N")
		}
	}
	return strings.Join(names, ", ")
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokPlus
	tokTimes
	tokLParen
	tokRParen
	tokLBracket
	tokRBracket
	tokComma
)

type token struct {
	kind tokKind
	pos  int    // byte offset
	text string // as written
}

// describe names a token for error messages.
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", t.text)
}

type parser struct {
	in   string
	toks []token
	i    int
}

func (p *parser) errAt(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Input: p.in, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// lex splits p.in into tokens. Names are maximal runs of ASCII letters, digits and underscores.
// singleTokens are the one-byte tokens by their byte (0: not one).
var singleTokens = [256]tokKind{'+': tokPlus, '*': tokTimes, '(': tokLParen, ')': tokRParen, '[': tokLBracket, ']': tokRBracket, ',': tokComma}

func (p *parser) lex() error {
	s := p.in
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case singleTokens[c] != 0:
			p.toks = append(p.toks, token{singleTokens[c], i, string(c)})
			i++
		case isNameByte(c):
			j := i
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			p.toks = append(p.toks, token{tokName, i, s[i:j]})
			i = j
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == '×' {
				p.toks = append(p.toks, token{tokTimes, i, "×"})
				i += n
				continue
			}
			if r == utf8.RuneError && n <= 1 {
				return p.errAt(i, "invalid UTF-8 byte %#02x", c)
			}
			return p.errAt(i, "unexpected character %q (want a kernel name, '+', '*', '×', '(', ')' or input columns [i,j,…])", r)
		}
	}
	p.toks = append(p.toks, token{kind: tokEOF, pos: len(s)})
	return nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

// Parse reads a kernel expression and returns it in canonical form. Base-kernel names are case-insensitive
// (PER, LIN, RQ, SE), spaces are allowed, products are written "*" or "×", * binds tighter than +,
// parentheses group, and a kernel or a parenthesised expression followed by "[i,j,…]" acts on those input
// columns (0-based, distinct). Every failure is a *SyntaxError whose Pos is the byte offset of the problem: empty
// input, an unknown kernel name, unbalanced parentheses, an operator without an operand, trailing input after
// a complete expression, empty parentheses, an unexpected character, or nesting deeper than 1000.
func Parse(s string) (*Expr, error) {
	p := &parser{in: s}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if p.peek().kind == tokEOF {
		return nil, p.errAt(0, "empty expression")
	}
	e, err := p.sum(0)
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); t.kind {
	case tokEOF:
		return e, nil
	case tokRParen:
		return nil, p.errAt(t.pos, "unbalanced parentheses: ')' without a matching '('")
	default:
		return nil, p.errAt(t.pos, "unexpected %s after a complete expression", t.describe())
	}
}

// sum := product ('+' product)*
func (p *parser) sum(depth int) (*Expr, error) { return p.chain(depth, tokPlus, p.product, Sum) }

// product := atom (('*' | '×') atom)*
func (p *parser) product(depth int) (*Expr, error) { return p.chain(depth, tokTimes, p.atom, Product) }

// chain parses operand (op operand)* and combines two or more operands with combine.
func (p *parser) chain(depth int, op tokKind, operand func(int) (*Expr, error), combine func(...*Expr) (*Expr, error)) (*Expr, error) {
	first, err := operand(depth)
	if err != nil {
		return nil, err
	}
	terms := []*Expr{first}
	for p.peek().kind == op {
		o := p.next()
		if err := p.needOperand(o); err != nil {
			return nil, err
		}
		t, err := operand(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return first, nil
	}
	return combine(terms...)
}

// needOperand reports an operator op not followed by an operand.
func (p *parser) needOperand(op token) error {
	switch t := p.peek(); t.kind {
	case tokName, tokLParen:
		return nil
	default:
		return p.errAt(op.pos, "operator %q has no right operand (found %s)", op.text, t.describe())
	}
}

// atom := (NAME | '(' sum ')') ['[' INT (',' INT)* ']']
func (p *parser) atom(depth int) (*Expr, error) {
	start := p.peek()
	e, err := p.operand(depth)
	if err != nil || p.peek().kind != tokLBracket {
		return e, err
	}
	dims, err := p.dims()
	if err != nil {
		return nil, err
	}
	e, err = e.withDims(dims)
	if err != nil {
		return nil, p.errAt(start.pos, "%v", err)
	}
	return e, nil
}

// maxColumn bounds a column index, so that a hostile index cannot ask for a huge input.
const maxColumn = 1 << 20

// dims := '[' INT (',' INT)* ']': the input columns (0-based, distinct) a kernel acts on (gp.Active).
func (p *parser) dims() ([]int, error) {
	open := p.next() // '['
	var dims []int
	for {
		t := p.next()
		if t.kind != tokName {
			if t.kind == tokRBracket && len(dims) == 0 {
				return nil, p.errAt(open.pos, "empty column list []")
			}
			return nil, p.errAt(t.pos, "want a column index (0, 1, …) in [ ], found %s", t.describe())
		}
		d, err := strconv.Atoi(t.text)
		if err != nil || d < 0 || d > maxColumn || strings.TrimLeft(t.text, "0123456789") != "" {
			return nil, p.errAt(t.pos, "column %q is not an index 0 … %d", t.text, maxColumn)
		}
		if slices.Contains(dims, d) {
			return nil, p.errAt(t.pos, "column %d given twice", d)
		}
		dims = append(dims, d)
		switch c := p.next(); c.kind {
		case tokComma:
		case tokRBracket:
			return dims, nil
		case tokEOF:
			return nil, p.errAt(open.pos, "'[' is never closed")
		default:
			return nil, p.errAt(c.pos, "unexpected %s in a column list (want ',' or ']')", c.describe())
		}
	}
}

// operand := NAME | '(' sum ')'
func (p *parser) operand(depth int) (*Expr, error) {
	t := p.next()
	switch t.kind {
	case tokName:
		for b := range Base(numBases) {
			if strings.EqualFold(t.text, baseNames[b]) {
				return NewBase(b), nil
			}
		}
		if f, ok := gp.LookupKernel(t.text); ok {
			for b, kind := range baseKinds {
				if f.Kind == kind {
					return NewBase(Base(b)), nil // the base kernel's registered name (periodic, linear, rq, se)
				}
			}
			return newFamilyLeaf(f.Name), nil
		}
		return nil, p.errAt(t.pos, "unknown kernel %q (valid: %s)", t.text, validKernelNames())
	case tokLParen:
		if depth >= maxDepth {
			return nil, p.errAt(t.pos, "parentheses nested deeper than %d", maxDepth)
		}
		switch p.peek().kind {
		case tokRParen:
			return nil, p.errAt(t.pos, "empty parentheses")
		case tokEOF:
			return nil, p.errAt(t.pos, "unbalanced parentheses: '(' is never closed")
		}
		e, err := p.sum(depth + 1)
		if err != nil {
			return nil, err
		}
		switch c := p.next(); c.kind {
		case tokRParen:
			return e, nil
		case tokEOF:
			return nil, p.errAt(t.pos, "unbalanced parentheses: '(' is never closed")
		default:
			return nil, p.errAt(c.pos, "unexpected %s inside parentheses (want an operator or ')')", c.describe())
		}
	case tokPlus, tokTimes:
		return nil, p.errAt(t.pos, "operator %q has no left operand", t.text)
	case tokRParen:
		return nil, p.errAt(t.pos, "unbalanced parentheses: ')' without a matching '('")
	case tokLBracket, tokRBracket, tokComma:
		return nil, p.errAt(t.pos, "unexpected %q (columns follow a kernel: se[0,1])", t.text)
	default: // tokEOF: unreachable (needOperand and the '(' case look ahead), kept for safety
		return nil, p.errAt(t.pos, "unexpected end of input (want a kernel name or '(')")
	}
}

// ParseList reads a list of candidate kernels. The keywords "K12" and "K144" (any case, surrounding spaces
// allowed) give K12() and K144(); anything else is a comma-separated list of expressions, each parsed as by
// Parse. Every failure is a *SyntaxError positioned in the whole list: a malformed item, an empty item, or an
// expression listed twice after canonicalisation (e.g. "RQ+LIN,LIN+RQ"), which names both items.
func ParseList(s string) ([]*Expr, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "K12":
		return K12(), nil
	case "K144":
		return K144(), nil
	}
	var (
		out   []*Expr
		seen  = map[string]int{} // canonical string -> item index
		items []string
		start int
	)
	for i, item := range splitItems(s) {
		pos := start + leadingSpace(item)
		start += len(item) + 1
		items = append(items, strings.TrimSpace(item))
		if strings.TrimSpace(item) == "" {
			return nil, &SyntaxError{Input: s, Pos: pos, Msg: fmt.Sprintf("empty item %d in the kernel list", i+1)}
		}
		e, err := Parse(item)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				return nil, fmt.Errorf("grammar: kernel list item %d: %w", i+1, err)
			}
			return nil, &SyntaxError{Input: s, Pos: start - len(item) - 1 + se.Pos, Msg: fmt.Sprintf("item %d: %s", i+1, se.Msg)}
		}
		if j, dup := seen[e.String()]; dup {
			return nil, &SyntaxError{Input: s, Pos: pos, Msg: fmt.Sprintf("item %d %q repeats item %d %q (both are %s)", i+1, items[i], j+1, items[j], e)}
		}
		seen[e.String()] = i
		out = append(out, e)
	}
	return out, nil
}

// splitItems splits a kernel list at the commas outside brackets (a column list se[0,1] holds commas).
func splitItems(s string) []string {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	return append(items, s[start:])
}

// leadingSpace returns the number of leading space bytes of s (as skipped by the lexer).
func leadingSpace(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t\n\r"))
}
