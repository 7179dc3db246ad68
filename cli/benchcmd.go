package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpzoo/gpzoo/internal/atomicfile"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/cgproduct"
	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
	"github.com/gpzoo/gpzoo/ops"
	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas"
)

const benchUsage = `gpzoo bench: this machine's BLAS throughput and training-step times.

  gpzoo bench [--sizes 32,64,128,256,512,1000] [--min-time 300ms] [--steps 10] [--models REGEXP] [--kernel NAME]
              [--json FILE] [--quick]

The header names the build (purego or openblas), the BLAS kernel in use, GOMAXPROCS, the Go version and the
CPU's AVX2, FMA and AVX-512F support. Then GFLOP/s, side by side for gpzoo's BLAS with the active kernel,
gonum's pure-Go reference and, in the openblas build, OpenBLAS, each the best of 3 rounds, a round repeating
the call for at least --min-time: first of Dgemm (NN), Dsyrk (lower, no transpose), Dtrsm (left, lower, no
transpose) and Dpotrf (lower) at each order n of --sizes (flops 2n³, n³, n³ and n³/3); then of the calls the
SVGP and deep-GP training steps make, at their shapes (M = 200 inducing points, minibatch B = 1024, D = 8
inputs, deep-GP width 8): thin and tall-skinny products (Dgemm m×n×k: C m×n, inner dimension k; 2mnk flops),
solves and triangular products with B m×n (m²n), the rank-B update (n²k) and the Cholesky of K_uu. Then each
training step of the models the step benchmarks time: milliseconds (median of --steps steps after one warm-up
step), GFLOP/s from the model's flop count (internal/testkit/benchmodels: the algorithm as implemented, forward and
backward) and that rate's share of the run's Dgemm NN rate at n = 1000 on the BLAS the models run on (timed
for the purpose when --sizes lacks 1000), so that the gap to peak shows: the exact GP at N = 1000 (go test
./gp/ -bench GPRStep), the SVGP with M = 200 and minibatch 1024 (./gp/models/ -bench SVGPStep), the 2-layer
coupled and decoupled deep GPs on minibatches of 1024 and the full-batch deep-GP steps of Havasi et al.'s
tables (width 10; L = 1 and 3 hidden layers on kin8nm's 6,553 rows of 8 inputs, L = 4 on protein's 10,000-row
batches of 9 inputs), each timed interleaved with its family's minibatch step (a full-batch step, then as
many minibatch steps as take as long, in turn) and reported with the median ratio of their rates: at least 1
when the full batch reaches the minibatch step's share of Dgemm (./gp/dgp/ -bench DGPStep). --models times
only the steps whose names match a regular expression (the full-batch steps take about a second each on 2
cores). Last, the CG exact GP's kernel product K·V (gp/cg, SE-ARD on 8 inputs, V with 11 columns: a target and
10 probes) at each N of --products, with K kept whole and recomputed by blocks at every product (the upper
triangle): milliseconds (median of --steps after a warm-up) and GFLOP/s from 2N²·11 flops plus, recomputed,
the kernel's evaluation on the upper triangle (go test ./gp/cg/ -bench KernelProduct). --kernel forces gpzoo's
kernel for every part (in the openblas build the models run on OpenBLAS whatever the kernel).

Flags:
`

// Bounds and defaults of gpzoo bench.
const (
	benchRounds     = 3
	benchMaxSize    = 8192
	benchMinTime    = 300 * time.Millisecond
	benchSteps      = 10
	benchQuickTime  = 50 * time.Millisecond
	benchQuickSteps = 3
	benchQuickSizes = "128"
	benchSizes      = "32,64,128,256,512,1000"
	benchProducts   = "2000,8000"
	benchQuickProd  = "2000"
	// benchRefN is the order of the Dgemm the training steps' rates are compared with (timed apart when --sizes
	// lacks it).
	benchRefN = 1000
)

