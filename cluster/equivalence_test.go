package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/advgp"
	"github.com/gpzoo/gpzoo/gp/dgp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// equivData is the data of the equivalence tests: small, so that a full-batch step is quick.
var equivData = Synthetic{N: 240, D: 2, Noise: 0.1, Seed: 11}

// equivCase builds a fresh model (the same one at every call) and its single-process training recipe.
type equivCase struct {
	name  string
	build func(t *testing.T, x *mat.Dense) (gp.RowSum, train.Optimizer, []train.Hook)
	// dataOnly marks ADVGP: its hooks and optimiser take the data term's gradient alone (the KL enters through
	// the proximal map), so its single-process step trains the data term.
	dataOnly bool
}

func equivKernel(t *testing.T) gp.Kernel {
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: equivData.D, Variance: 1, Lengthscales: []float64{0.8, 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func equivZ(t *testing.T, x *mat.Dense, m int, seed uint64) *mat.Dense {
	z, err := gp.KMeans(x, m, 5, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func equivGaussian(t *testing.T) gp.Likelihood {
	lik, err := likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return lik
}

func equivSVGP(t *testing.T, layer gp.Layer) *models.SVGP {
	m, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: equivGaussian(t), NumData: equivData.N})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func natGrad(t *testing.T, q *gp.GaussianQ) []train.Hook {
	h, err := train.NewNatGrad(train.NatGradConfig{Q: []*gp.GaussianQ{q}, Gamma: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return []train.Hook{h}
}

var equivCases = []equivCase{
	{name: "svgp", build: func(t *testing.T, x *mat.Dense) (gp.RowSum, train.Optimizer, []train.Hook) {
		l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: equivKernel(t), Z: equivZ(t, x, 12, 1)})
		if err != nil {
			t.Fatal(err)
		}
		return equivSVGP(t, l), &train.Adam{LR: 0.02}, nil
	}},
	{name: "orthnat", build: func(t *testing.T, x *mat.Dense) (gp.RowSum, train.Optimizer, []train.Hook) {
		l, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: equivKernel(t), Z: equivZ(t, x, 8, 2)},
			Zgamma: equivZ(t, x, 10, 3)})
		if err != nil {
			t.Fatal(err)
		}
		return equivSVGP(t, l), &train.Adam{LR: 0.02}, natGrad(t, l.BetaQ())
	}},
	{name: "dgp-2-layer", build: func(t *testing.T, x *mat.Dense) (gp.RowSum, train.Optimizer, []train.Hook) {
		ls, err := dgp.Build(x, dgp.BuildConfig{Widths: []int{2}, Rand: rand.New(rand.NewPCG(4, 4)), KMeansIters: 3,
			NewLayer: func(s dgp.LayerSpec) (gp.Layer, error) {
				k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: s.InputDim, Variance: 1, Lengthscales: []float64{1, 1}})
				if err != nil {
					return nil, err
				}
				z, err := s.Inducing(10)
				if err != nil {
					return nil, err
				}
				return layers.NewSVGP(layers.SVGPConfig{Name: fmt.Sprint("layer", s.Index), Kernel: k, Z: z, OutputDim: s.OutputDim, Mean: s.Mean})
			}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := dgp.New(dgp.Config{Layers: ls, Likelihood: equivGaussian(t), NumData: equivData.N, Samples: 2, Rand: rand.New(rand.NewPCG(5, 5))})
		if err != nil {
			t.Fatal(err)
		}
		return m, &train.Adam{LR: 0.02}, nil
	}},
	{name: "advgp", dataOnly: true, build: func(t *testing.T, x *mat.Dense) (gp.RowSum, train.Optimizer, []train.Hook) {
		m, err := advgp.New(advgp.Config{Kernel: equivKernel(t), Z: equivZ(t, x, 12, 6), NumData: equivData.N})
		if err != nil {
			t.Fatal(err)
		}
		opt, hooks, err := ADVGPUpdate(m, ADVGPRule{})
		if err != nil {
			t.Fatal(err)
		}
		return m.SVGP, opt, hooks
	}},
}

// dataTerm is a RowSum's data term scaled to the data set as a gp.Model: what single-process ADVGP trains
// (h enters through the proximal map).
type dataTerm struct{ m gp.RowSum }

func (d dataTerm) Loss(x, y *graph.Node) *graph.Node {
	b := x.Shape()[0]
	return x.Graph().Scale(d.m.DataLoss(x, y), float64(d.m.DataSize())/float64(b))
}
func (d dataTerm) Params() []*graph.Param { return d.m.Params() }

