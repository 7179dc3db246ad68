// Command exactgp times the exact GP by conjugate gradients (package gp/cg; issue 40): evaluations of the negative
// log marginal likelihood and its gradient (one mBCG run of the targets and the probes, stochastic Lanczos
// quadrature, the gradient from the same solves) on N rows, with GPyTorch's default CG settings (tolerance 1, at
// most 1000 iterations, a rank-15 pivoted-Cholesky preconditioner, 10 probes, 20 Lanczos steps), and reports the
// seconds per evaluation, the CG iterations and the peak resident memory (VmHWM):
//
//	go run ./examples/exactgp --data ../shared/data --n 10000 --iters 3   # kin40k's first 10,000 training rows
//	go run ./examples/exactgp --n 2000                                    # 2,000 generated rows
//
// With --data the rows are kin40k's (uci-regression-evans, fold 0's training rows, standardised on them); the
// kernel is SE-ARD at variance 1 and length-scales --lengthscale (default 1), the noise variance --noise (default
// 0.1), as a run's first step. --precond-rank sets the preconditioner's rank (default GPyTorch's 15; 0: gpzoo's
// default, ops.DefaultPrecondRank), --exact also computes the exact value by Cholesky (to measure the estimate's
// error), --memory the budget of the kernel matrix kept whole (default 4 GiB; beyond it the kernel is recomputed
// by blocks of --block rows at every product, in O(N) memory), --cpuprofile writes a CPU profile.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/cg"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// peakMiB returns the process's peak resident set (VmHWM) in MiB, or −1.
func peakMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

// rows returns n standardised rows: kin40k's fold-0 training rows under dir, or generated ones.
func rows(dir string, n int) (*mat.Dense, *mat.Dense, string, error) {
	if dir == "" {
		d, err := datasets.Synthetic(datasets.SynthConfig{Rows: n, Inputs: 8, Seed: 1, Noise: 0.1})
		if err != nil {
			return nil, nil, "", err
		}
		return d.X, d.Y, fmt.Sprintf("%d generated rows (8 inputs)", n), nil
	}
	root := filepath.Join(dir, "uci-regression-evans", "kin40k")
	d, err := datasets.LoadEvans(root)
	if err != nil {
		return nil, nil, "", err
	}
	train, _, err := datasets.EvansSplit(root, 0)
	if err != nil {
		return nil, nil, "", err
	}
	if n > len(train) {
		return nil, nil, "", fmt.Errorf("kin40k fold 0 has %d training rows, asked for %d", len(train), n)
	}
	sub, err := d.Subset(train[:n])
	if err != nil {
		return nil, nil, "", err
	}
	std, err := datasets.FitStandardizer(sub, true)
	if err != nil {
		return nil, nil, "", err
	}
	if sub, err = std.Apply(sub); err != nil {
		return nil, nil, "", err
	}
	return sub.X, sub.Y, fmt.Sprintf("kin40k, the first %d training rows of fold 0 (8 inputs)", n), nil
}

// lossProgram compiles m's loss on the rows x, y and binds them.
func lossProgram(m interface {
	Loss(x, y *graph.Node) *graph.Node
}, x, y *mat.Dense) *graph.Program {
	n, d := x.Dims()
	g := graph.New(graph.Options{})
	prog, err := g.Compile(m.Loss(g.Input("x", n, d), g.Input("y", n, 1)), nil)
	if err != nil {
		die(err)
	}
	copy(prog.InputData("x"), x.RawMatrix().Data)
	copy(prog.InputData("y"), y.RawMatrix().Data)
	return prog
}

func main() {
	data := flag.String("data", "", "the benchmark data folder (kin40k's rows; default: generated rows)")
	n := flag.Int("n", 2000, "rows")
	iters := flag.Int("iters", 2, "evaluations of the loss and its gradient")
	memory := flag.Int64("memory", 0, "bytes the kernel matrix may take when kept whole (0: 4 GiB; negative: never)")
	lengthscale := flag.Float64("lengthscale", 1, "the SE-ARD kernel's length-scales")
	noise := flag.Float64("noise", 0.1, "the noise variance")
	block := flag.Int("block", 0, "rows of the kernel's blocks when recomputed (0: cg.DefaultBlock)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the evaluations to this file")
	exact := flag.Bool("exact", false, "also print the exact −log p(y)/N by Cholesky (gp.GPR), to measure the estimate's error")
	rank := flag.Int("precond-rank", ops.GPyTorchPrecondRank, "the pivoted-Cholesky preconditioner's rank (0: gpzoo's default, ops.DefaultPrecondRank; negative: none)")
	flag.Parse()
	if *n < 2 || *iters < 1 {
		die(fmt.Errorf("--n %d --iters %d: want at least 2 rows and 1 evaluation", *n, *iters))
	}
	x, y, what, err := rows(*data, *n)
	if err != nil {
		die(err)
	}
	_, d := x.Dims()
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = *lengthscale
	}
	k, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: d, Lengthscales: ls})
	if err != nil {
		die(err)
	}
	m, err := cg.NewGPR(cg.Config{Kernel: k, X: x, Y: y, NoiseVariance: *noise,
		Solver: ops.CGConfig{PrecondRank: *rank}, Blocks: cg.BlocksOptions{Memory: *memory, Block: *block}})
	if err != nil {
		die(err)
	}
	prog := lossProgram(m, x, y)
	fmt.Printf("exact GP by conjugate gradients on %s: SE-ARD, %s\n", what, m.Describe())
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			die(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			die(err)
		}
		defer pprof.StopCPUProfile()
	}
	secs := make([]float64, *iters)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range secs {
		prog.InputData(gp.StepInput)[0] = float64(rng.IntN(1 << 20)) // fresh probes each evaluation
		t0 := time.Now()
		if err := prog.Run(); err != nil {
			die(err)
		}
		secs[i] = time.Since(t0).Seconds()
		st := m.Solver().Stats()
		fmt.Printf("evaluation %d: %.3fs, −log p(y)/N = %.5f, %d CG iterations (mean relative residual %.2g, largest %.2g), preconditioner rank %d\n",
			i+1, secs[i], prog.Loss()/float64(*n), st.Iters, st.Residual, st.MaxResidual, st.PrecondRank)
	}
	if *exact {
		e, err := gp.NewGPR(gp.GPRConfig{Kernel: k, NoiseVariance: *noise, X: x, Y: y})
		if err != nil {
			die(err)
		}
		p := lossProgram(e, x, y)
		t0 := time.Now()
		if err := p.Run(); err != nil {
			die(err)
		}
		fmt.Printf("exact (Cholesky): −log p(y)/N = %.5f in %.3fs\n", p.Loss()/float64(*n), time.Since(t0).Seconds())
	}
	slices.Sort(secs)
	fmt.Printf("median %.3fs per evaluation of the loss and its gradient; peak resident memory %.0f MiB\n", secs[(len(secs)-1)/2], peakMiB())
}
