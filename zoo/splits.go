package zoo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrBadSplits is returned (wrapped) by ParseSplits for a malformed split list and by RunSplits and
// NewMultiResult for an empty one or a repeated split.
var ErrBadSplits = errors.New("zoo: bad split list")

// MaxSplits bounds the number of splits one split list may name (a typo such as "0-4000" fails fast).
const MaxSplits = 1000

// ParseSplits parses a split list: comma-separated split indices and inclusive ranges, e.g. "0-4", "0,2,5" or
// "0-2,7". The result is in the order written; a split named twice, a descending range, a negative index or
// more than MaxSplits splits is an error wrapping ErrBadSplits.
func ParseSplits(spec string) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadSplits)
	}
	var out []int
	seen := map[int]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%w %q: %q is not a split index ≥ 0 or a range A-B", ErrBadSplits, spec, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%w %q: %q is not a range A-B with 0 ≤ A ≤ B", ErrBadSplits, spec, part)
			}
		}
		if b-a >= MaxSplits || len(out)+b-a+1 > MaxSplits {
			return nil, fmt.Errorf("%w %q: more than %d splits", ErrBadSplits, spec, MaxSplits)
		}
		for k := a; k <= b; k++ {
			if seen[k] {
				return nil, fmt.Errorf("%w %q: split %d named twice", ErrBadSplits, spec, k)
			}
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

// FormatSplits writes splits compactly, the inverse of ParseSplits for a sorted list: runs of consecutive
// indices become ranges ("0-4,7"). The list is written in its order; "" for none.
func FormatSplits(splits []int) string {
	var parts []string
	for i := 0; i < len(splits); {
		j := i
		for j+1 < len(splits) && splits[j+1] == splits[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(splits[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(splits[i]), strconv.Itoa(splits[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", splits[i], splits[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// RunSplits runs e once per split in splits, in order, with the options o (o.Split is ignored; every run uses
// o.Seed), calls each (if not nil) with every result as it arrives, and returns the results with their aggregate.
//
// It returns an error wrapping ErrBadSplits for an empty list or a repeated split, refuses entries that write
// training curves (one curves file per run; run them one split at a time), and stops at the first failing split
// with an error naming it.
func RunSplits(e *Entry, o Options, splits []int, each func(*Result)) (*MultiResult, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: nil entry", ErrUnknownEntry)
	}
	if len(splits) == 0 {
		return nil, fmt.Errorf("%w: %s: no splits", ErrBadSplits, e.Name)
	}
	if d := firstDuplicate(splits); d >= 0 {
		return nil, fmt.Errorf("%w: %s: split %d named twice", ErrBadSplits, e.Name, d)
	}
	if e.WritesCurves && len(splits) > 1 {
		return nil, fmt.Errorf("zoo: %s writes training curves and has no test metrics to aggregate: run one split at a time", e.Name)
	}
	if len(splits) > 1 && (o.SaveModel != "" || o.CheckpointDir != "") {
		return nil, fmt.Errorf("zoo: %s: a model file or checkpoint directory holds one split's run: run one split at a time with --split", e.Name)
	}
	results := make([]*Result, 0, len(splits))
	for _, k := range splits {
		o.Split = k
		r, err := e.Run(o)
		if err != nil {
			return nil, fmt.Errorf("zoo: %s split %d: %w", e.Name, k, err)
		}
		if each != nil {
			each(r)
		}
		results = append(results, r)
	}
	return NewMultiResult(results)
}

// firstDuplicate returns the first split that appears twice in splits, or −1.
func firstDuplicate(splits []int) int {
	s := slices.Clone(splits)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return s[i]
		}
	}
	return -1
}
