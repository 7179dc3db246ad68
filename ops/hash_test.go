package ops_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// variant builds one op over the shared operands a and b (both [n,n] matrices of one graph; a variant may ignore b or
// add further named inputs to a.Graph()).
type variant func(a, b *G.Node) (*G.Node, error)

// checkHashes builds every variant over the same input nodes of one graph and asserts that
//
//  1. distinct variants yield distinct nodes with distinct node and op Hashcodes, so gorgonia's node merging
//     (ExprGraph.AddNode returns an existing node whose hash, op hash and children are equal) cannot confuse them;
//  2. building a variant a second time returns the very same (merged) node, with the same hash;
//  3. each pair in same (names of variants that are equivalent by construction, e.g. a default-valued parameter
//     given explicitly) is merged into one node.
//
// Why it catches an omission: the node hash is hash(type, shape, op.WriteHash, children hashes). Variants built over
// the same [n,n] operands have equal types, shapes and children, so the op's WriteHash — fusedOp writes the kernel's
// name and params — is the only thing that tells them apart. If, say, triSolve.params forgot to write trans, then
// TriSolve(a, b, false, true) would hash like TriSolve(a, b, false, false): AddNode would hand back the first node,
// the "trans" variant would silently compute the untransposed solve, and check (1) fails with "same node".
// Likewise for matMul without tB, or cholesky without MaxTries (JitterPolicy{MaxTries: 2} would merge with the
// default and silently retry 6 times). All operands are square so that no variant differs by its output shape only
// (a shape difference would hide a missing parameter).
func checkHashes(t *testing.T, n int, variants map[string]variant, same ...[2]string) {
	t.Helper()
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(n, n), G.WithName("hash.a"))
	b := G.NewMatrix(g, tensor.Float64, G.WithShape(n, n), G.WithName("hash.b"))
	names := make([]string, 0, len(variants))
	for name := range variants {
		names = append(names, name)
	}
	sort.Strings(names)
	equiv := map[[2]string]bool{}
	for _, p := range same {
		equiv[p], equiv[[2]string{p[1], p[0]}] = true, true
	}
	nodes := make(map[string]*G.Node, len(names))
	for _, name := range names {
		x, err := variants[name](a, b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nodes[name] = x
	}
	for i, ni := range names {
		for _, nj := range names[i+1:] {
			x, y := nodes[ni], nodes[nj]
			if equiv[[2]string{ni, nj}] {
				if x != y {
					t.Errorf("%s and %s are equivalent but were not merged (hash %x vs %x)", ni, nj, x.Hashcode(), y.Hashcode())
				}
				continue
			}
			if x == y {
				t.Errorf("%s and %s: same node %v (merged by gorgonia)", ni, nj, x)
				continue
			}
			if x.Hashcode() == y.Hashcode() {
				t.Errorf("%s and %s: equal node hash %x", ni, nj, x.Hashcode())
			}
			if x.Op() != nil && y.Op() != nil && x.Op().Hashcode() == y.Op().Hashcode() && sameChildren(x, y) {
				t.Errorf("%s and %s: equal op hash %x over the same children", ni, nj, x.Op().Hashcode())
			}
		}
	}
	for _, name := range names {
		x, err := variants[name](a, b)
		if err != nil {
			t.Fatalf("%s (again): %v", name, err)
		}
		if x != nodes[name] || x.Hashcode() != nodes[name].Hashcode() {
			t.Errorf("%s built twice: got a new node %p (hash %x), want the merged %p (hash %x)", name, x, x.Hashcode(), nodes[name], nodes[name].Hashcode())
		}
	}
}

func sameChildren(x, y *G.Node) bool {
	ids := func(n *G.Node) []int64 {
		var out []int64
		for it := n.Graph().From(n.ID()); it.Next(); {
			out = append(out, it.Node().ID())
		}
		return out
	}
	return slices.Equal(ids(x), ids(y))
}

func TestHashTriSolve(t *testing.T) {
	t.Parallel()
	checkHashes(t, 3, map[string]variant{
		"lower":       func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, false, false) },
		"lower,trans": func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, false, true) },
		"upper":       func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, true, false) },
		"upper,trans": func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, true, true) },
	})
}

