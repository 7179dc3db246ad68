package ops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/gradcheck"
	"github.com/gpzoo/gpzoo/ops"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BenchmarkCovMatrix times CovMatrix K(X1, X2) through a gorgonia tape machine:
//
//	fwd     the forward op alone;
//	fwd+bwd forward, loss Σ W⊙K, and the gradients with respect to x1, x2 and every hyperparameter.
//
// GFLOP/s counts only the covariance op: forward 2·N·M·D (the Gemm) + 6·N·M (distance assembly, exp, scaling —
// a transcendental counts as one flop); backward (stationary, per input/lengthscale gradient) 2·N·M·D (one Gemm)
// + 4·N·M, plus 2·N·M for the variance (Matérn/RQ add one distance Gemm per gradient, not counted).
func BenchmarkCovMatrix(b *testing.B) {
	// The registered functions benchmarked (by name, so that a kernel removed from gp is skipped) and their labels.
	short := map[string]string{"SquaredExp": "SE", "Matern52": "Matern52", "Periodic": "Periodic", "Linear": "Linear"}
	for _, f := range covFamilies {
		if short[f.Name()] == "" {
			continue
		}
		for _, sz := range [][3]int{{1000, 200, 8}} {
			n, m, d := sz[0], sz[1], sz[2]
			name := fmt.Sprintf("family=%s/N=%d,M=%d,D=%d", short[f.Name()], n, m, d)
			nm, nmd := float64(n*m), float64(n*m*d)
			b.Run(name+"/fwd", func(b *testing.B) {
				covBench(b, f, n, m, d, false, 2*nmd+6*nm)
			})
			b.Run(name+"/fwd+bwd", func(b *testing.B) {
				covBench(b, f, n, m, d, true, 2*nmd+6*nm+3*(2*nmd+4*nm)+2*nm)
			})
		}
	}
}

func covBench(b *testing.B, f ops.CovFunc, n, m, d int, grad bool, flops float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := append([]gradcheck.Input{gradcheck.Random("x1", rng, -1, 1, n, d), gradcheck.Random("x2", rng, -1, 1, m, d)},
		covHyperInputs(f, d, rng, false)...)
	if len(in) > 3 && in[3].Name == "lengthscales" {
		for i := range in[3].Value { // lengthscales ~ the data spread in D = 8
			in[3].Value[i] *= 2
		}
	}
	g := G.NewGraph()
	ns := gradcheck.Leaves(g, in)
	k, err := ops.CovMatrix(f, ns[0], ns[1], ns[2:]...)
	if err != nil {
		b.Fatal(err)
	}
	if grad {
		w := G.NewMatrix(g, tensor.Float64, G.WithShape(n, m), G.WithName("w"),
			G.WithValue(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(gradcheck.Random("w", rng, -1, 1, n, m).Value))))
		loss, err := ops.Dot(w, k)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := G.Grad(loss, ns...); err != nil {
			b.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	run := func() {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
	}
	run() // warm the buffers and scratch pools
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkCovSVGP times the covariance ops of an SVGP step at kin8nm's shape (D = 8, M = 200 inducing inputs Z,
// minibatch B = 1024) as the training graph runs them: K_uf = K(Z, X) with the gradients with respect to Z, the
// variance and the lengthscales (X is data: its gradient is left out of the tape, as graph.Program does), and
// K_uu = K(Z, Z) (one node as both operands) with every gradient.
func BenchmarkCovSVGP(b *testing.B) {
	const m, batch, d = 200, 1024, 8
	covStepBench(b, d, []covStepCase{{"Kuf/fwd", m, batch, false, false, true}, {"Kuf/fwd+bwd", m, batch, false, true, true},
		{"Kuu/fwd+bwd", m, m, true, true, true}})
}

// BenchmarkCovGPR times the covariance op of an exact GP's step (benchmodels.GPR: K(X, X), N = 1000, D = 5,
// gradients with respect to the variance and the lengthscales only: X is data).
func BenchmarkCovGPR(b *testing.B) {
	covStepBench(b, 5, []covStepCase{{"K/fwd", 1000, 1000, true, false, false}, {"K/fwd+bwd", 1000, 1000, true, true, false}})
}

// covStepCase is one covariance op of a training step: K(x1, x2) [rows, cols] (x2 = x1 when shared), its
// forward pass alone or with the gradients (x1's when gradX).
type covStepCase struct {
	name         string
	rows, cols   int
	shared, grad bool
	gradX        bool
}

func covStepBench(b *testing.B, d int, cases []covStepCase) {
	short := map[string]string{"SquaredExp": "SE", "Matern12": "Matern12", "Matern52": "Matern52", "RationalQuadratic": "RQ"}
	for _, f := range covFamilies {
		if short[f.Name()] == "" {
			continue
		}
		for _, c := range cases {
			b.Run("family="+short[f.Name()]+"/"+c.name, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				in := append([]gradcheck.Input{gradcheck.Random("x1", rng, -1, 1, c.rows, d), gradcheck.Random("x2", rng, -1, 1, c.cols, d)},
					covHyperInputs(f, d, rng, false)...)
				for i := range in[3].Value { // lengthscales ~ the data spread in D = 8
					in[3].Value[i] *= 2
				}
				g := G.NewGraph()
				ns := gradcheck.Leaves(g, in)
				x2 := ns[1]
				if c.shared {
					x2 = ns[0]
				}
				k, err := ops.CovMatrix(f, ns[0], x2, ns[2:]...)
				if err != nil {
					b.Fatal(err)
				}
				roots := G.Nodes{k}
				if c.grad {
					w := G.NewMatrix(g, tensor.Float64, G.WithShape(c.rows, c.cols), G.WithName("w"),
						G.WithValue(tensor.New(tensor.WithShape(c.rows, c.cols), tensor.WithBacking(gradcheck.Random("w", rng, -1, 1, c.rows, c.cols).Value))))
					loss, err := ops.Dot(w, k)
					if err != nil {
						b.Fatal(err)
					}
					wrt := ns[2:]
					if c.gradX {
						wrt = append(G.Nodes{ns[0]}, wrt...)
					}
					gs, err := G.Grad(loss, wrt...)
					if err != nil {
						b.Fatal(err)
					}
					roots = append(G.Nodes{loss}, gs...)
				}
				vm := G.NewTapeMachine(g.ExactSubgraphRoots(roots...))
				defer vm.Close()
				run := func() {
					vm.Reset()
					if err := vm.RunAll(); err != nil {
						b.Fatal(err)
					}
				}
				run() // warm the buffers and scratch pools
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run()
				}
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/op")
			})
		}
	}
}
