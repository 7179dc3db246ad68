package zoo

import (
	"fmt"
	"strings"

	"github.com/gpzoo/gpzoo/ops"
)

// Issue 40's accuracy comparison: the exact GP (its default procedure: conjugate gradients from a subset start
// beyond the Cholesky budget) against SGPR (M = 512) and SVGP (M = 1024) on the five sets of Wang et al. 2019's
// Table 1 that the benchmark data holds, each on split 0, with SE-ARD kernels: the table wang-exact.

// wangSet is a data set of the comparison: its zoo name, the training rows of its split 0, and Wang et al.'s test
// RMSE of the exact GP, SGPR and SVGP on standardised targets under their own splits, as issue 40 quotes them
// (the paper's text was not available here to check them against; the table's Differences say so).
type wangSet struct {
	name  string
	train int
	pub   [3]string
}

var wangSets = []wangSet{
	{"kin40k", 36000, [3]string{"0.099", "0.273", "0.268"}},
	{"pol", 13500, [3]string{"0.151", "0.217", "0.215"}},
	{"bike", 15642, [3]string{"0.220", "0.362", "0.303"}},
	{"keggdirected", 43945, [3]string{"0.086", "0.104", "0.096"}},
	{"protein", 41157, [3]string{"0.536", "0.656", "0.668"}},
}

// wangSVGPSteps is the SVGP's Adam steps on a set: Wang et al.'s 100 epochs of minibatches of 1024 rows.
func wangSVGPSteps(s wangSet) int { return (100*s.train + WangBatch - 1) / WangBatch }

// The sparse models' sizes in the comparison (Wang et al.'s), and SGPR's L-BFGS bound (gpzoo's default).
const (
	WangSGPRInducing = 512
	WangSVGPInducing = 1024
	WangSGPRIters    = 200
	WangBatch        = 1024 // SVGP's minibatch
)

func init() {
	const ref = "Wang, Pleiss, Gardner, Tyree, Weinberger & Wilson 2019, Exact Gaussian Processes on a Million Data Points (arXiv 1903.08114), Table 1"
	for _, s := range wangSets {
		src := sources[s.name]
		proto := ref + "; split protocol: " + src.protocol
		register(configuredEntry(s.name+"/gpr", s.name,
			fmt.Sprintf("exact GP by conjugate gradients (gpzoo train's default beyond the Cholesky budget), SE-ARD, repeated inputs collapsed exactly: L-BFGS on %d random distinct inputs with their replicates, then %d Adam steps at rate %g on every row (rank-%d preconditioner, %d probes; %s)",
				DefaultSubset, DefaultCGIters, DefaultCGLR, ops.DefaultPrecondRank, ops.DefaultProbes, s.name),
			proto, "Wang et al. 2019 Table 1 (standardised RMSE, their splits): exact GP "+s.pub[0],
			CustomConfig{Family: "gpr", Iters: DefaultCGIters, Exact: ExactOptions{Solver: "cg"}}))
		register(configuredEntry(fmt.Sprintf("%s/sgpr-%d", s.name, WangSGPRInducing), s.name,
			fmt.Sprintf("SGPR (Titsias), M=%d k-means, SE-ARD, L-BFGS ≤ %d iterations (%s)", WangSGPRInducing, WangSGPRIters, s.name),
			proto, "Wang et al. 2019 Table 1 (standardised RMSE, their splits): SGPR "+s.pub[1],
			CustomConfig{Family: "sgpr", Inducing: WangSGPRInducing, Iters: WangSGPRIters}))
		register(configuredEntry(fmt.Sprintf("%s/svgp-%d", s.name, WangSVGPInducing), s.name,
			fmt.Sprintf("SVGP, M=%d k-means, SE-ARD, minibatch %d, Adam 0.01, %d steps = 100 epochs (%s)", WangSVGPInducing, WangBatch, wangSVGPSteps(s), s.name),
			proto, "Wang et al. 2019 Table 1 (standardised RMSE, their splits): SVGP "+s.pub[2],
			CustomConfig{Family: "svgp", Inducing: WangSVGPInducing, BatchSize: WangBatch, LR: 0.01, Iters: wangSVGPSteps(s)}))
	}
	mustRegisterTable(wangTable())
}