func TestHashMatMul(t *testing.T) {
	t.Parallel()
	checkHashes(t, 3, map[string]variant{
		"ab":     func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, false, false) },
		"aTb":    func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, true, false) },
		"abT":    func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, false, true) },
		"aTbT":   func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, true, true) },
		"ba":     func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(b, a, false, false) },
		"aa(Tb)": func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, a, true, false) },
	})
}

func TestHashCholesky(t *testing.T) {
	t.Parallel()
	var s1, s2 ops.CholeskyStats
	chol := func(p ops.JitterPolicy) variant {
		return func(a, _ *G.Node) (*G.Node, error) { return ops.Cholesky(a, p) }
	}
	checkHashes(t, 3, map[string]variant{
		"default":          chol(ops.JitterPolicy{}),
		"default,explicit": chol(ops.JitterPolicy{Initial: ops.DefaultJitter, MaxTries: ops.DefaultMaxJitterTries}),
		"initial=1e-6":     chol(ops.JitterPolicy{Initial: 1e-6}),
		"initial=1e-4":     chol(ops.JitterPolicy{Initial: 1e-4}),
		"maxTries=2":       chol(ops.JitterPolicy{MaxTries: 2}),
		"maxTries=-1":      chol(ops.JitterPolicy{MaxTries: -1}),
		"both":             chol(ops.JitterPolicy{Initial: 1e-6, MaxTries: 2}),
		"stats1":           chol(ops.JitterPolicy{Stats: &s1}),
		"stats2":           chol(ops.JitterPolicy{Stats: &s2}),
		"of b":             func(_, b *G.Node) (*G.Node, error) { return ops.Cholesky(b, ops.JitterPolicy{}) },
	}, [2]string{"default", "default,explicit"})
}

// TestHashLinalgOps puts every op of this file set over the same operands in one graph: no two may merge.
func TestHashLinalgOps(t *testing.T) {
	t.Parallel()
	checkHashes(t, 3, map[string]variant{
		"Cholesky":    func(a, _ *G.Node) (*G.Node, error) { return ops.Cholesky(a, ops.JitterPolicy{}) },
		"TriSolve":    func(a, b *G.Node) (*G.Node, error) { return ops.TriSolve(a, b, false, false) },
		"CholSolve":   func(a, b *G.Node) (*G.Node, error) { return ops.CholSolve(a, b) },
		"CholSolveBA": func(a, b *G.Node) (*G.Node, error) { return ops.CholSolve(b, a) },
		"MatMul":      func(a, b *G.Node) (*G.Node, error) { return ops.MatMul(a, b, false, false) },
		"LogDetChol":  func(a, _ *G.Node) (*G.Node, error) { return ops.LogDetChol(a) },
		"LogDetCholB": func(_, b *G.Node) (*G.Node, error) { return ops.LogDetChol(b) },
		"WhitenedKL":  func(a, b *G.Node) (*G.Node, error) { return ops.WhitenedKL(a, b, b, b) },
		"WhitenedKLa": func(a, b *G.Node) (*G.Node, error) { return ops.WhitenedKL(b, a, a, a) },
		"DiagPart":    func(a, _ *G.Node) (*G.Node, error) { return ops.DiagPart(a) },
		"AddDiag(scalar)": func(a, _ *G.Node) (*G.Node, error) {
			return ops.AddDiag(a, G.NewScalar(a.Graph(), tensor.Float64, G.WithName("hash.s")))
		},
		"AddDiag(vector)": func(a, _ *G.Node) (*G.Node, error) {
			return ops.AddDiag(a, G.NewVector(a.Graph(), tensor.Float64, G.WithShape(3), G.WithName("hash.d")))
		},
		"AddDiag(diag a)": func(a, _ *G.Node) (*G.Node, error) {
			d, err := ops.DiagPart(a)
			if err != nil {
				return nil, err
			}
			return ops.AddDiag(a, d)
		},
	})
}
