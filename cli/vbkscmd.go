package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/vbks"
	"github.com/gpzoo/gpzoo/zoo"
)

const vbksUsage = `gpzoo vbks: variational Bayesian kernel selection (VBKS, Teng et al. 2020) with Bayesian model averaging.

  gpzoo vbks --data DATA [--kernels K12|K144|"EXPR,EXPR,..."] [flags]

DATA is synthetic:PER*LIN*RQ or synthetic:(PER+RQ)*LIN (the paper's Sec. 6.1 data: 256 draws from a GP prior
with that kernel, its posterior mean at 1000 inputs, and 1000 more as a test set), or a regression data set of
gpzoo data list (e.g. airfoil, read from --dir or embedded in the binary; split --split). Expressions use SE,
RQ, PER and LIN with + and * (or ×) and parentheses, e.g. "(PER+RQ)*LIN". K144 is every kernel up to level 3
of the grammar; K12 the paper's Table 1.

Every candidate gets a sparse GP trained by minibatch Adam on growing fractions of the data (warm-started), in
parallel on --workers goroutines, each fraction ending with --polish L-BFGS iterations on the collapsed bound;
then every kernel also starts again --fresh times from its initial hyperparameters (inducing inputs at the
k-means centres of the rows seen so far) and from the fits of the --donors best kernels (same base kernels,
inducing inputs and noise), and keeps what is better. After each fraction q(g) is fitted to the local ELBOs (eq. 8) and
the kernel posterior q*(k) estimated with --mc draws (eq. 13). At the end the --top kernels are kept, q(g) is refitted,
and the test metrics of BMA (eq. 15) and of the most probable kernel alone (VBKS-s) are printed.

Flags:
`

func vbksCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("vbks", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, vbksUsage)
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "synthetic:TRUTH or a regression data set (required)")
	dir := fs.String("dir", datasets.DefaultDir(), "benchmark data directory (empty: data embedded in the binary)")
	split := fs.Int("split", 0, "split of a benchmark data set")
	kernels := fs.String("kernels", "K12", `candidates: K12, K144 or "EXPR,EXPR,..."`)
	inducing := fs.Int("inducing", vbks.DefaultNumInducing, "inducing inputs per candidate |U|")
	batch := fs.Int("batch", vbks.DefaultBatchSize, "minibatch size")
	iters := fs.Int("iters", vbks.DefaultIters, "Adam steps per data fraction (the first fraction: twice as many)")
	lr := fs.Float64("lr", vbks.DefaultLR, "Adam learning rate of the local fits")
	fractions := fs.Int("fractions", vbks.DefaultFractions, "number of growing data fractions")
	top := fs.Int("top", vbks.DefaultTop, "kernels kept for BMA")
	workers := fs.Int("workers", 0, "local fits run at once (0: GOMAXPROCS, also the most)")
	floor := fs.Float64("noise-floor", vbks.DefaultNoiseFloor, "lower bound of the likelihood's noise variance (standardised units)")
	restarts := fs.Int("restarts", vbks.DefaultRestarts, "extra starts of every local fit on the first fraction (-1: none)")
	polish := fs.Int("polish", vbks.DefaultPolishIters, "L-BFGS iterations on the collapsed bound that end each fraction's local fits (-1: none, minibatch steps only)")
	donors := fs.Int("donors", vbks.DefaultDonors, "after each fraction every kernel also starts from the fits of this many best kernels (-1: none)")
	fresh := fs.Int("fresh", vbks.DefaultFreshStarts, "after each fraction every kernel also starts this many times from its initial hyperparameters (-1: none)")
	mc := fs.Int("mc", vbks.DefaultPosteriorMCSamples, "Monte Carlo draws S of q*(k)")
	seed := fs.Uint64("seed", 1, "random seed (data generation, shuffle, inducing inputs, minibatches, q(g))")
	out := fs.String("out", "", "directory for vbks.json, posterior.csv and posterior.png")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("vbks: unexpected argument %q", fs.Args())
	}
	if *data == "" {
		return errors.New("vbks: --data is required (gpzoo vbks --help)")
	}
	c := zoo.VBKSConfig{Data: *data, DataDir: *dir, Split: *split, Kernels: *kernels, Fractions: *fractions, Top: *top, Seed: *seed,
		Local:     vbks.LocalConfig{NumInducing: *inducing, BatchSize: *batch, Iters: *iters, LR: *lr, Workers: *workers, NoiseFloor: *floor, Restarts: *restarts, PolishIters: *polish, Donors: *donors, FreshStarts: *fresh},
		Posterior: vbks.PosteriorConfig{MCSamples: *mc}}
	if !*quiet {
		c.Progress = func(s vbks.Step, names []string) { progressVBKS(stderr, s, names) }
	}
	rep, _, err := zoo.RunVBKS(c)
	if err != nil {
		return err
	}
	printVBKS(stdout, rep)
	if *out != "" {
		if err := writeVBKS(*out, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s, %s and %s\n", filepath.Join(*out, "vbks.json"), filepath.Join(*out, "posterior.csv"), filepath.Join(*out, "posterior.png"))
	}
	return nil
}

