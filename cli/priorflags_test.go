package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainPriorRefusedBeforeData: a malformed --prior is refused before the data are read (the CSV named does
// not exist, and the error is the prior's), naming the flag's position among the --prior flags, the parameter and
// the byte of the problem; so are MCMC settings without --mcmc and --mcmc on a family it does not sample.
func TestTrainPriorRefusedBeforeData(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such.csv")
	for _, c := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"--prior", "noise=gamma(2,-1)"}, []string{`"noise=gamma(2,-1)"`, "1st --prior", "parameter noise", "byte 14", "rate must be > 0"}},
		{[]string{"--prior", "lengthscale=lognormal(0,1)", "--prior", "layer1.variance=halfnormal()"}, []string{"2nd --prior", "parameter layer1.variance", "byte 27", "takes 1 arguments, got 0"}},
		{[]string{"--prior", "lengthscale=lognormal(0,1", "--model", "gpr"}, []string{"parameter lengthscale", `missing ")"`}},
		{[]string{"--prior", "lengthscale"}, []string{`no "="`, "byte 11"}},
		{[]string{"--prior", "noise=uniform(1,1)"}, []string{"parameter noise", "hi must be > lo", "improper"}},
		{[]string{"--prior", "ls-1=normal(0,1)"}, []string{"parameter ls-1", "byte 2"}},
		{[]string{"--prior", "noise=beta(1,1)"}, []string{`unknown prior "beta"`, "lognormal(mu,sigma)"}},
		{[]string{"--mcmc-samples", "10"}, []string{"--mcmc-samples is a setting of --mcmc nuts"}},
		{[]string{"--mcmc", "hmc", "--model", "gpr"}, []string{`--mcmc "hmc"`}},
		{[]string{"--mcmc", "nuts", "--model", "svgp"}, []string{"gpr or sgpr", "not svgp"}},
		{[]string{"--mcmc", "nuts", "--model", "gpr", "--target-accept", "1"}, []string{"--target-accept 1"}},
	} {
		args := append([]string{"train", "--csv", missing, "--target", "y", "--save", filepath.Join(dir, "m.gpz")}, c.args...)
		var out, errb bytes.Buffer
		err := Main(args, &out, &errb)
		if err == nil {
			t.Errorf("%v: accepted", c.args)
			continue
		}
		if strings.Contains(err.Error(), "no-such") {
			t.Errorf("%v: the data were read before the flags were checked: %v", c.args, err)
		}
		for _, m := range c.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%v: error %q does not mention %q", c.args, err, m)
			}
		}
	}
}

// TestTrainMCMCAndPredict: gpzoo train --model gpr --mcmc nuts with priors on every hyperparameter prints the
// NUTS diagnostics, saves a model that gpzoo predict serves, and writes the draws; without the kernel variance's
// prior it names the parameter that lacks one (before the MAP fit).
func TestTrainMCMCAndPredict(t *testing.T) {
	dir := t.TempDir()
	data := writeCSV(t, dir, 60)
	model := filepath.Join(dir, "post.gpz")
	draws := filepath.Join(dir, "draws.csv")
	base := []string{"train", "--csv", data, "--target", "y", "--features", "x1,x2", "--model", "gpr", "--quiet",
		"--mcmc", "nuts", "--chains", "2", "--mcmc-warmup", "150", "--mcmc-samples", "100", "--mcmc-keep", "20",
		"--prior", "lengthscale=lognormal(0,1)", "--prior", "noise=lognormal(-2,1)"}
	var out, errb bytes.Buffer
	err := Main(append(append([]string(nil), base...), "--save", model), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "squaredexp.variance") || !strings.Contains(err.Error(), "--prior") {
		t.Fatalf("no prior on the kernel's variance: %v", err)
	}
	out.Reset()
	if err := Main(append(base, "--prior", "squaredexp.variance=lognormal(0,1)", "--save", model, "--mcmc-draws", draws), &out, &errb); err != nil {
		t.Fatalf("train: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"NUTS: 2 chains × 100 draws after 150 warmup", "R-hat", "squaredexp.lengthscales[0]", "likelihood.variance", "divergent", "priors: ", "test RMSE", draws} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("train's output lacks %q:\n%s", want, out.String())
		}
	}
	rows := readCSVFile(t, draws)
	if len(rows) != 201 || strings.Join(rows[0][:3], ",") != "chain,draw,squaredexp.variance" {
		t.Errorf("draws CSV: %d rows, header %v", len(rows), rows[0])
	}
	pred := filepath.Join(dir, "pred.csv")
	if err := Main([]string{"predict", "--model", model, "--input", data, "--out", pred}, &out, &errb); err != nil {
		t.Fatalf("predict: %v", err)
	}
	if recs := readCSVFile(t, pred); len(recs) != 61 || recs[0][0] != "mean" {
		t.Errorf("predictions: %d rows, header %v", len(recs), recs[0])
	}
	if _, err := os.Stat(model); err != nil {
		t.Error(err)
	}
}