// benchModel is one model whose training step gpzoo bench times.
type benchModel struct {
	// name is the go test benchmark and sub-benchmark that time the same step (go test ./gp/models/ -run '^$'
	// -bench 'SVGPStep/M=200' for "SVGPStep/M=200,B=1024").
	name  string
	build func() (*benchmodels.Step, error)
	// minibatch names, for a full-batch deep GP, the minibatch step of its layer family, whose share of Dgemm
	// its own is compared with.
	minibatch string
}

// benchModels are the exact GP at N = 1000, the SVGP with M = 200 and minibatch 1024, the 2-layer deep GP of
// each layer family on minibatches of 1024 and the full-batch deep GPs of Havasi et al.'s tables
// (variational.FullBatchDGPs).
func benchModels() []benchModel {
	const n, m, batch = 1000, 200, 1024
	ms := []benchModel{
		{name: fmt.Sprintf("GPRStep/N=%d", n), build: func() (*benchmodels.Step, error) { return benchmodels.GPR(n) }},
		{name: fmt.Sprintf("SVGPStep/M=%d,B=%d", m, batch), build: func() (*benchmodels.Step, error) { return variational.SVGP(m, batch) }},
	}
	var shapes []variational.DGPShape
	for _, f := range variational.DGPFamilies {
		shapes = append(shapes, variational.MinibatchDGP(f))
	}
	for _, sh := range append(shapes, variational.FullBatchDGPs...) {
		b := benchModel{name: "DGPStep/" + sh.Name(), build: func() (*benchmodels.Step, error) { return variational.DGPAt(sh) }}
		if sh != variational.MinibatchDGP(sh.Family) {
			b.minibatch = "DGPStep/" + variational.MinibatchDGP(sh.Family).Name()
		}
		ms = append(ms, b)
	}
	return ms
}

// benchReport is what gpzoo bench measures (--json writes it).
type benchReport struct {
	Build      string   `json:"build"`   // ops.Build
	BLAS       string   `json:"blas"`    // ops.BLAS(): the kernel the models ran on
	Kernels    []string `json:"kernels"` // gpzoo's kernels this CPU runs
	GOMAXPROCS int      `json:"gomaxprocs"`
	GoVersion  string   `json:"go_version"`
	GOOS       string   `json:"goos"`
	GOARCH     string   `json:"goarch"`
	CPU        struct {
		AVX2    bool `json:"avx2"`
		FMA     bool `json:"fma"`
		AVX512F bool `json:"avx512f"`
	} `json:"cpu"`
	MinTimeSeconds  float64            `json:"min_time_seconds"`
	Rounds          int                `json:"rounds"`
	Implementations []string           `json:"implementations"`
	Routines        []benchRoutineRate `json:"routines"`    // square, at each order of --sizes
	StepShapes      []benchRoutineRate `json:"step_shapes"` // the training steps' shapes
	// DgemmReference is the Dgemm figure the models' rates are compared with: NN at the largest order of
	// --sizes on the implementation the models run on.
	DgemmReference struct {
		Implementation string  `json:"implementation"`
		N              int     `json:"n"`
		GFLOPS         float64 `json:"gflops"`
	} `json:"dgemm_reference"`
	Models   []benchModelTime   `json:"models"`
	Products []benchProductTime `json:"kernel_products"`
}

// benchProductTime is one kernel product of the CG exact GP.
type benchProductTime struct {
	N         int     `json:"n"`
	Cols      int     `json:"cols"`
	Kept      bool    `json:"kept"` // K kept whole (else recomputed by blocks at every product)
	Products  int     `json:"products"`
	MsPerProd float64 `json:"ms_per_product"` // median
	Flops     float64 `json:"flops"`
	GFLOPS    float64 `json:"gflops"`
}

// benchRoutineRate is one routine at one shape on every implementation.
type benchRoutineRate struct {
	Routine string `json:"routine"`
	Form    string `json:"form"`
	// N is the order of a square case; a step shape has M, N, K as blasCase's m, n, k and Shape as one token
	// ("200x1024x8") and names its use in the step.
	N      int                `json:"n"`
	M      int                `json:"m,omitempty"`
	K      int                `json:"k,omitempty"`
	Shape  string             `json:"shape,omitempty"`
	Use    string             `json:"use,omitempty"`
	Flops  float64            `json:"flops"`
	GFLOPS map[string]float64 `json:"gflops"` // by implementation
}

