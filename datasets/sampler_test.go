package datasets

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSampler(t *testing.T) {
	const n, batch = 10, 4
	s, err := NewSampler(n, batch, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	var stream []int
	var buf []int
	for step := 0; step < 25; step++ { // 100 indices = 10 full epochs
		buf = s.Next(buf)
		if len(buf) != batch {
			t.Fatalf("batch of %d", len(buf))
		}
		stream = append(stream, buf...)
		if want := len(stream) / n; s.Epoch() != want {
			t.Fatalf("after %d draws Epoch = %d, want %d", len(stream), s.Epoch(), want)
		}
	}
	// Every epoch (consecutive block of n draws) is a permutation, even across
	// the batches that straddle a boundary (e.g. draws 8..11).
	for e := 0; e < len(stream)/n; e++ {
		ep := slices.Clone(stream[e*n : (e+1)*n])
		slices.Sort(ep)
		for i, v := range ep {
			if v != i {
				t.Fatalf("epoch %d is not a permutation: %v", e, stream[e*n:(e+1)*n])
			}
		}
	}
	// Epochs differ (reshuffled) and the stream is reproducible.
	if slices.Equal(stream[:n], stream[n:2*n]) && slices.Equal(stream[n:2*n], stream[2*n:3*n]) {
		t.Fatal("epochs not reshuffled")
	}
	s2, _ := NewSampler(n, batch, rand.New(rand.NewPCG(1, 2)))
	var stream2 []int
	for step := 0; step < 25; step++ {
		stream2 = append(stream2, s2.Next(nil)...)
	}
	if !slices.Equal(stream, stream2) {
		t.Fatal("same seed gave different streams")
	}
	s3, _ := NewSampler(n, batch, rand.New(rand.NewPCG(3, 4)))
	if slices.Equal(s3.Next(nil), stream[:batch]) && slices.Equal(s3.Next(nil), stream[batch:2*batch]) {
		t.Fatal("different seeds gave the same batches")
	}
	// batch == n: one epoch per call.
	s4, _ := NewSampler(3, 3, rand.New(rand.NewPCG(5, 6)))
	s4.Next(nil)
	s4.Next(nil)
	if s4.Epoch() != 2 {
		t.Fatalf("Epoch %d", s4.Epoch())
	}
	for _, c := range [][2]int{{0, 1}, {5, 0}, {5, 6}, {-1, 1}} {
		if _, err := NewSampler(c[0], c[1], rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Fatalf("NewSampler(%d, %d) accepted", c[0], c[1])
		}
	}
	if _, err := NewSampler(5, 2, nil); err == nil {
		t.Fatal("nil rng accepted")
	}
}

func TestGatherRows(t *testing.T) {
	src := mat.NewDense(4, 2, []float64{0, 1, 10, 11, 20, 21, 30, 31})
	dst := mat.NewDense(3, 2, nil)
	idx := []int{3, 0, 3}
	allocs := testing.AllocsPerRun(100, func() { GatherRows(dst, src, idx) })
	if allocs != 0 {
		t.Fatalf("GatherRows allocates %v", allocs)
	}
	if !mat.Equal(dst, mat.NewDense(3, 2, []float64{30, 31, 0, 1, 30, 31})) {
		t.Fatalf("got %v", dst)
	}
	if err := CheckGather(mat.NewDense(2, 2, nil), src, idx); err == nil {
		t.Fatal("bad dst accepted")
	}
	if err := CheckGather(dst, src, []int{0, 1, 4}); err == nil {
		t.Fatal("bad index accepted")
	}
}

func TestSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	train, test, err := RandomSplit(100, 0.2, rng)
	if err != nil || len(test) != 20 {
		t.Fatalf("%d %v", len(test), err)
	}
	checkPartition(t, 100, train, test)
	tr2, te2, _ := RandomSplit(100, 0.2, rand.New(rand.NewPCG(7, 8)))
	if !slices.Equal(train, tr2) || !slices.Equal(test, te2) {
		t.Fatal("RandomSplit not deterministic")
	}
	if _, _, err := RandomSplit(2, 0.01, rng); err != nil {
		t.Fatal(err) // clamped to one test point
	}
	folds, err := KFold(23, 5, rng)
	if err != nil {
		t.Fatal(err)
	}
	count := make([]int, 23)
	for _, f := range folds {
		if len(f) < 4 || len(f) > 5 {
			t.Fatalf("fold size %d", len(f))
		}
		for _, i := range f {
			count[i]++
		}
		tr, err := Complement(23, f)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, 23, tr, f)
	}
	for i, c := range count {
		if c != 1 {
			t.Fatalf("row %d in %d folds", i, c)
		}
	}
	for _, bad := range []func() error{
		func() error { _, _, err := RandomSplit(1, 0.5, rng); return err },
		func() error { _, _, err := RandomSplit(10, 1, rng); return err },
		func() error { _, _, err := RandomSplit(10, 0.5, nil); return err },
		func() error { _, err := KFold(3, 4, rng); return err },
		func() error { _, err := KFold(3, 1, rng); return err },
		func() error { _, err := Complement(0, nil); return err },
	} {
		if err := bad(); err == nil || !hasSentinel(err) {
			t.Fatalf("bad argument: %v", err)
		}
	}
}

