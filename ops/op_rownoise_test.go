package ops_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rowNormal runs RowNormal once over the given row indices and step and returns its output [copies·B, width].
func rowNormal(t *testing.T, key ops.RowKey, width, copies int, rows []float64, step float64) ([]float64, error) {
	t.Helper()
	g := G.NewGraph()
	r := G.NewVector(g, tensor.Float64, G.WithShape(len(rows)), G.WithName("rows"),
		G.WithValue(tensor.New(tensor.WithShape(len(rows)), tensor.WithBacking(slices.Clone(rows)))))
	s := G.NewScalar(g, tensor.Float64, G.WithName("step"), G.WithValue(step))
	n, err := ops.RowNormal(r, s, key, width, copies)
	if err != nil {
		t.Fatal(err)
	}
	if want := (tensor.Shape{copies * len(rows), width}); !n.Shape().Eq(want) {
		t.Fatalf("shape %v, want %v", n.Shape(), want)
	}
	var v G.Value
	G.Read(n, &v)
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, err
	}
	return slices.Clone(v.(*tensor.Dense).Float64s()), nil
}

// chachaRow is the documented construction written out: the N(0, 1) draws of ChaCha8 keyed by
// seed | stream | step | row (little-endian uint64s).
func chachaRow(key ops.RowKey, step, row uint64, n int) []float64 {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[0:], key.Seed)
	binary.LittleEndian.PutUint64(k[8:], key.Stream)
	binary.LittleEndian.PutUint64(k[16:], step)
	binary.LittleEndian.PutUint64(k[24:], row)
	r := rand.New(rand.NewChaCha8(k))
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64()
	}
	return out
}

// rowOf returns copy c of batch position b of a RowNormal output with B rows.
func rowOf(out []float64, c, b, nb, width int) []float64 {
	return out[(c*nb+b)*width : (c*nb+b+1)*width]
}

// TestRowNormalPerRow: a row's draws depend on (seed, stream, step, row) only — the same whatever the batch's
// other rows, the row's position, the batch size (a small one-core batch and a large one split over the cores)
// — and are exactly the documented ChaCha8 stream.
func TestRowNormalPerRow(t *testing.T) {
	t.Parallel()
	key := ops.RowKey{Seed: 42, Stream: 1}
	const width, copies, step = 3, 2, 7
	perm := rand.New(rand.NewPCG(1, 2))
	batches := [][]float64{{5}, {9, 5, 0}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}
	big := make([]float64, 300) // above the parallel threshold: rows split over the cores
	for i, j := range perm.Perm(1000)[:len(big)] {
		big[i] = float64(j)
	}
	big[17], big[250] = 5, 9
	batches = append(batches, big)
	for _, rows := range batches {
		out, err := rowNormal(t, key, width, copies, rows, step)
		if err != nil {
			t.Fatal(err)
		}
		for b, r := range rows {
			want := chachaRow(key, step, uint64(r), copies*width)
			for c := range copies {
				if got := rowOf(out, c, b, len(rows), width); !slices.Equal(got, want[c*width:(c+1)*width]) {
					t.Fatalf("batch of %d, position %d (row %v), copy %d: %v, want %v", len(rows), b, r, c, got, want[c*width:(c+1)*width])
				}
			}
		}
	}
	// copies = 1 draws the first copy's numbers.
	one, err := rowNormal(t, key, width, 1, []float64{9, 5}, step)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := rowNormal(t, key, width, 2, []float64{9, 5}, step)
	if !slices.Equal(one, two[:2*width]) {
		t.Errorf("copies 1: %v, want the first copy of copies 2: %v", one, two[:2*width])
	}
}

// TestRowNormalDiffers: other rows, steps, seeds, streams and the copies of one row draw other numbers.
func TestRowNormalDiffers(t *testing.T) {
	t.Parallel()
	key := ops.RowKey{Seed: 3, Stream: 0}
	base, err := rowNormal(t, key, 4, 2, []float64{0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(rowOf(base, 0, 0, 2, 4), rowOf(base, 0, 1, 2, 4)) {
		t.Error("rows 0 and 1 drew the same numbers")
	}
	if slices.Equal(rowOf(base, 0, 0, 2, 4), rowOf(base, 1, 0, 2, 4)) {
		t.Error("two copies of row 0 drew the same numbers")
	}
	for name, c := range map[string]struct {
		key  ops.RowKey
		step float64
	}{
		"step 1":   {key, 1},
		"seed 4":   {ops.RowKey{Seed: 4}, 0},
		"stream 1": {ops.RowKey{Seed: 3, Stream: 1}, 0},
	} {
		got, err := rowNormal(t, c.key, 4, 2, []float64{0, 1}, c.step)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] == base[i] {
				t.Errorf("%s: entry %d equals the base draw %v", name, i, got[i])
			}
		}
	}
}