// With τ = 0 and k workers whose shards cover every row once, each computing its shard's whole data term, one
// update of the parameter server equals one single-process full-batch training step (train.Train with the same
// optimiser and hooks), to 1e-9 relative, for SVGP, ORTHNAT, a 2-layer deep GP (its Monte-Carlo noise keyed by
// row and step) and ADVGP.
func TestOneUpdateEqualsSingleProcessStep(t *testing.T) {
	x, y, err := equivData.Rows(0, equivData.N)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range equivCases {
		t.Run(c.name, func(t *testing.T) {
			single, opt, hooks := c.build(t, x)
			var loss gp.Model = single
			if c.dataOnly {
				loss = dataTerm{single}
			}
			if _, err := train.Train(loss, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 1, Optimizer: opt, Hooks: hooks}); err != nil {
				t.Fatal(err)
			}
			fresh, _, _ := c.build(t, x)
			moved := 0
			for i, p := range fresh.Params() {
				for j, v := range p.Raw() {
					if v != single.Params()[i].Raw()[j] {
						moved++
					}
				}
			}
			if moved == 0 {
				t.Fatal("the single-process step moved no parameter")
			}
			for _, k := range []int{1, 3} {
				dist, opt, hooks := c.build(t, x)
				cfg := LocalConfig{Server: ServerConfig{Job: Job{Data: DataRef{Synthetic: &equivData}, NumData: equivData.N, Workers: k},
					Iters: 1, Optimizer: opt, Hooks: hooks, DataGradOnly: c.dataOnly}}
				if _, err := Local(dist, cfg); err != nil {
					t.Fatal(err)
				}
				worst, where := 0.0, ""
				for i, p := range single.Params() {
					q := dist.Params()[i]
					for j, v := range p.Raw() {
						w := q.Raw()[j]
						if r := math.Abs(v-w) / math.Max(math.Abs(v), 1e-3); r > worst || math.IsNaN(r) {
							worst, where = r, fmt.Sprintf("%s[%d]: %v vs %v", p.Name(), j, v, w)
						}
					}
				}
				if !(worst <= 1e-9) {
					t.Errorf("%d workers: the update differs from the single-process step by %.3g relative at %s", k, worst, where)
				}
			}
		})
	}
}

// On a row file with hash-chosen test rows, workers reading only their shards (ShardRange over the file's
// rows, test rows dropped, standardised by the server's streaming statistics) make one update equal to one
// single-process full-batch step on the standardised training rows: the shards' sizes are their training rows.
func TestOneUpdateOnAFileEqualsSingleProcessStep(t *testing.T) {
	bin, _, _ := writeFileData(t, t.TempDir(), 300, 2)
	f, _, err := NewFileData(datasets.RowSource{Path: bin}, datasets.RowSplit{Seed: 5, TestFrac: 0.2}, true)
	if err != nil {
		t.Fatal(err)
	}
	ref := DataRef{File: f}
	x, y, _, err := LoadShardRows(ref, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	build := func() *models.SVGP {
		l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: equivKernel(t), Z: equivZ(t, x, 10, 7)})
		if err != nil {
			t.Fatal(err)
		}
		m, err := models.NewSVGP(models.SVGPConfig{Layer: l, Likelihood: equivGaussian(t), NumData: f.Train})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	single := build()
	if _, err := train.Train(single, x, y, rand.New(rand.NewPCG(1, 1)), train.Config{Iters: 1, Optimizer: &train.Adam{LR: 0.02}}); err != nil {
		t.Fatal(err)
	}
	// The server counts a shard's training rows (what its worker scales by), not a range of the training count:
	// the two differ when test rows are spread unevenly, which matters when a shard's gradient is missing.
	s := &server{cfg: ServerConfig{Job: Job{Data: ref, NumData: f.Train}}}
	for i := range 3 {
		n, _ := f.ShardTrainRows(i, 3)
		lo, hi, _ := ShardRange(f.Train, i, 3)
		if got := s.shardRows(i, 3); got != n || (i == 0 && n == hi-lo) {
			t.Errorf("shard %d/3: the server counts %d rows, the worker holds %d (a range of the training count: %d)", i, got, n, hi-lo)
		}
	}
	dist := build()
	cfg := LocalConfig{Server: ServerConfig{Job: Job{Data: ref, NumData: f.Train, Workers: 3}, Iters: 1, Optimizer: &train.Adam{LR: 0.02}}}
	if _, err := Local(dist, cfg); err != nil {
		t.Fatal(err)
	}
	for i, p := range single.Params() {
		for j, v := range p.Raw() {
			if w := dist.Params()[i].Raw()[j]; !(math.Abs(v-w) <= 1e-9*math.Max(math.Abs(v), 1e-3)) {
				t.Fatalf("%s[%d]: %v single-process, %v on the file's shards", p.Name(), j, v, w)
			}
		}
	}
}
