package gp

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpzoo/gpzoo/graph"
)

// The written forms of priors and of prior rules, as `gpzoo train --prior` takes them:
//
//	prior := NAME "(" [NUMBER {"," NUMBER}] ")"        e.g. lognormal(0, 1), gamma(2,0.5), uniform(0.01,10)
//	rule  := SELECTOR "=" prior                        e.g. lengthscale=lognormal(0,1)
//
// NAME is a registered prior family (PriorFamilies), case-insensitive; NUMBER anything strconv.ParseFloat reads
// (so "nan" and "inf" parse, and the family refuses them with a *PriorError). Spaces may surround every token.
//
// A SELECTOR picks Params by name. Param names are dot-separated paths (squaredexp.lengthscales,
// k.0.per.period, layer1.se.variance, likelihood.variance, sgpr.Z): a selector is one or more dot-separated
// components, each letters, digits and underscores or a "*" that matches any one component, and it matches a
// Param whose last component matches its last one and whose earlier components contain its others in order. So
// "lengthscales" matches every length-scale, "layer1.lengthscales" those of layer 1 of a deep GP, "per.period" the
// periodic kernels' periods, and a full name its Param only. Matching ignores case. Two aliases:
// "lengthscale" is "lengthscales" and "noise" is "likelihood.variance" (the Gaussian noise variance).

// PriorSyntaxError is the error of ParsePrior and ParsePriorRule: the input, the byte offset of the problem, the
// parameter selector when the rule got that far, and the message; Err is the *PriorError of an argument the
// family refused (errors.As finds it; such an error also wraps ErrBadPrior).
type PriorSyntaxError struct {
	Input string
	Pos   int
	Param string
	Msg   string
	Err   error
}

func (e *PriorSyntaxError) Error() string {
	param := ""
	if e.Param != "" {
		param = " parameter " + e.Param + ":"
	}
	return fmt.Sprintf("gp: prior %q:%s at byte %d: %s", e.Input, param, e.Pos, e.Msg)
}

// Unwrap returns the family's *PriorError, if any.
func (e *PriorSyntaxError) Unwrap() error { return e.Err }

// PriorRule gives the prior Prior to every Param its selector matches (one `--prior SELECTOR=PRIOR`).
type PriorRule struct {
	// Selector is the selector as written.
	Selector string
	// Prior is the prior.
	Prior Prior
	path  []string // the selector's components, lower case, aliases resolved
}

// maxPriorInput bounds the length of a prior or rule ParsePrior and ParsePriorRule read.
const maxPriorInput = 4096