// TestRowNormalMoments: over many rows the draws have mean 0, variance 1 and no correlation between
// neighbouring rows or steps (tolerances of about 5 standard errors).
func TestRowNormalMoments(t *testing.T) {
	t.Parallel()
	const n, width = 4000, 5
	rows := make([]float64, n)
	for i := range rows {
		rows[i] = float64(i)
	}
	a, err := rowNormal(t, ops.RowKey{Seed: 11}, width, 1, rows, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rowNormal(t, ops.RowKey{Seed: 11}, width, 1, rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq, nb, st float64
	for i, v := range a {
		sum += v
		sq += v * v
		st += v * b[i]
		if i+width < len(a) {
			nb += v * a[i+width]
		}
	}
	m := float64(len(a))
	se := 1 / math.Sqrt(m)
	if mean := sum / m; math.Abs(mean) > 5*se {
		t.Errorf("mean %g", mean)
	}
	if v := sq / m; math.Abs(v-1) > 5*math.Sqrt2*se {
		t.Errorf("variance %g", v)
	}
	if c := nb / m; math.Abs(c) > 5*se {
		t.Errorf("correlation of neighbouring rows %g", c)
	}
	if c := st / m; math.Abs(c) > 5*se {
		t.Errorf("correlation of consecutive steps %g", c)
	}
}

// TestRowNormalBadIndices: a row index or step that is not a non-negative integer fails the run with a typed
// error (no panic); bad shapes and sizes fail the construction.
func TestRowNormalBadIndices(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		rows []float64
		step float64
	}{
		"fractional row":  {[]float64{0, 1.5}, 0},
		"negative row":    {[]float64{-1}, 0},
		"NaN row":         {[]float64{math.NaN()}, 0},
		"infinite row":    {[]float64{math.Inf(1)}, 0},
		"huge row":        {[]float64{1 << 53}, 0},
		"fractional step": {[]float64{0}, 0.5},
		"negative step":   {[]float64{0}, -2},
		"NaN step":        {[]float64{0}, math.NaN()},
	} {
		_, err := rowNormal(t, ops.RowKey{}, 2, 1, c.rows, c.step)
		err = ops.UnwrapVM(err) // as graph.Program does
		var se *ops.ShapeError
		if !errors.As(err, &se) || !errors.Is(err, ops.ErrShape) {
			t.Errorf("%s: %v, want a *ops.ShapeError", name, err)
		}
	}
	g := G.NewGraph()
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"))
	m := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 1), G.WithName("m"))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"))
	for name, build := range map[string]func() (*G.Node, error){
		"width 0":       func() (*G.Node, error) { return ops.RowNormal(v, s, ops.RowKey{}, 0, 1) },
		"copies 0":      func() (*G.Node, error) { return ops.RowNormal(v, s, ops.RowKey{}, 1, 0) },
		"rows a matrix": func() (*G.Node, error) { return ops.RowNormal(m, s, ops.RowKey{}, 1, 1) },
		"step a vector": func() (*G.Node, error) { return ops.RowNormal(v, v, ops.RowKey{}, 1, 1) },
		"nil rows":      func() (*G.Node, error) { return ops.RowNormal(nil, s, ops.RowKey{}, 1, 1) },
	} {
		var se *ops.ShapeError
		if _, err := build(); !errors.As(err, &se) {
			t.Errorf("%s: %v, want a *ops.ShapeError", name, err)
		}
	}
}

// TestRowNormalNoSharedState: the op keeps no generator between runs, so an executor may run it concurrently.
func TestRowNormalNoSharedState(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	v := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("v"))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"))
	n, err := ops.RowNormal(v, s, ops.RowKey{Seed: 1}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if k := ops.SharedState(n.Op()); k != nil {
		t.Errorf("SharedState = %v, want nil", k)
	}
}

// TestHashRowNormal: the seed, the stream and the operands enter the hash (width and copies change the output
// shape as well, and are written too); equal arguments merge into one node, which draws equal numbers anyway.
func TestHashRowNormal(t *testing.T) {
	t.Parallel()
	const n = 3
	rn := func(key ops.RowKey, useB bool) variant {
		return func(a, b *G.Node) (*G.Node, error) {
			src := a
			if useB {
				src = b
			}
			rows, err := ops.DiagPart(src)
			if err != nil {
				return nil, err
			}
			step, err := ops.Sum(a)
			if err != nil {
				return nil, err
			}
			return ops.RowNormal(rows, step, key, n, 1) // [n, n], as the operands
		}
	}
	checkHashes(t, n, map[string]variant{
		"seed 1":            rn(ops.RowKey{Seed: 1}, false),
		"seed 2":            rn(ops.RowKey{Seed: 2}, false),
		"seed 1, stream 1":  rn(ops.RowKey{Seed: 1, Stream: 1}, false),
		"seed 1, rows of b": rn(ops.RowKey{Seed: 1}, true),
		"seed 0, stream 0":  rn(ops.RowKey{}, false),
		"seed 0, stream 0'": rn(ops.RowKey{Seed: 0, Stream: 0}, false),
	}, [2]string{"seed 0, stream 0", "seed 0, stream 0'"})
}