func TestSubsetAndDefaultDir(t *testing.T) {
	d, err := Embedded("airfoil")
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Subset([]int{5, 5, 0})
	if err != nil {
		t.Fatal(err)
	}
	if s.N() != 3 || s.X.At(0, 2) != d.X.At(5, 2) || s.Y.At(2, 0) != d.Y.At(0, 0) {
		t.Fatal("Subset copied wrong rows")
	}
	s.X.Set(0, 0, 1e9)
	if d.X.At(5, 0) == 1e9 {
		t.Fatal("Subset aliases its source")
	}
	t.Setenv(EnvDataDir, "/some/where")
	if DefaultDir() != "/some/where" {
		t.Fatal("DefaultDir ignores $GPZOO_DATA")
	}
	t.Setenv(EnvDataDir, "")
	if DefaultDir() != "" {
		t.Fatal("DefaultDir not empty")
	}
}

// TestSamplerStateResume saves a sampler's state (and its PCG's) mid-stream, at an epoch boundary, and checks
// that a fresh sampler restored from them yields exactly the batches of the uninterrupted one.
func TestSamplerStateResume(t *testing.T) {
	const n, batch = 10, 4
	for _, k := range []int{0, 1, 3, 5, 7} { // k=5: pos == n exactly (20 draws), the next draw reshuffles
		src := rand.NewPCG(9, 9)
		s, err := NewSampler(n, batch, rand.New(src))
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for step := 0; step < 12; step++ {
			want = append(want, s.Next(nil)...)
		}
		src2 := rand.NewPCG(9, 9)
		s2, _ := NewSampler(n, batch, rand.New(src2))
		var got []int
		for step := 0; step < k; step++ {
			got = append(got, s2.Next(nil)...)
		}
		st := s2.State()
		rs, err := src2.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		s2.Next(nil) // disturb the saved sampler: State must be a copy
		src3 := rand.NewPCG(1, 1)
		s3, _ := NewSampler(n, batch, rand.New(src3))
		if err := src3.UnmarshalBinary(rs); err != nil {
			t.Fatal(err)
		}
		if err := s3.SetState(st); err != nil {
			t.Fatal(err)
		}
		if s3.Epoch() != k*batch/n {
			t.Errorf("k=%d: restored Epoch %d, want %d", k, s3.Epoch(), k*batch/n)
		}
		for step := k; step < 12; step++ {
			got = append(got, s3.Next(nil)...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d: resumed stream %v, want %v", k, got, want)
		}
	}
}

func TestSamplerSetStateErrors(t *testing.T) {
	s, _ := NewSampler(4, 2, rand.New(rand.NewPCG(1, 1)))
	before := s.State()
	for name, st := range map[string]SamplerState{
		"short":    {Perm: []int{0, 1, 2}},
		"repeat":   {Perm: []int{0, 1, 1, 3}},
		"range":    {Perm: []int{0, 1, 2, 4}},
		"pos":      {Perm: []int{0, 1, 2, 3}, Pos: 5},
		"negPos":   {Perm: []int{0, 1, 2, 3}, Pos: -1},
		"negEpoch": {Perm: []int{0, 1, 2, 3}, Epoch: -1},
		"nilPerm":  {},
	} {
		if err := s.SetState(st); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if after := s.State(); !slices.Equal(after.Perm, before.Perm) || after.Pos != before.Pos || after.Epoch != before.Epoch {
		t.Errorf("failed SetState changed the sampler: %+v, was %+v", after, before)
	}
}