// ParsePrior reads a prior NAME(ARGS). Errors are *PriorSyntaxError with the byte offset of the problem: an
// unknown family, a missing or extra parenthesis, a malformed number, the wrong number of arguments, trailing
// input, or an argument the family refuses (Err: its *PriorError).
func ParsePrior(s string) (Prior, error) {
	p, err := parsePriorAt(s, s, 0, "")
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePriorRule reads SELECTOR=PRIOR. Errors are *PriorSyntaxError (ParsePrior's, and a missing "=" or a malformed
// selector), naming the selector once it has been read.
func ParsePriorRule(s string) (PriorRule, error) {
	if len(s) > maxPriorInput {
		return PriorRule{}, &PriorSyntaxError{Input: s[:64] + "…", Pos: maxPriorInput, Msg: fmt.Sprintf("longer than %d bytes", maxPriorInput)}
	}
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return PriorRule{}, &PriorSyntaxError{Input: s, Pos: len(s), Msg: `want SELECTOR=PRIOR, e.g. lengthscale=lognormal(0,1): no "="`}
	}
	sel := strings.TrimSpace(s[:eq])
	path, pos, msg := parseSelector(s[:eq])
	if msg != "" {
		return PriorRule{}, &PriorSyntaxError{Input: s, Pos: pos, Param: sel, Msg: msg}
	}
	p, err := parsePriorAt(s, s[eq+1:], eq+1, sel)
	if err != nil {
		return PriorRule{}, err
	}
	return PriorRule{Selector: sel, Prior: p, path: path}, nil
}

// priorAliases are the selectors that stand for others.
var priorAliases = map[string][]string{
	"lengthscale": {"lengthscales"},
	"noise":       {"likelihood", "variance"},
}

// parseSelector returns the components of the selector sel (lower case, aliases resolved), or the byte offset and
// message of its first problem.
func parseSelector(sel string) (path []string, pos int, msg string) {
	start := len(sel) - len(strings.TrimLeft(sel, " \t"))
	body := strings.TrimSpace(sel)
	if body == "" {
		return nil, start, "empty parameter selector before \"=\" (e.g. lengthscale, noise, layer1.variance)"
	}
	off := start
	for _, c := range strings.Split(body, ".") {
		if c == "" {
			return nil, off, "empty component in the parameter selector (two dots, or a dot at an end)"
		}
		if c != "*" {
			for i := 0; i < len(c); i++ {
				if b := c[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
					return nil, off + i, fmt.Sprintf("unexpected %q in the parameter selector (letters, digits, _, dots and * only)", b)
				}
			}
		}
		path = append(path, strings.ToLower(c))
		off += len(c) + 1
	}
	if len(path) == 1 {
		if a, ok := priorAliases[path[0]]; ok {
			path = a
		}
	}
	return path, 0, ""
}

// parsePriorAt parses the prior s, found at byte off of in (for positions), for the parameter param.
func parsePriorAt(in, s string, off int, param string) (Prior, error) {
	fail := func(pos int, err error, format string, args ...any) (Prior, error) {
		return nil, &PriorSyntaxError{Input: in, Pos: off + pos, Param: param, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	if len(s) > maxPriorInput {
		return fail(maxPriorInput, nil, "longer than %d bytes", maxPriorInput)
	}
	i := skipSpace(s, 0)
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	name := s[i:j]
	if name == "" {
		return fail(i, nil, "want a prior NAME(ARGS), e.g. lognormal(0,1) (priors: %s)", priorNames())
	}
	fam, ok := LookupPrior(name)
	if !ok {
		return fail(i, nil, "unknown prior %q (priors: %s)", name, priorNames())
	}
	k := skipSpace(s, j)
	if k >= len(s) || s[k] != '(' {
		return fail(k, nil, "want \"(\" after %s: %s", fam.Name, usage(fam))
	}
	var args []float64
	var argPos []int
	k = skipSpace(s, k+1)
	if k < len(s) && s[k] == ')' {
		k++
	} else {
		for {
			k = skipSpace(s, k)
			a := k
			for k < len(s) && s[k] != ',' && s[k] != ')' && s[k] != ' ' && s[k] != '\t' {
				k++
			}
			tok := s[a:k]
			if tok == "" {
				return fail(a, nil, "want a number: %s", usage(fam))
			}
			v, err := strconv.ParseFloat(tok, 64)
			if err != nil {
				return fail(a, nil, "%q is not a number: %s", tok, usage(fam))
			}
			args, argPos = append(args, v), append(argPos, a)
			k = skipSpace(s, k)
			if k >= len(s) {
				return fail(k, nil, "missing \")\": %s", usage(fam))
			}
			if s[k] == ')' {
				k++
				break
			}
			if s[k] != ',' {
				return fail(k, nil, "unexpected %q between arguments: %s", s[k], usage(fam))
			}
			k++
		}
	}
	if len(args) != len(fam.Args) {
		return fail(k-1, nil, "%s takes %d arguments, got %d: %s", fam.Name, len(fam.Args), len(args), usage(fam))
	}
	if t := skipSpace(s, k); t < len(s) {
		return fail(t, nil, "unexpected %q after the prior", s[t:])
	}
	p, err := fam.New(args)
	if err != nil {
		var pe *PriorError
		if errors.As(err, &pe) && pe.Index >= 0 && pe.Index < len(argPos) {
			return fail(argPos[pe.Index], err, "%s's %s must be %s, got %v (an improper or non-finite prior)", fam.Name, pe.Arg, pe.Want, pe.Value)
		}
		return fail(i, err, "%v", err)
	}
	return p, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// usage returns NAME(ARG1,ARG2,...) of a family.
func usage(f PriorFamily) string { return f.Name + "(" + strings.Join(f.Args, ",") + ")" }

func priorNames() string {
	var names []string
	for _, f := range PriorFamilies() {
		names = append(names, usage(f))
	}
	return strings.Join(names, ", ")
}

// Matches reports whether the rule's selector matches the Param name (see the package's prior_parse.go): its last
// component is name's last component, and its other components occur in order among name's others ("*" matching
// any one), ignoring case.
func (r PriorRule) Matches(name string) bool {
	if len(r.path) == 0 {
		return false
	}
	comps := strings.Split(strings.ToLower(name), ".")
	last := len(r.path) - 1
	if len(comps) < len(r.path) || !matchComp(r.path[last], comps[len(comps)-1]) {
		return false
	}
	j := 0
	for _, c := range comps[:len(comps)-1] {
		if j < last && matchComp(r.path[j], c) {
			j++
		}
	}
	return j == last
}

func matchComp(pattern, c string) bool { return pattern == "*" || pattern == c }

// UnmatchedPriorError is returned by AssignPriors for a rule whose selector matches no Param of the model: the
// selector and the model's Param names, so that the user can write one that does.
type UnmatchedPriorError struct {
	Selector string
	Names    []string
}

func (e *UnmatchedPriorError) Error() string {
	return fmt.Sprintf("gp: prior for %q: no parameter of the model matches it (its parameters: %s)", e.Selector, strings.Join(e.Names, ", "))
}

// PriorAssignment is one Param's prior after AssignPriors.
type PriorAssignment struct {
	Param string
	Prior string
}

// AssignPriors sets the priors of rules on the Params of ps they match, in order (a later rule overrides an
// earlier one on the Params both match), and returns each prior Param with its prior, in ps's order. Errors: an
// *UnmatchedPriorError for a rule that matches no Param, an error wrapping graph.ErrPriorTransform for a Param
// whose transform takes no prior (a Cholesky factor). Priors already set on ps are kept unless a rule overrides.
func AssignPriors(ps []*graph.Param, rules []PriorRule) ([]PriorAssignment, error) {
	chosen := make([]graph.Prior, len(ps))
	for i, p := range ps {
		chosen[i] = p.Prior()
	}
	for _, r := range rules {
		if r.Prior == nil {
			return nil, configErr("prior rule %q has no prior", r.Selector)
		}
		hit := false
		for i, p := range ps {
			if r.Matches(p.Name()) {
				chosen[i], hit = r.Prior, true
			}
		}
		if !hit {
			names := make([]string, len(ps))
			for i, p := range ps {
				names[i] = p.Name()
			}
			return nil, &UnmatchedPriorError{Selector: r.Selector, Names: slices.Clone(names)}
		}
	}
	before := make([]graph.Prior, len(ps))
	for i, p := range ps {
		before[i] = p.Prior()
	}
	var out []PriorAssignment
	for i, p := range ps {
		if err := p.SetPrior(chosen[i]); err != nil {
			for j, q := range ps[:i] { // leave the Params as they were
				_ = q.SetPrior(before[j])
			}
			return nil, fmt.Errorf("gp: prior %s: %w", chosen[i].Name(), err)
		}
		if chosen[i] != nil {
			out = append(out, PriorAssignment{Param: p.Name(), Prior: chosen[i].Name()})
		}
	}
	return out, nil
}