func progressVBKS(w io.Writer, s vbks.Step, names []string) {
	fmt.Fprintf(w, "fraction %.2f (%d rows): local fits %.1f s wall, %.1f s CPU on %d workers; posterior %.2f s; top:",
		s.Fraction, s.Rows, s.Fit.Seconds, s.Fit.CPUSeconds, s.Fit.Workers, s.PosteriorSeconds)
	for j, i := range vbks.Rank(s.Probs) {
		if j == 3 {
			break
		}
		fmt.Fprintf(w, " %s %.3f", names[i], s.Probs[i])
	}
	fmt.Fprintln(w)
}

// printVBKS prints the posterior tables, the metrics and the timings.
func printVBKS(w io.Writer, r *zoo.VBKSReport) {
	fmt.Fprintf(w, "VBKS on %s: %d candidates, %d training rows, %d test rows\n\n", r.Data, len(r.Kernels), r.Train, r.Test)
	fmt.Fprintln(w, "Kernel posterior q*(k) after all the data (eq. 13):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tkernel\tq*(k)\tlocal ELBO\t")
	for i, k := range r.Ranking {
		if i >= 15 && k.Kernel != r.Truth {
			continue
		}
		mark := ""
		if k.Kernel == r.Truth {
			mark = "  (true kernel)"
		}
		if len(k.Ties) > 0 {
			mark += fmt.Sprintf("  (local ELBO tied with %s: q*(k) between them is a tie-break)", strings.Join(k.Ties, ", "))
		}
		if k.PolishFailures > 0 {
			mark += fmt.Sprintf("  (%d failed L-BFGS polishes undone)", k.PolishFailures)
		}
		elbo := fmt.Sprintf("%.2f", k.ELBO)
		if k.Error != "" {
			elbo = "failed: " + k.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%s\t%s\n", i+1, k.Kernel, k.Prob, elbo, mark)
	}
	tw.Flush()
	if len(r.Ranking) > 15 {
		fmt.Fprintf(w, "(%d more kernels not shown)\n", len(r.Ranking)-15)
	}
	fmt.Fprintf(w, "\nPruned to the top %d and refitted (the BMA weights):\n", len(r.Pruned))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range r.Pruned {
		fmt.Fprintf(tw, "  %s\t%.4f\n", k.Kernel, k.Prob)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nTest metrics (original units):\n")
	fmt.Fprintf(w, "  BMA over %d kernels (VBKS):  RMSE %.6g  LL %.4f\n", len(r.Pruned), r.BMA.RMSE, r.BMA.LL)
	fmt.Fprintf(w, "  most probable kernel (VBKS-s, %s):  RMSE %.6g  LL %.4f\n", r.Best, r.Single.RMSE, r.Single.LL)
	speed := 0.0
	if r.FitSeconds > 0 {
		speed = r.FitCPUSeconds / r.FitSeconds
	}
	fmt.Fprintf(w, "\nLocal fits: %.1f s wall on %d workers (%.1f s of fitting in all, ×%.2f parallel); q(g) fits %.1f s\n",
		r.FitSeconds, r.Workers, r.FitCPUSeconds, speed, r.PosteriorSeconds)
	if r.Truth != "" {
		fmt.Fprintf(w, "True kernel %s: rank %d, q*(k) = %.4f\n", r.Truth, r.TruthRank, r.TruthProb)
	}
}

func writeVBKS(dir string, r *zoo.VBKSReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "vbks.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var csv strings.Builder
	if err := r.WriteCSV(&csv); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "posterior.csv"), []byte(csv.String()), 0o644); err != nil {
		return err
	}
	return r.Plot(filepath.Join(dir, "posterior.png"))
}
