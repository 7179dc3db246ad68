package grammar

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// maxEnumerateLevel bounds Enumerate: the number of expressions grows about sixfold per level (35222 up to level 6).
const maxEnumerateLevel = 6

// Enumerate returns every kernel expression of level at most level (1 ≤ level ≤ 6) generated from the four
// base kernels by the grammar rules of Duvenaud et al. (2013) as used for K_144 by Teng et al. (2020,
// Sec. 6.1): level 1 is the base kernels, and level L+1 applies S → S + B and S → S × B to every expression S of
// level L and every base kernel B. Expressions are distinct modulo commutativity and associativity (deduplicated
// by canonical string) and ordered by level, then by canonical string (so level 1 is LIN, PER, RQ, SE); the
// result is deterministic. The counts are 4 at level 1, 20 at level 2 and 120 at level 3 (144 in all). It fails
// for a level outside [1, 6].
func Enumerate(level int) ([]*Expr, error) {
	if level < 1 || level > maxEnumerateLevel {
		return nil, fmt.Errorf("grammar: Enumerate: level must be in [1, %d], got %d", maxEnumerateLevel, level)
	}
	bases := make([]*Expr, numBases)
	for b := range Base(numBases) {
		bases[b] = NewBase(b)
	}
	byString := func(a, b *Expr) int { return strings.Compare(a.String(), b.String()) }
	cur := slices.SortedFunc(slices.Values(bases), byString) // LIN, PER, RQ, SE
	out := slices.Clone(cur)
	for range level - 1 {
		seen := map[string]*Expr{}
		for _, s := range cur {
			for _, b := range bases {
				for _, e := range []*Expr{newNode(Add, flatten(Add, s, b)), newNode(Mul, flatten(Mul, s, b))} {
					seen[e.String()] = e
				}
			}
		}
		next := make([]*Expr, 0, len(seen))
		for _, e := range seen {
			next = append(next, e)
		}
		slices.SortFunc(next, byString)
		out = append(out, next...)
		cur = next
	}
	return out, nil
}

// flatten returns the operands of the op-combination of a and b (well-formed expressions), splicing in the
// operands of those with the same op.
func flatten(op Op, a, b *Expr) []*Expr {
	var flat []*Expr
	for _, t := range []*Expr{a, b} {
		if t.op == op {
			flat = append(flat, t.terms...)
		} else {
			flat = append(flat, t)
		}
	}
	return flat
}

var k144 = sync.OnceValue(func() []*Expr {
	es, err := Enumerate(3)
	if err != nil { // unreachable: 3 is a valid level
		panic(err)
	}
	return es
})

// K144 returns the kernel space K_144 of Teng et al. (2020, Sec. 6.1): every expression of level at most 3,
// i.e. Enumerate(3) (4 base kernels, 20 of level 2, 120 of level 3). The slice is a fresh copy.
func K144() []*Expr { return slices.Clone(k144()) }

// k12Strings is Table 1 of Teng et al. (2020, App. E.1), k1..k12, with × written *. Each is in canonical form.
var k12Strings = [12]string{
	"LIN+RQ",
	"LIN*RQ+LIN",
	"LIN*RQ+PER",
	"PER+RQ+SE",
	"PER+LIN+RQ",
	"PER+PER+SE",
	"PER*SE+SE",
	"PER*RQ+SE",
	"PER*LIN+SE",
	"PER*LIN*SE",
	"PER*LIN*RQ",
	"(PER+RQ)*LIN",
}

var k12 = sync.OnceValue(func() []*Expr {
	es := make([]*Expr, len(k12Strings))
	for i, s := range k12Strings {
		e, err := Parse(s)
		if err != nil { // unreachable: the table is tested
			panic(err)
		}
		es[i] = e
	}
	return es
})

// K12 returns the kernel set K_12 of Teng et al. (2020, Sec. 6.1 and App. E.1, Table 1) in the order k1..k12:
// ten kernels sampled from K_144 and the two true kernels of the synthetic experiments, k11 = PER×LIN×RQ and
// k12 = (PER+RQ)×LIN. The slice is a fresh copy.
func K12() []*Expr { return slices.Clone(k12()) }
