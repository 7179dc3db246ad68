package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/variational"
	"github.com/gpzoo/gpzoo/ops"
)

// gpzoo bench --quick prints the header, a positive GFLOP/s for every routine on every implementation, square
// and at the training steps' shapes, and a positive ms/step, GFLOP/s and share of Dgemm for every model, and
// --json writes the same numbers.
func TestBenchQuick(t *testing.T) {
	needWhite(t, "bench times the deep GPs")
	path := filepath.Join(t.TempDir(), "bench.json")
	var out, errb bytes.Buffer
	// The full-batch deep GPs take seconds a step: one of them stands for all (TestBenchModels lists them).
	full := "DGPStep/" + variational.FullBatchDGPs[1].Name()
	sel := "^(GPRStep|SVGPStep|DGPStep/(coupled-M200|decoupled-Ma500-Mb100)$|" + regexp.QuoteMeta(full) + "$)"
	if err := Main([]string{"bench", "--quick", "--models", sel, "--json", path}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	text := out.String()
	impls := []string{"gpzoo-" + ops.BLASKernel(), "gonum"}
	refImpl := impls[0] // the BLAS the models run on
	if ops.Build == "openblas" {
		impls = append(impls, "openblas")
		refImpl = "openblas"
	}
	for _, want := range append([]string{"build " + ops.Build, "BLAS " + ops.BLAS(), "GOMAXPROCS", "go1.", "AVX2", "FMA", "AVX-512F"}, impls...) {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	lines := strings.Split(text, "\n")
	// row returns the fields of the first line starting with the given fields.
	row := func(prefix ...string) []string {
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= len(prefix) && strings.Join(f[:len(prefix)], " ") == strings.Join(prefix, " ") {
				return f[len(prefix):]
			}
		}
		t.Errorf("no line %q in:\n%s", prefix, text)
		return nil
	}
	positive := func(what, s string) {
		if v, err := strconv.ParseFloat(s, 64); err != nil || !(v > 0) {
			t.Errorf("%s: %q is not a positive number", what, s)
		}
	}
	for _, r := range []string{"Dgemm", "Dsyrk", "Dtrsm", "Dpotrf"} {
		f := row(r)
		if len(f) != 2+len(impls) || f[1] != "128" {
			t.Errorf("%s: row %q, want form, n = 128 and %d rates", r, f, len(impls))
			continue
		}
		for i, im := range impls {
			positive(r+" "+im, f[2+i])
		}
	}
	// The training steps' shapes: routine, form, shape, a rate per implementation, then the use.
	shapes := [][3]string{{"Dgemm", "NN", "200x1024x8"}, {"Dgemm", "NT", "8x200x1024"}, {"Dgemm", "TN", "1024x8x200"},
		{"Dgemm", "NT", "200x200x1024"}, {"Dtrsm", "LLN", "200x1024"}, {"Dtrsm", "LLT", "200x1024"},
		{"Dtrmm", "LLT", "200x1024"}, {"Dsyrk", "LN", "200x200x1024"}, {"Dpotrf", "L", "200x200"}}
	for _, sh := range shapes {
		f := row(sh[:]...)
		if len(f) < len(impls)+1 {
			t.Errorf("%s: row %q, want %d rates and the use", sh, f, len(impls))
			continue
		}
		for i, im := range impls {
			positive(fmt.Sprint(sh, " ", im), f[i])
		}
	}
	// The models are named as the go test benchmarks that time the same steps.
	models := []string{"GPRStep/N=1000", "SVGPStep/M=200,B=1024", "DGPStep/coupled-M200", "DGPStep/decoupled-Ma500-Mb100", full}
	// Each step: ms/step, then GFLOP/s from the model's flop count and its share of Dgemm at n = 1000; the
	// full-batch step then its rate relative to its family's minibatch step's.
	for _, m := range models {
		f := row(m)
		if m == full {
			if len(f) != 16 || !strings.HasPrefix(f[9], "(") || !strings.HasSuffix(f[9], "×") || f[15] != "rate)" {
				t.Errorf("%s: row %q, want the ratio to the minibatch step's rate", m, f)
			} else {
				positive(m+" vs minibatch", strings.TrimSuffix(strings.TrimPrefix(f[9], "("), "×"))
			}
			f = f[:9]
		}
		if len(f) != 9 || f[1] != "ms/step" || f[5] != "GFLOP/s" || !strings.HasSuffix(f[6], "%") || f[8] != "Dgemm" {
			t.Errorf("%s: row %q, want ms/step, GFLOP/s and the share of Dgemm", m, f)
			continue
		}
		positive(m+" ms/step", f[0])
		positive(m+" GFLOP/s", f[4])
		positive(m+" share of Dgemm", strings.TrimSuffix(f[6], "%"))
	}
	// The CG exact GP's kernel product at --quick's N = 2000, K kept whole and recomputed by blocks.
	for _, mode := range [][]string{{"K", "kept", "whole"}, {"recomputed", "by", "blocks"}} {
		f := row(append([]string{"N", "=", "2000"}, mode...)...)
		if len(f) != 4 || f[1] != "ms/product" || f[3] != "GFLOP/s" {
			t.Errorf("kernel product %s: row %q, want ms/product and GFLOP/s", mode, f)
			continue
		}
		positive(fmt.Sprint("kernel product ", mode, " ms"), f[0])
		positive(fmt.Sprint("kernel product ", mode, " GFLOP/s"), f[2])
	}
	if !strings.Contains(text, "of Dgemm NN at n = 1000 on "+refImpl) {
		t.Errorf("output lacks the Dgemm reference at n = 1000 on %s:\n%s", refImpl, text)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Build != ops.Build || rep.BLAS != ops.BLAS() || rep.GOMAXPROCS < 1 || rep.GoVersion == "" || len(rep.Routines) != 4 || len(rep.StepShapes) != len(shapes) || len(rep.Models) != len(models) {
		t.Fatalf("bench.json: %s", b)
	}
	for _, r := range rep.Routines {
		for _, im := range impls {
			if !(r.GFLOPS[im] > 0) || r.N != 128 || !(r.Flops > 0) {
				t.Errorf("bench.json: %s %s n=%d: %v GFLOP/s", r.Routine, im, r.N, r.GFLOPS[im])
			}
		}
	}
	for i, r := range rep.StepShapes {
		if sh := shapes[i]; r.Routine != sh[0] || r.Form != sh[1] || r.Shape != sh[2] || r.Use == "" || !(r.Flops > 0) || r.M < 1 || r.N < 1 || r.K < 1 {
			t.Errorf("bench.json: step shape %d: %+v, want %s", i, r, sh)
		}
		for _, im := range impls {
			if !(r.GFLOPS[im] > 0) {
				t.Errorf("bench.json: %s %s %s: %v GFLOP/s", r.Routine, r.Shape, im, r.GFLOPS[im])
			}
		}
	}
	if ref := rep.DgemmReference; ref.Implementation != refImpl || ref.N != 1000 || !(ref.GFLOPS > 0) {
		t.Errorf("bench.json: Dgemm reference %+v", ref)
	}
	if len(rep.Products) != 2 || !rep.Products[0].Kept || rep.Products[1].Kept {
		t.Fatalf("bench.json: kernel products %+v, want N = 2000 kept, then recomputed", rep.Products)
	}
	for _, p := range rep.Products {
		if p.N != 2000 || p.Cols != 11 || p.Products != 3 || !(p.MsPerProd > 0) || math.Abs(p.GFLOPS-p.Flops/p.MsPerProd/1e6) > 1e-9*p.GFLOPS {
			t.Errorf("bench.json: kernel product %+v", p)
		}
	}
	// 2N²·11 flops kept; recomputed, the kernel's evaluation on the upper triangle besides.
	if kept, rec := rep.Products[0].Flops, rep.Products[1].Flops; kept != 2*2000*2000*11 || !(rec > kept) {
		t.Errorf("bench.json: kernel product flops %v kept, %v recomputed", kept, rec)
	}
	for i, m := range rep.Models {
		if m.Model != models[i] || m.Steps != 3 || !(m.MsPerStep > 0) || !(m.MinMs > 0) || m.MinMs > m.MsPerStep {
			t.Errorf("bench.json: model %+v", m)
		}
		// The rate is the model's flop count over the median time, its share the rate over the reference's.
		if !(m.Flops > 0) || math.Abs(m.GFLOPS-m.Flops/m.MsPerStep/1e6) > 1e-9*m.GFLOPS ||
			math.Abs(m.DgemmShare-m.GFLOPS/rep.DgemmReference.GFLOPS) > 1e-9*m.DgemmShare {
			t.Errorf("bench.json: model %s: %v flops, %v GFLOP/s, share %v", m.Model, m.Flops, m.GFLOPS, m.DgemmShare)
		}
		// Only the full-batch step is compared with its family's minibatch step.
		if wantMB := map[bool]string{true: "DGPStep/" + variational.DGPDecoupled}[m.Model == full]; m.Minibatch != wantMB ||
			(wantMB != "") != (m.VsMinibatch > 0) {
			t.Errorf("bench.json: model %s: minibatch %q, ratio %v (want %q)", m.Model, m.Minibatch, m.VsMinibatch, wantMB)
		}
	}
}

// Bad flags fail before any timing, naming the flag; --kernel forces a kernel for the run only.
func TestBenchFlags(t *testing.T) {
	needWhite(t, "bench times the deep GPs")
	for _, c := range []struct {
		args    []string
		mention string
	}{
		{[]string{"--kernel", "nosuch"}, "--kernel"},
		{[]string{"--sizes", "0"}, "--sizes"},
		{[]string{"--sizes", "x"}, "--sizes"},
		{[]string{"--sizes", "128,"}, "--sizes"},
		{[]string{"--sizes", "100000"}, "--sizes"},
		{[]string{"--min-time", "0s"}, "--min-time"},
		{[]string{"--min-time", "soon"}, "min-time"},
		{[]string{"--steps", "0"}, "--steps"},
		{[]string{"--models", "("}, "--models"},
		{[]string{"--models", "nosuch"}, "--models"},
		{[]string{"--products", "0"}, "--products"},
		{[]string{"--products", "2000,x"}, "--products"},
		{[]string{"--products", "30000"}, "--products"},
		{[]string{"--json", filepath.Join(t.TempDir(), "no", "such", "b.json")}, "--json"},
		{[]string{"extra"}, "extra"},
	} {
		var out, errb bytes.Buffer
		err := Main(append([]string{"bench"}, c.args...), &out, &errb)
		if err == nil || !strings.Contains(err.Error()+errb.String(), c.mention) {
			t.Errorf("%q: %v (want an error naming %s)", c.args, err, c.mention)
		}
		if out.Len() > 0 {
			t.Errorf("%q: printed before failing:\n%s", c.args, out.String())
		}
	}
	if err := Main([]string{"bench", "--kernel", "nosuch"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), strings.Join(ops.BLASKernels(), ", ")) {
		t.Errorf("--kernel nosuch: %v (want the kernels this CPU runs listed)", err)
	}

	prev := ops.BLASKernel()
	var out bytes.Buffer
	if err := Main([]string{"bench", "--kernel", "generic", "--sizes", "16", "--min-time", "1ms", "--steps", "1", "--products", "300", "--models", "SVGPStep"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "gpzoo-generic") {
		t.Errorf("--kernel generic: output lacks gpzoo-generic:\n%s", out.String())
	}
	// --sizes sets the square orders; the step shapes are timed as well.
	for _, want := range []string{"Dgemm   NN      16", "Dpotrf  L       16", "Dtrsm   LLN  200x1024"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--sizes 16: output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Dgemm   NN     128") || strings.Contains(out.String(), "GPRStep") {
		t.Errorf("--sizes 16 --models SVGPStep: output has n = 128 or another step:\n%s", out.String())
	}
	if ops.BLASKernel() != prev {
		t.Errorf("kernel after the run %q, want %q restored", ops.BLASKernel(), prev)
	}
}

// gpzoo bench times the exact GP, the SVGP, the minibatch deep GPs and every full-batch deep GP of Havasi et
// al.'s tables, each full-batch step against its family's minibatch step; --models selects by name.
func TestBenchModels(t *testing.T) {
	var names []string
	mb := map[string]string{}
	for _, m := range benchModels() {
		names = append(names, m.name)
		mb[m.name] = m.minibatch
	}
	want := []string{"GPRStep/N=1000", "SVGPStep/M=200,B=1024", "DGPStep/coupled-M200", "DGPStep/decoupled-Ma500-Mb100"}
	for _, s := range variational.FullBatchDGPs {
		want = append(want, "DGPStep/"+s.Name())
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("models %q, want %q", names, want)
	}
	for _, s := range variational.FullBatchDGPs {
		if got := mb["DGPStep/"+s.Name()]; got != "DGPStep/"+s.Family {
			t.Errorf("%s: compared with %q", s.Name(), got)
		}
	}
	ms, err := selectModels("N=10000")
	if err != nil || len(ms) != 2 {
		t.Errorf("--models N=10000: %d models, %v", len(ms), err)
	}
}