// benchModelTime is one model's training step.
type benchModelTime struct {
	Model     string  `json:"model"` // the go test benchmark timing the same step
	Steps     int     `json:"steps"`
	MsPerStep float64 `json:"ms_per_step"` // median
	MinMs     float64 `json:"min_ms"`
	// Flops is the step's flop count (benchmodels: the Step's Flops), GFLOPS the rate at the median time and
	// DgemmShare that rate over the run's DgemmReference.
	Flops      float64 `json:"flops"`
	GFLOPS     float64 `json:"gflops"`
	DgemmShare float64 `json:"dgemm_share"`
	// Minibatch names, for a full-batch deep GP, the minibatch step of its family, timed interleaved with it
	// (timeModelVs), and VsMinibatch is the median over the rounds of the full batch's rate over the minibatch
	// step's: at least 1 when the full batch reaches at least the minibatch step's share of Dgemm's rate.
	Minibatch   string  `json:"minibatch,omitempty"`
	VsMinibatch float64 `json:"vs_minibatch,omitempty"`
}

func benchCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, benchUsage)
		fs.PrintDefaults()
	}
	sizesFlag := fs.String("sizes", benchSizes, "orders n of the square BLAS matrices, comma-separated")
	minTime := fs.Duration("min-time", benchMinTime, "least time of calls per round of a BLAS figure")
	steps := fs.Int("steps", benchSteps, "timed training steps per model (after one warm-up step)")
	kernel := fs.String("kernel", "", "force gpzoo's BLAS kernel: "+strings.Join(ops.BLASKernels(), ", ")+" (default: the active one, "+ops.BLASKernel()+")")
	jsonPath := fs.String("json", "", "also write the numbers as JSON to FILE")
	modelsFlag := fs.String("models", "", "time only the training steps whose names match this regular expression (e.g. 'DGPStep/.*N=6553'; default: all)")
	products := fs.String("products", benchProducts, "rows N of the CG exact GP's kernel products, comma-separated")
	quick := fs.Bool("quick", false, fmt.Sprintf("square n = %s only, --min-time %v, %d steps per model, products at N = %s (unless given)", benchQuickSizes, benchQuickTime, benchQuickSteps, benchQuickProd))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["sizes"] {
			*sizesFlag = benchQuickSizes
		}
		if !set["min-time"] {
			*minTime = benchQuickTime
		}
		if !set["steps"] {
			*steps = benchQuickSteps
		}
		if !set["products"] {
			*products = benchQuickProd
		}
	}
	prodSizes, err := parseProducts(*products)
	if err != nil {
		return err
	}
	sizes, err := parseSizes(*sizesFlag)
	if err != nil {
		return err
	}
	if *minTime <= 0 {
		return fmt.Errorf("--min-time %v: want a positive duration (e.g. 300ms)", *minTime)
	}
	if *steps < 1 {
		return fmt.Errorf("--steps %d: want a count of at least 1", *steps)
	}
	models, err := selectModels(*modelsFlag)
	if err != nil {
		return err
	}
	width := 30
	for _, m := range models {
		width = max(width, len(m.name))
	}
	if *jsonPath != "" {
		if err := atomicfile.CheckWritable(*jsonPath); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if set["kernel"] {
		*kernel = strings.ToLower(*kernel)
		if !slices.Contains(ops.BLASKernels(), *kernel) {
			return fmt.Errorf("--kernel %q: unknown or not run by this CPU (this CPU runs %s)", *kernel, strings.Join(ops.BLASKernels(), ", "))
		}
		defer ops.SetBLASKernel(ops.BLASKernel())
		ops.SetBLASKernel(*kernel)
	}

	rep := newBenchReport(*minTime)
	fmt.Fprintf(stdout, "gpzoo bench: build %s, BLAS %s (gpzoo's kernels on this CPU: %s), GOMAXPROCS %d, %s %s/%s\n",
		rep.Build, rep.BLAS, strings.Join(rep.Kernels, ", "), rep.GOMAXPROCS, rep.GoVersion, rep.GOOS, rep.GOARCH)
	fmt.Fprintf(stdout, "CPU: AVX2 %s, FMA %s, AVX-512F %s\n", yesNo(rep.CPU.AVX2), yesNo(rep.CPU.FMA), yesNo(rep.CPU.AVX512F))

	impls := blasImpls()
	for _, im := range impls {
		rep.Implementations = append(rep.Implementations, im.name)
	}
	fmt.Fprintf(stdout, "\nBLAS, GFLOP/s (best of %d rounds of at least %v):\n", benchRounds, *minTime)
	fmt.Fprintf(stdout, "%-7s %-4s %5s", "routine", "form", "n")
	for _, im := range impls {
		fmt.Fprintf(stdout, " %14s", im.name)
	}
	fmt.Fprintln(stdout)
	for _, c := range squareCases(sizes) {
		fmt.Fprintf(stdout, "%-7s %-4s %5d", c.routine, c.form, c.n)
		row, err := timeCase(stdout, c, impls, *minTime)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		rep.Routines = append(rep.Routines, row)
	}
	fmt.Fprintf(stdout, "\nThe training steps' shapes, GFLOP/s (M = %d, B = %d, D = %d, deep-GP width %d; Dgemm m×n×k, Dtrsm/Dtrmm m×n):\n",
		stepM, stepB, stepD, stepW)
	fmt.Fprintf(stdout, "%-7s %-4s %-13s", "routine", "form", "shape")
	for _, im := range impls {
		fmt.Fprintf(stdout, " %14s", im.name)
	}
	fmt.Fprintln(stdout, "  in the step")
	for _, c := range stepCases() {
		fmt.Fprintf(stdout, "%-7s %-4s %-13s", c.routine, c.form, c.shape())
		row, err := timeCase(stdout, c, impls, *minTime)
		if err != nil {
			return err
		}
		row.M, row.K, row.Shape, row.Use = c.m, c.k, c.shape(), c.use
		fmt.Fprintf(stdout, "  %s\n", c.use)
		rep.StepShapes = append(rep.StepShapes, row)
	}

	ref := &rep.DgemmReference
	ref.Implementation, ref.N = "gpzoo-"+ops.BLASKernel(), benchRefN // the BLAS the models run on
	if ops.BLAS() == "openblas" {
		ref.Implementation = "openblas"
	}
	for _, r := range rep.Routines {
		if r.Routine == "Dgemm" && r.N == ref.N {
			ref.GFLOPS = r.GFLOPS[ref.Implementation]
		}
	}
	if ref.GFLOPS == 0 { // n = 1000 not among --sizes: time it for the reference alone
		for _, im := range impls {
			if im.name == ref.Implementation {
				c := gemmCase(blas.NoTrans, blas.NoTrans, ref.N, ref.N, ref.N)
				calls, err := rate(c.setup(rand.New(rand.NewPCG(1, uint64(ref.N)))), im, *minTime, benchRounds)
				if err != nil {
					return err
				}
				ref.GFLOPS = calls * c.flops / 1e9
			}
		}
	}
	fmt.Fprintf(stdout, "\nTraining steps (median of %d after one warm-up step; BLAS %s): ms per step, GFLOP/s from the model's\n", *steps, rep.BLAS)
	fmt.Fprintf(stdout, "flop count and its share of Dgemm NN at n = %d on %s (%.2f GFLOP/s):\n", ref.N, ref.Implementation, ref.GFLOPS)
	all := map[string]benchModel{}
	for _, m := range benchModels() {
		all[m.name] = m
	}
	for _, m := range models {
		var mt benchModelTime
		var err error
		if mb, ok := all[m.minibatch]; ok {
			mt, err = timeModelVs(m, mb, *steps)
		} else {
			mt, err = timeModel(m, *steps)
		}
		if err != nil {
			return err
		}
		mt.GFLOPS = mt.Flops / mt.MsPerStep / 1e6
		if ref.GFLOPS > 0 {
			mt.DgemmShare = mt.GFLOPS / ref.GFLOPS
		}
		fmt.Fprintf(stdout, "%-*s %10.2f ms/step  (fastest %.2f)  %7.2f GFLOP/s  %5.1f%% of Dgemm", width, mt.Model, mt.MsPerStep, mt.MinMs,
			mt.GFLOPS, 100*mt.DgemmShare)
		if mt.Minibatch != "" {
			fmt.Fprintf(stdout, "  (%.2f× the B = 1024 step's rate)", mt.VsMinibatch)
		}
		fmt.Fprintln(stdout)
		rep.Models = append(rep.Models, mt)
	}
	fmt.Fprintf(stdout, "\nThe CG exact GP's kernel product K·V (SE-ARD, D = %d, V [N,%d]; median of %d after one warm-up): ms per product, GFLOP/s:\n",
		cgproduct.ProductDim, cgproduct.ProductCols, *steps)
	for _, n := range prodSizes {
		for _, keep := range []bool{true, false} {
			pt, err := timeProduct(n, keep, *steps)
			if err != nil {
				return err
			}
			mode := "recomputed by blocks"
			if keep {
				mode = "K kept whole"
			}
			fmt.Fprintf(stdout, "N = %-7d %-22s %10.2f ms/product  %7.2f GFLOP/s\n", n, mode, pt.MsPerProd, pt.GFLOPS)
			rep.Products = append(rep.Products, pt)
		}
	}
	if *jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(*jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", *jsonPath)
	}
	return nil
}

