package zoo

import (
	"testing"

	"github.com/gpzoo/gpzoo/ops"
	"github.com/gpzoo/gpzoo/train"
)

// A CG fit's checkpointed solver state holds the warm start and the raised preconditioner rank; a checkpoint
// written before the rank (the warm start alone) still restores its warm start.
func TestWarmStartState(t *testing.T) {
	newSolver := func() *ops.CGSolver {
		s, err := ops.NewCGSolver(nopOperator{}, ops.CGConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	src := newSolver()
	src.SetWarmStart([]float64{1, 2, 3})
	src.SetRaisedRank(400)
	data, err := warmStart{src}.MarshalState(nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := newSolver()
	if err := (warmStart{dst}).UnmarshalState(nil, data); err != nil {
		t.Fatal(err)
	}
	if w := dst.WarmStart(); len(w) != 3 || w[2] != 3 || dst.RaisedRank() != 400 {
		t.Errorf("restored warm start %v and rank %d, want [1 2 3] and 400", w, dst.RaisedRank())
	}
	old, err := train.EncodeState("the CG warm start", []float64{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	dst = newSolver()
	if err := (warmStart{dst}).UnmarshalState(nil, old); err != nil {
		t.Fatalf("a checkpoint's warm start alone: %v", err)
	}
	if w := dst.WarmStart(); len(w) != 2 || w[1] != 5 || dst.RaisedRank() != 0 {
		t.Errorf("restored warm start %v and rank %d, want [4 5] and 0", w, dst.RaisedRank())
	}
	if err := (warmStart{dst}).UnmarshalState(nil, []byte("garbage")); err == nil {
		t.Error("a corrupt state was accepted")
	}
}

// nopOperator is a KernelOperator that is never asked for products.
type nopOperator struct{ ops.KernelOperator }

func (nopOperator) HyperSizes() []int { return nil }
