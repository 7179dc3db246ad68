package advgp_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// −(G + H) of the weight-space reference equals the whitened SVGP ELBO of the graph; G equals ShardTerm(N)'s loss
// and H the layer's KL, all on the full batch.
func TestWeightSpaceMatchesSVGPELBO(t *testing.T) {
	p := newProblem(t, 1, 7, 2, 23, true)
	ws, err := p.m.WeightSpace(p.x, p.y)
	if err != nil {
		t.Fatal(err)
	}
	negELBO := p.program(t, p.m.SVGP.Loss)
	shard := p.shardProgram(t)
	kl := p.program(t, func(x, _ *graph.Node) *graph.Node { return p.m.Layer.KL(x.Graph()) })
	for _, prog := range []*graph.Program{negELBO, shard, kl} {
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		ref, want float64
	}{
		{"−(G+H) vs SVGP ELBO", -(ws.G + ws.H), -negELBO.Loss()},
		{"G vs ShardTerm(N) loss", ws.G, shard.Loss()},
		{"H vs layer KL", ws.H, kl.Loss()},
		{"H vs Model.H", ws.H, p.m.H()},
	} {
		e := relErr(c.ref, c.want)
		t.Logf("%s: %.15g vs %.15g, relative error %.3g", c.name, c.ref, c.want, e)
		if !(e <= 1e-8) {
			t.Errorf("%s: weight space %.15g, graph %.15g (relative error %.3g > 1e-8)", c.name, c.ref, c.want, e)
		}
	}
	if ws.H < 0.1 {
		t.Errorf("h = %g: the random q should be far from the prior", ws.H)
	}
}

// Eqs. 16–17 summed over the data equal the graph's gradients of ShardTerm(N), converted by QGrads (∂/∂U is the
// transpose of ∂/∂Uᵀ; only the upper triangle is compared, and GradU's strictly lower part must be zero).
func TestWeightSpaceGradientsMatchGraph(t *testing.T) {
	p := newProblem(t, 2, 7, 2, 23, true)
	ws, err := p.m.WeightSpace(p.x, p.y)
	if err != nil {
		t.Fatal(err)
	}
	prog := p.shardProgram(t)
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	gMu, gL, err := p.m.QGrads(prog.Grad(p.m.Mu()), prog.Grad(p.m.Sqrt()))
	if err != nil {
		t.Fatal(err)
	}
	nm := p.m.M()
	gU := make([]float64, nm*nm)
	for i := 0; i < nm; i++ {
		for j := i; j < nm; j++ {
			gU[i*nm+j] = gL[j*nm+i]
		}
		for j := 0; j < i; j++ {
			if ws.GradU[i*nm+j] != 0 {
				t.Errorf("GradU[%d,%d] = %g below the diagonal", i, j, ws.GradU[i*nm+j])
			}
		}
	}
	if e := normRelErr(ws.GradMu, gMu); !(e <= 1e-8) {
		t.Errorf("∂G/∂μ: relative error %.3g > 1e-8\nweight space %v\ngraph        %v", e, ws.GradMu, gMu)
	} else {
		t.Logf("∂G/∂μ relative error %.3g", e)
	}
	if e := normRelErr(ws.GradU, gU); !(e <= 1e-8) {
		t.Errorf("∂G/∂U: relative error %.3g > 1e-8\nweight space %v\ngraph        %v", e, ws.GradU, gU)
	} else {
		t.Logf("∂G/∂U relative error %.3g", e)
	}
}

func TestWeightSpaceValidation(t *testing.T) {
	p := newProblem(t, 4, 4, 2, 6, true)
	var se *ops.ShapeError
	for name, c := range map[string]struct{ x, y *mat.Dense }{
		"nil x":     {nil, p.y},
		"nil y":     {p.x, nil},
		"x columns": {mat.NewDense(6, 3, nil), p.y},
		"y rows":    {p.x, mat.NewDense(5, 1, nil)},
		"y columns": {p.x, mat.NewDense(6, 2, nil)},
	} {
		if _, err := p.m.WeightSpace(c.x, c.y); !errors.As(err, &se) {
			t.Errorf("%s: %v, want *ops.ShapeError", name, err)
		}
	}
	var nf *ops.NonFiniteError
	x := mat.DenseCopyOf(p.x)
	x.Set(3, 1, math.NaN())
	if _, err := p.m.WeightSpace(x, p.y); !errors.As(err, &nf) || nf.Row != 3 || nf.Col != 1 {
		t.Errorf("NaN in x[3,1]: %v, want *ops.NonFiniteError at row 3, column 1", err)
	}
	y := mat.DenseCopyOf(p.y)
	y.Set(5, 0, math.Inf(-1))
	if _, err := p.m.WeightSpace(p.x, y); !errors.As(err, &nf) || nf.Row != 5 || nf.Col != 0 {
		t.Errorf("−Inf in y[5]: %v, want *ops.NonFiniteError at row 5, column 0", err)
	}
	if _, err := p.m.WeightSpace(p.x, p.y); err != nil {
		t.Errorf("valid inputs refused: %v", err)
	}
}