// timeCase times c on every implementation (the same operands for all), printing each rate after the row's
// label (no newline), and returns the row.
func timeCase(stdout io.Writer, c blasCase, impls []blasImpl, minTime time.Duration) (benchRoutineRate, error) {
	row := benchRoutineRate{Routine: c.routine, Form: c.form, N: c.n, Flops: c.flops, GFLOPS: map[string]float64{}}
	call := c.setup(rand.New(rand.NewPCG(uint64(c.m), uint64(c.n)<<20|uint64(c.k))))
	for _, im := range impls {
		calls, err := rate(call, im, minTime, benchRounds)
		if err != nil {
			return row, err
		}
		row.GFLOPS[im.name] = calls * c.flops / 1e9
		fmt.Fprintf(stdout, " %14.2f", row.GFLOPS[im.name])
	}
	return row, nil
}

// newBenchReport describes this machine and build.
func newBenchReport(minTime time.Duration) *benchReport {
	rep := &benchReport{Build: ops.Build, BLAS: ops.BLAS(), Kernels: ops.BLASKernels(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, MinTimeSeconds: minTime.Seconds(), Rounds: benchRounds}
	rep.CPU.AVX2, rep.CPU.FMA, rep.CPU.AVX512F = cpu.X86.HasAVX2, cpu.X86.HasFMA, cpu.X86.HasAVX512F
	return rep
}

// parseSizes parses --sizes: a comma-separated list of orders in [1, benchMaxSize].
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--sizes %q: %q is not an integer (want e.g. 128,512,1000)", s, f)
		}
		if n < 1 || n > benchMaxSize {
			return nil, fmt.Errorf("--sizes %q: order %d outside [1, %d]", s, n, benchMaxSize)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// selectModels returns the models whose names match the regular expression expr (--models; all for ""), an
// error naming the flag when it does not compile or matches none.
func selectModels(expr string) ([]benchModel, error) {
	all := benchModels()
	if expr == "" {
		return all, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--models %q: %w", expr, err)
	}
	var ms []benchModel
	names := make([]string, len(all))
	for i, m := range all {
		names[i] = m.name
		if re.MatchString(m.name) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("--models %q matches no training step (the steps: %s)", expr, strings.Join(names, ", "))
	}
	return ms, nil
}

// benchMaxProduct bounds --products: K kept whole at N rows takes 8N² bytes.
const benchMaxProduct = 20000

// parseProducts parses --products: a comma-separated list of row counts in [1, benchMaxProduct].
func parseProducts(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > benchMaxProduct {
			return nil, fmt.Errorf("--products %q: %q is not a row count in [1, %d]", s, f, benchMaxProduct)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// timeProduct times the kernel product on n rows (K kept or recomputed): one warm-up, then the median of steps.
func timeProduct(n int, keep bool, steps int) (benchProductTime, error) {
	p, err := cgproduct.New(n, keep)
	if err != nil {
		return benchProductTime{}, err
	}
	if err := p.Run(); err != nil {
		return benchProductTime{}, err
	}
	ms := make([]float64, steps)
	for i := range ms {
		t0 := time.Now()
		if err := p.Run(); err != nil {
			return benchProductTime{}, err
		}
		ms[i] = float64(time.Since(t0).Microseconds()) / 1e3
	}
	slices.Sort(ms)
	med := ms[len(ms)/2]
	return benchProductTime{N: n, Cols: cgproduct.ProductCols, Kept: keep, Products: steps, MsPerProd: med, Flops: p.Flops, GFLOPS: p.Flops / med / 1e6}, nil
}

// timeModel builds m, runs one warm-up step and times steps more: their median and fastest in milliseconds.
func timeModel(m benchModel, steps int) (benchModelTime, error) {
	s, err := m.build()
	if err != nil {
		return benchModelTime{}, fmt.Errorf("bench %s: %w", m.name, err)
	}
	defer s.Close()
	if _, err := timeSteps(m.name, s, 1); err != nil { // warm-up: the buffers are allocated and touched
		return benchModelTime{}, err
	}
	ms := make([]float64, steps)
	for i := range ms {
		if ms[i], err = timeSteps(m.name, s, 1); err != nil {
			return benchModelTime{}, err
		}
	}
	return benchModelTime{Model: m.name, Steps: steps, MsPerStep: median(ms), MinMs: slices.Min(ms), Flops: s.Flops}, nil
}

// timeModelVs times m as timeModel does, interleaved with the steps of mb (a full-batch deep GP and the
// minibatch step of its family): after a warm-up step of each, steps rounds each time one step of m and then r
// steps of mb (r: as many as take about as long as m's step), so that both see the same load of a shared
// machine; VsMinibatch is the median over the rounds of m's rate (flops per second) over mb's in that round.
func timeModelVs(m, mb benchModel, steps int) (benchModelTime, error) {
	s, err := m.build()
	if err != nil {
		return benchModelTime{}, fmt.Errorf("bench %s: %w", m.name, err)
	}
	defer s.Close()
	sb, err := mb.build()
	if err != nil {
		return benchModelTime{}, fmt.Errorf("bench %s: %w", mb.name, err)
	}
	defer sb.Close()
	var tm, tb float64
	for range 2 { // the first step of each allocates its buffers; the second sets r
		if tm, err = timeSteps(m.name, s, 1); err != nil {
			return benchModelTime{}, err
		}
		if tb, err = timeSteps(mb.name, sb, 1); err != nil {
			return benchModelTime{}, err
		}
	}
	r := max(1, int(math.Round(tm/tb)))
	ms, ratios := make([]float64, steps), make([]float64, steps)
	for i := range ms {
		if ms[i], err = timeSteps(m.name, s, 1); err != nil {
			return benchModelTime{}, err
		}
		if tb, err = timeSteps(mb.name, sb, r); err != nil {
			return benchModelTime{}, err
		}
		ratios[i] = (s.Flops / ms[i]) / (sb.Flops / tb)
	}
	return benchModelTime{Model: m.name, Steps: steps, MsPerStep: median(ms), MinMs: slices.Min(ms), Flops: s.Flops,
		Minibatch: mb.name, VsMinibatch: median(ratios)}, nil
}

// timeSteps runs k steps of s and returns the mean time of one in milliseconds.
func timeSteps(name string, s *benchmodels.Step, k int) (float64, error) {
	t0 := time.Now()
	for range k {
		if err := s.Run(); err != nil {
			return 0, fmt.Errorf("bench %s: %w", name, err)
		}
	}
	return float64(time.Since(t0).Nanoseconds()) / 1e6 / float64(k), nil
}

// median returns the median of v (the mean of the middle two for an even count); v is sorted in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
