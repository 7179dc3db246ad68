package ops_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestAddDiagGrad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 52))
	t.Run("scalar", func(t *testing.T) {
		gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.AddDiag(in[0], in[1]) },
			[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 4, 4), gradcheck.Random("d", rng, 0, 1)})
	})
	t.Run("vector", func(t *testing.T) {
		gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.AddDiag(in[0], in[1]) },
			[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 4, 4), gradcheck.Random("d", rng, 0, 1, 4)})
	})
	t.Run("n=1,vector", func(t *testing.T) {
		gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.AddDiag(in[0], in[1]) },
			[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 1, 1), gradcheck.Random("d", rng, 0, 1, 1)})
	})
}

func TestDiagPartGrad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(53, 54))
	gradcheck.Check(t, func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return ops.DiagPart(in[0]) },
		[]gradcheck.Input{gradcheck.Random("a", rng, -1, 1, 4, 4)})
}

func TestAddDiagDiagPartValues(t *testing.T) {
	t.Parallel()
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("a"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4}))))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"), G.WithValue(0.5))
	d := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("d"),
		G.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{10, 20}))))
	as, err := ops.AddDiag(a, s)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := ops.AddDiag(a, d)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := ops.DiagPart(ad)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    *G.Node
		want []float64
	}{{as, []float64{1.5, 2, 3, 4.5}}, {ad, []float64{11, 2, 3, 24}}, {dp, []float64{11, 24}}} {
		if got := c.n.Value().Data().([]float64); !slices.Equal(got, c.want) {
			t.Errorf("%v = %v, want %v", c.n, got, c.want)
		}
	}
}