// wangTable is the comparison as a table (gpzoo table run wang-exact): not one of the seeds' tables
// (PaperTables), so REPRODUCTION.md leaves it out; docs/exact-gp-at-scale.md reports it.
func wangTable() *Table {
	t := &Table{Name: "wang-exact", Splits: []int{0}, StandardisedRMSE: true,
		Title:      "The exact GP by conjugate gradients against SGPR and SVGP on five large UCI sets",
		Reproduces: "Wang et al. 2019, Exact Gaussian Processes on a Million Data Points (arXiv 1903.08114), Table 1 (its RMSE columns for the exact GP, SGPR and SVGP)",
	}
	var names []string
	for _, s := range wangSets {
		names = append(names, s.name)
		for i, m := range []struct{ model, label string }{{"gpr", "exact GP"}, {fmt.Sprintf("sgpr-%d", WangSGPRInducing), "SGPR"}, {fmt.Sprintf("svgp-%d", WangSVGPInducing), "SVGP"}} {
			t.Rows = append(t.Rows, Row{Entry: s.name + "/" + m.model, Label: s.name + " " + m.label, RMSE: pub(s.pub[i])})
		}
	}
	t.Data = strings.Join(names, " ")
	t.Protocol = fmt.Sprintf("Sets %s: fold 0 of uci-regression-evans' test mask (protein: uci-regression-dropout's split 0); inputs and "+
		"targets standardised by the training rows; RMSE on the targets divided by the training targets' standard deviation. SE-ARD "+
		"kernels. The exact GP by conjugate gradients, gpzoo train's default beyond the Cholesky budget: L-BFGS and Cholesky on %d "+
		"random distinct training inputs with their replicates (repeated inputs are collapsed exactly: gp.Replicates), then %d Adam steps at rate %g on every row with a rank-%d pivoted-Cholesky preconditioner, %d probes "+
		"and tolerance 1; means from α solved to 1e-6, variances by LOVE (means and variances by K̂'s Cholesky factorisation where LOVE "+
		"fails its check at training rows and the factor fits the 4 GiB memory budget, as on bike). SGPR with M = %d k-means inducing inputs by L-BFGS (at most "+
		"%d iterations); SVGP with M = %d, Adam 0.01 for 100 epochs of minibatches of %d rows.", strings.Join(names, ", "),
		DefaultSubset, DefaultCGIters, DefaultCGLR, ops.DefaultPrecondRank, ops.DefaultProbes, WangSGPRInducing, WangSGPRIters, WangSVGPInducing, WangBatch)
	t.Differences = []Difference{
		{What: "one split per set (split 0), the data folder's fixed folds; Wang et al. average 3 random splits",
			Why: "the issue's protocol: the benchmark data's own folds, so the three models of a set see the same rows; one split of an exact GP on 36,000+ rows takes hours on 2 cores"},
		{What: "the published RMSE is another protocol's (other splits and training sizes, other hyperparameter procedures, possibly another kernel), quoted as issue 40 gives it and not checked against the paper's text, which was not available here",
			Why: "it is shown for scale only; the comparison that counts is between this table's rows on the same split"},
		{What: fmt.Sprintf("the exact GP's hyperparameters from L-BFGS on a %d-row subset and %d Adam steps on every row; Wang et al. pre-train on a 10,000-row subset (10 L-BFGS and 10 Adam steps) and then take 3 Adam steps on every row", DefaultSubset, DefaultCGIters),
			Why: "gpzoo train's documented default procedure, which the issue asks to measure; the issue bounds the subset at 4,000 rows"},
		{What: fmt.Sprintf("SGPR by L-BFGS (at most %d iterations); Wang et al. train it by 100 Adam steps at rate 0.1", WangSGPRIters),
			Why: "gpzoo trains the collapsed bound by L-BFGS, which reaches its optimum; 100 Adam steps would stop short of it"},
		diffKMeans,
		diffMachine,
	}
	return t
}
