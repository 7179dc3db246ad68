package dgp_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Diagnose: with one sample and the layers' marginals computed independently (models.PredictLayer at the
// samples LayerSamples draws from an equally seeded generator), every number is what its doc says: the KL of
// each layer alone, the noise and shift of the layer at its input samples, the spread of its output samples, and
// the kernel's hyperparameters by name (not q's, Z's or the mean function's).
func TestDiagnose(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	x, _ := gptest.ToyRegression(rng, 40, 3, 1)
	ls := build(t, x, []int{3, 2}, 1, 6, false, 9)
	deep, err := dgp.New(dgp.Config{Layers: ls, Likelihood: gaussian(t, 0.1), NumData: 400, Rand: rand.New(rand.NewPCG(1, 1))})
	if err != nil {
		t.Fatal(err)
	}
	const s = 3
	got, err := deep.Diagnose(x, s, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ls) {
		t.Fatalf("%d layers diagnosed, want %d", len(got), len(ls))
	}
	// The same draws: Diagnose and LayerSamples both take StandardNormalNoise from a generator seeded alike,
	// in the same order (one block per layer below the last).
	samples, err := deep.LayerSamples(x, s, rand.New(rand.NewPCG(7, 7)), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := x.Dims()
	for i, l := range ls {
		d := got[i]
		if d.Layer != i || d.Inner != (i < len(ls)-1) {
			t.Errorf("layer %d: Layer %d, Inner %v", i, d.Layer, d.Inner)
		}
		// KL of the layer alone.
		g := graph.New(graph.Options{})
		prog, err := g.CompileForward(map[string]*graph.Node{"kl": l.KL(g)})
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		kl := prog.Output("kl")[0]
		closeRel(t, "KL", d.KL, kl, 1e-12)
		closeRel(t, "KL per point", d.KLPerPoint, kl/400, 1e-12)
		if kl <= 0 {
			t.Errorf("layer %d: KL %g with a random q, want > 0", i, kl)
		}
		// Noise, shift and output spread from the layer's marginals at its input samples.
		var in *mat.Dense
		if i == 0 {
			in = x
		}
		var noise, shift float64
		var outs []float64
		for k := 0; k < s; k++ {
			if i > 0 {
				in = samples[i-1][k]
			}
			m, v, err := models.PredictLayer(l, in, gp.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var mf *mat.Dense
			if lm, ok := l.(gp.MeanFunctionLayer); ok && lm.MeanFunction() != nil {
				mf = lm.MeanFunction().(gp.DataMean).MeanOf(in)
			}
			r, c := m.Dims()
			for a := 0; a < r; a++ {
				for b := 0; b < c; b++ {
					noise += v.At(a, b)
					sh := m.At(a, b)
					if mf != nil {
						sh -= mf.At(a, b)
					}
					shift += sh * sh
				}
			}
			if d.Inner {
				outs = append(outs, samples[i][k].RawMatrix().Data...)
			} else {
				outs = append(outs, m.RawMatrix().Data...)
			}
		}
		cells := float64(s * n * l.OutputDim())
		closeRel(t, "noise sd", d.NoiseSD, math.Sqrt(noise/cells), 1e-10)
		closeRel(t, "shift rms", d.ShiftRMS, math.Sqrt(shift/cells), 1e-10)
		q := l.OutputDim()
		sd := 0.0
		for j := 0; j < q; j++ {
			col := make([]float64, 0, len(outs)/q)
			for r := j; r < len(outs); r += q {
				col = append(col, outs[r])
			}
			sd += stdDev(col)
		}
		closeRel(t, "output sd", d.OutputSD, sd/float64(q), 1e-10)
		if d.ShiftRMS == 0 || d.NoiseSD == 0 || d.OutputSD == 0 {
			t.Errorf("layer %d: zero diagnostics %+v", i, d)
		}
		// Hyperparameters: the kernel's variance and length-scales (and an inner layer's white variance).
		for name, v := range d.Hyper {
			if len(v) > l.InputDim() {
				t.Errorf("layer %d: %s has %d numbers, more than the layer's %d inputs", i, name, len(v), l.InputDim())
			}
		}
		want := 2
		if d.Inner {
			want = 3
		}
		if len(d.Hyper) != want {
			t.Errorf("layer %d: hyperparameters %v, want the kernel's %d", i, d.Hyper, want)
		}
	}
	if _, err := deep.Diagnose(x, 0, rng); err == nil {
		t.Error("Diagnose with s = 0: no error")
	}
	if _, err := deep.Diagnose(mat.NewDense(2, 5, nil), 1, rng); err == nil {
		t.Error("Diagnose with 5 input columns: no error")
	}
}

func stdDev(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}
