package cli

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The bad-input matrix: the CLI's train, predict and run entry points over malformed files, flags and models.
// For every case: no panic; a non-zero exit (an error from Main) exactly where the input must fail; the message
// names the file, row, column or flag at fault; and no file that existed before the command was changed or
// removed (each case runs in a folder of its own, which is also its working directory, where train saves a model
// by default; the folder is snapshotted before and after).

// matrixCase is one command of the matrix.
type matrixCase struct {
	name string
	// files are created in the case's folder before the command (beside good.csv and model.gpz); a nil value
	// with a name ending in "/" makes a directory, "fifo" a named pipe.
	files map[string][]byte
	// args is the command line; "{d}" stands for the case's folder.
	args []string
	// fail says the command must fail; mention lists what its message must contain ("{d}" expanded).
	fail    bool
	mention []string
	// stdout lists what a successful command must print; creates are the files it must create.
	stdout  []string
	creates []string
}

// goodCSV is a small, learnable regression table: y = sin(2a) + b/2 + noise.
func goodCSV(n int, sep string) []byte {
	rng := rand.New(rand.NewPCG(11, 12))
	var b bytes.Buffer
	fmt.Fprintf(&b, "a%sb%sy\n", sep, sep)
	for i := 0; i < n; i++ {
		a, c := 4*rng.Float64()-2, 4*rng.Float64()-2
		fmt.Fprintf(&b, "%.6f%s%.6f%s%.6f\n", a, sep, c, sep, math.Sin(2*a)+0.5*c+0.05*rng.NormFloat64())
	}
	return b.Bytes()
}

// table builds a CSV from a header and rows.
func table(header string, rows ...string) []byte {
	return []byte(header + "\n" + strings.Join(rows, "\n") + "\n")
}

// withCell returns goodCSV(n) with data row r (1-based) column c (0-based) replaced by v.
func withCell(n, r, c int, v string) []byte {
	lines := strings.Split(strings.TrimSuffix(string(goodCSV(n, ",")), "\n"), "\n")
	cells := strings.Split(lines[r], ",")
	cells[c] = v
	lines[r] = strings.Join(cells, ",")
	return []byte(strings.Join(lines, "\n") + "\n")
}

var (
	matrixModelOnce  sync.Once
	matrixModelBytes []byte
	matrixModelErr   error
)

// matrixModel returns the bytes of a small model trained on goodCSV (columns a, b; target y), trained once.
func matrixModel(t *testing.T) []byte {
	t.Helper()
	matrixModelOnce.Do(func() {
		dir := t.TempDir()
		csvPath := filepath.Join(dir, "good.csv")
		if matrixModelErr = os.WriteFile(csvPath, goodCSV(60, ","), 0o644); matrixModelErr != nil {
			return
		}
		var out, errb bytes.Buffer
		model := filepath.Join(dir, "m.gpz")
		if matrixModelErr = Main([]string{"train", "--csv", csvPath, "--target", "y", "--iters", "5", "--inducing", "5", "--quiet", "--save", model}, &out, &errb); matrixModelErr != nil {
			return
		}
		matrixModelBytes, matrixModelErr = os.ReadFile(model)
	})
	if matrixModelErr != nil {
		t.Fatalf("training the matrix's model: %v", matrixModelErr)
	}
	return matrixModelBytes
}

// corrupt returns a copy of b changed by f.
func corrupt(b []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(b)) }

// snapshot maps every file below dir to its mode and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		m[p] = h
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func matrixCases(model []byte) []matrixCase {
	named := cmp.Or(standIn("matern32"), "rq") // a kernel printed by its registered name, in an expression
	train := func(csv string, extra ...string) []string {
		return append([]string{"train", "--csv", "{d}/" + csv, "--target", "y", "--iters", "3", "--inducing", "5", "--quiet"}, extra...)
	}
	predict := func(extra ...string) []string { return append([]string{"predict"}, extra...) }
	runE := func(extra ...string) []string {
		return append([]string{"run", "airfoil/svgp", "--iters", "2", "--inducing", "5", "--quiet"}, extra...)
	}
	newer := corrupt(model, func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 99); return b })
	flipped := corrupt(model, func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b })
	f := func(name string, content []byte) map[string][]byte { return map[string][]byte{name: content} }
	return []matrixCase{
		// train: the data file.
		{name: "empty file", files: f("e.csv", nil), args: train("e.csv"), fail: true, mention: []string{"e.csv", "no header"}},
		{name: "header only", files: f("h.csv", []byte("a,b,y\n")), args: train("h.csv"), fail: true, mention: []string{"h.csv", "no data rows"}},
		{name: "one row", files: f("o.csv", table("a,b,y", "1,2,3")), args: train("o.csv"), fail: true, mention: []string{"o.csv", "1 data row"}},
		{name: "duplicate rows", files: f("dup.csv", append(goodCSV(30, ","), goodCSV(30, ",")[len("a,b,y\n"):]...)), args: train("dup.csv", "--save", "{d}/dup.gpz"), creates: []string{"dup.gpz"}},
		{name: "constant feature", files: f("cf.csv", bytes.ReplaceAll(withCell(40, 1, 1, "7"), []byte(","), []byte(","))), args: train("cf.csv", "--features", "a,b", "--save", "{d}/cf.gpz"), creates: []string{"cf.gpz"}},
		{name: "constant target", files: f("ct.csv", table("a,y", "1,5", "2,5", "3,5", "4,5", "5,5", "6,5", "7,5", "8,5", "9,5", "10,5", "11,5")), args: train("ct.csv", "--save", "{d}/ct.gpz"), creates: []string{"ct.gpz"}},
		{name: "NaN cell", files: f("nan.csv", withCell(30, 3, 0, "NaN")), args: train("nan.csv"), fail: true, mention: []string{"nan.csv", "data row 3", `"a"`, "non-finite"}},
		{name: "Inf cell", files: f("inf.csv", withCell(30, 5, 1, "-Inf")), args: train("inf.csv"), fail: true, mention: []string{"inf.csv", "data row 5", `"b"`}},
		{name: "1e999 cell", files: f("big.csv", withCell(30, 2, 2, "1e999")), args: train("big.csv"), fail: true, mention: []string{"big.csv", "data row 2", `"y"`, "1e999"}},
		{name: "ragged row, extra field", files: f("r1.csv", withCell(30, 4, 2, "1,2")), args: train("r1.csv"), fail: true, mention: []string{"r1.csv", "data row 4", "4 fields"}},
		{name: "ragged row, missing field", files: f("r2.csv", table("a,b,y", "1,2,3", "4,5", "7,8,9")), args: train("r2.csv"), fail: true, mention: []string{"r2.csv", "data row 2", "2 fields"}},
		{name: "BOM", files: f("bom.csv", append([]byte("\uFEFF"), goodCSV(30, ",")...)), args: train("bom.csv", "--save", "{d}/bom.gpz"), creates: []string{"bom.gpz"}},
		{name: "CRLF", files: f("crlf.csv", bytes.ReplaceAll(goodCSV(30, ","), []byte("\n"), []byte("\r\n"))), args: train("crlf.csv", "--save", "{d}/crlf.gpz"), creates: []string{"crlf.gpz"}},
		{name: "quoted commas in an unused column", files: f("q.csv", table("name,a,y", `"Smith, J",1,2`, `"Doe, A",2,4`, `"Roe, B",3,5`, `"Poe, E",4,9`, `"Li, X",5,11`, `"Wu, Y",6,12`)), args: train("q.csv", "--features", "a", "--save", "{d}/q.gpz"), creates: []string{"q.gpz"}},
		{name: "quoted commas in a used column", files: f("q2.csv", table("name,a,y", `"Smith, J",1,2`, `"Doe, A",2,4`)), args: train("q2.csv"), fail: true, mention: []string{"q2.csv", `"name"`, "Smith, J", "categorical"}},
		{name: "duplicate column names", files: f("dc.csv", table("a,a,y", "1,2,3", "4,5,6")), args: train("dc.csv"), fail: true, mention: []string{"dc.csv", `"a"`, "twice"}},
		{name: "missing column name", files: f("mc.csv", table(",b,y", "1,2,3", "4,5,6")), args: train("mc.csv"), fail: true, mention: []string{"mc.csv", "column 1", "empty name"}},
		{name: "target not in header", files: f("nt.csv", goodCSV(20, ",")), args: []string{"train", "--csv", "{d}/nt.csv", "--target", "z", "--quiet"}, fail: true, mention: []string{"nt.csv", `"z"`, `"a", "b", "y"`}},
		{name: "single class", files: f("sc.csv", table("a,y", "1,1", "2,1", "3,1")), args: train("sc.csv", "--classify"), fail: true, mention: []string{"sc.csv", `"y"`, "1 distinct label"}},
		{name: "string labels", files: f("sl.csv", table("a,y", "1,cat", "2,dog", "3,cat")), args: train("sl.csv", "--classify"), fail: true, mention: []string{"sl.csv", `"y"`, "cat"}},
		{name: "non-integer labels", files: f("fl.csv", table("a,y", "1,0", "2,1.5", "3,0")), args: train("fl.csv", "--classify"), fail: true, mention: []string{"fl.csv", "data row 2", `"y"`, "not an integer"}},
		{name: "non-UTF-8 cell", files: f("u8.csv", table("a,b,y", "1,2,3", "4,\xff\xfe,6")), args: train("u8.csv"), fail: true, mention: []string{"u8.csv", `"b"`, "row 2"}},
		{name: "non-UTF-8 header", files: f("u8h.csv", table("a,\xff,y", "1,2,3", "4,5,6")), args: train("u8h.csv"), fail: true, mention: []string{"u8h.csv", "column 2", "UTF-8"}},
		{name: "semicolon decimal commas", files: f("dcm.csv", table("a;y", "1,5;2", "2,5;3")), args: train("dcm.csv"), fail: true, mention: []string{"dcm.csv", `"a"`, "decimal comma"}},
		{name: "pipe-separated", files: f("pipe.csv", table("a|b|y", "1|2|3")), args: train("pipe.csv"), fail: true, mention: []string{"pipe.csv", "a|b|y", "split at comma"}},
		{name: "corrupt gzip", files: f("gz.csv", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3}), args: train("gz.csv"), fail: true, mention: []string{"gz.csv", "gzip"}},
		{name: "a directory as the data", files: f("dir.csv/", nil), args: train("dir.csv"), fail: true, mention: []string{"dir.csv", "directory"}},
		{name: "a FIFO as the data", files: f("fifo.csv", []byte("fifo")), args: train("fifo.csv"), fail: true, mention: []string{"fifo.csv", "named pipe"}},
		{name: "missing data file", args: train("none.csv"), fail: true, mention: []string{"none.csv", "no such file"}},
		{name: "semicolon-separated", files: f("semi.csv", goodCSV(40, ";")), args: train("semi.csv", "--save", "{d}/semi.gpz"), stdout: []string{"semicolon-separated"}, creates: []string{"semi.gpz"}},
		{name: "tab-separated", files: f("tab.csv", goodCSV(40, "\t")), args: train("tab.csv", "--save", "{d}/tab.gpz"), stdout: []string{"tab-separated"}, creates: []string{"tab.gpz"}},
		{name: "target of magnitude 1e158", files: f("huge.csv", hugeCSV()), args: train("huge.csv", "--save", "{d}/huge.gpz"), stdout: []string{"test RMSE", "e+15"}, creates: []string{"huge.gpz"}},
		{name: "features not in header", files: f("good.csv", goodCSV(20, ",")), args: train("good.csv", "--features", "a,zz"), fail: true, mention: []string{"good.csv", `"zz"`}},
		{name: "target among the features", args: train("good.csv", "--features", "a,y"), fail: true, mention: []string{`"y"`, "feature"}},
		// train: flags.
		{name: "--inducing larger than the data", args: train("good.csv", "--inducing", "1000", "--save", "{d}/mi.gpz"), creates: []string{"mi.gpz"}},
		{name: "--batch larger than the data", args: train("good.csv", "--batch", "1000", "--save", "{d}/bb.gpz"), creates: []string{"bb.gpz"}},
		{name: "--iters 0", args: train("good.csv", "--iters", "0"), fail: true, mention: []string{"--iters 0"}},
		{name: "--iters negative", args: train("good.csv", "--iters", "-5"), fail: true, mention: []string{"--iters -5"}},
		{name: "--inducing 0", args: train("good.csv", "--inducing", "0"), fail: true, mention: []string{"--inducing 0"}},
		{name: "--batch negative", args: train("good.csv", "--batch", "-1"), fail: true, mention: []string{"--batch -1"}},
		{name: "--mean-bases negative", args: train("good.csv", "--model", "orth", "--mean-bases", "-2"), fail: true, mention: []string{"--mean-bases -2"}},
		{name: "--lr 1e6", args: train("good.csv", "--lr", "1e6"), fail: true, mention: []string{"--lr 1e+06"}},
		{name: "--lr negative", args: train("good.csv", "--lr", "-0.1"), fail: true, mention: []string{"--lr -0.1"}},
		{name: "--lr NaN", args: train("good.csv", "--lr", "NaN"), fail: true, mention: []string{"--lr NaN"}},
		{name: "--test-fraction 1.5", args: train("good.csv", "--test-fraction", "1.5"), fail: true, mention: []string{"--test-fraction 1.5"}},
		{name: "--test-fraction negative", args: train("good.csv", "--test-fraction", "-0.1"), fail: true, mention: []string{"--test-fraction -0.1"}},
		{name: "--lr with an L-BFGS family", args: train("good.csv", "--model", "sgpr", "--lr", "0.1"), fail: true, mention: []string{"--lr", "sgpr"}},
		{name: "--lr with gpr's Cholesky solver", args: train("good.csv", "--model", "gpr", "--solver", "cholesky", "--lr", "0.1"), fail: true, mention: []string{"--lr", "--solver cholesky"}},
		{name: "--checkpoint with an L-BFGS family", args: train("good.csv", "--model", "sgpr", "--checkpoint", "{d}/ck"), fail: true, mention: []string{"--checkpoint", "sgpr"}},
		{name: "--resume without --checkpoint", args: train("good.csv", "--resume"), fail: true, mention: []string{"--resume", "--checkpoint"}},
		{name: "unknown --model", args: train("good.csv", "--model", "nope"), fail: true, mention: []string{`"nope"`, "svgp"}},
		{name: "unknown --likelihood", args: train("good.csv", "--likelihood", "nope"), fail: true, mention: []string{`"nope"`, "gaussian"}},
		{name: "class likelihood on a real target", args: train("good.csv", "--likelihood", "bernoulli"), fail: true, mention: []string{"good.csv", `"y"`}},
		{name: "poisson: negative count", files: f("pn.csv", table("a,y", "1,0", "2,-1", "3,4", "4,2")), args: train("pn.csv", "--likelihood", "poisson"), fail: true, mention: []string{"pn.csv", "data row 2", `"y"`, "-1", "count"}},
		{name: "poisson: fractional count", files: f("pf.csv", table("a,y", "1,0", "2,1", "3,2.5", "4,2")), args: train("pf.csv", "--likelihood", "poisson"), fail: true, mention: []string{"pf.csv", "data row 3", `"y"`, "2.5", "count"}},
		{name: "poisson: NaN count", files: f("pnan.csv", table("a,y", "1,0", "2,NaN", "3,4", "4,2")), args: train("pnan.csv", "--likelihood", "poisson"), fail: true, mention: []string{"pnan.csv", "data row 2", `"y"`, "non-finite"}},
		{name: "poisson: counts", files: f("pc.csv", table("a,y", "1,0", "2,3", "3,4", "4,2", "5,7", "6,1")), args: train("pc.csv", "--likelihood", "Poisson", "--save", "{d}/pc.gpz"), stdout: []string{"poisson: not standardised", "test RMSE"}, creates: []string{"pc.gpz"}},
		{name: "poisson with sgpr", files: f("pg.csv", table("a,y", "1,0", "2,3", "3,4")), args: train("pg.csv", "--model", "sgpr", "--likelihood", "poisson"), fail: true, mention: []string{"sgpr", "gaussian", "poisson", "--inference"}},
		{name: "poisson with gpr: the Laplace approximation", files: f("pl.csv", table("a,y", "1,0", "2,3", "3,4", "4,2", "5,7", "6,1")), args: train("pl.csv", "--model", "gpr", "--likelihood", "poisson", "--save", "{d}/pl.gpz"), stdout: []string{"Laplace approximation", "test RMSE"}, creates: []string{"pl.gpz"}},
		{name: "--inference with svgp", args: train("good.csv", "--model", "svgp", "--inference", "ep"), fail: true, mention: []string{"--inference", "gpr", "svgp"}},
		{name: "--inference with the gaussian likelihood", args: train("good.csv", "--model", "gpr", "--inference", "ep"), fail: true, mention: []string{"--inference", "gaussian"}},
		{name: "--kernel incomplete", args: train("good.csv", "--kernel", "se+"), fail: true, mention: []string{"--kernel", `"se+"`, "byte 2"}},
		{name: "--kernel unknown", args: train("good.csv", "--kernel", "gibbs"), fail: true, mention: []string{"--kernel", `"gibbs"`, "PER, LIN, RQ, SE"}},
		{name: "--kernel expression", args: train("good.csv", "--kernel", named+"+lin", "--save", "{d}/ke.gpz"), stdout: []string{"kernel: LIN+" + strings.ToUpper(named)}, creates: []string{"ke.gpz"}},
		{name: "--layers 0", args: train("good.csv", "--model", "dgp", "--layers", "0"), fail: true, mention: []string{"--layers", `"0"`}},
		{name: "--layers not a number", args: train("good.csv", "--model", "dgp", "--layers", "x"), fail: true, mention: []string{"--layers", `"x"`}},
		{name: "--layer-family unknown", args: train("good.csv", "--model", "dgp", "--layer-family", "odd"), fail: true, mention: []string{`"odd"`}},
		{name: "--seed negative", args: train("good.csv", "--seed", "-1"), fail: true, mention: []string{"-seed"}},
		{name: "unknown flag", args: train("good.csv", "--frobnicate"), fail: true, mention: []string{"frobnicate"}},
		{name: "stray argument", args: train("good.csv", "extra"), fail: true, mention: []string{"extra"}},
		{name: "default model file exists", files: f("good.gpz", []byte("the user's first model")), args: train("good.csv"), fail: true, mention: []string{"good.gpz", "--force", "--save"}},
		{name: "--save is the data file", args: train("good.csv", "--save", "{d}/good.csv"), fail: true, mention: []string{"{d}/good.csv", "--save"}},
		{name: "--save into a missing folder", args: train("good.csv", "--save", "{d}/no/m.gpz"), fail: true, mention: []string{"{d}/no/m.gpz", "--save"}},
		{name: "--save is a directory", files: f("sd/", nil), args: train("good.csv", "--save", "{d}/sd"), fail: true, mention: []string{"{d}/sd", "directory"}},
		// predict: the model file.
		{name: "missing model file", args: predict("--model", "{d}/none.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"none.gpz", "no such file"}},
		{name: "empty model file", files: f("e.gpz", nil), args: predict("--model", "{d}/e.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"e.gpz"}},
		{name: "truncated model file", files: f("t.gpz", model[:len(model)/2]), args: predict("--model", "{d}/t.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"t.gpz", "truncated"}},
		{name: "bit-flipped model file", files: f("bf.gpz", flipped), args: predict("--model", "{d}/bf.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"bf.gpz", "checksum"}},
		{name: "newer-version model file", files: f("nv.gpz", newer), args: predict("--model", "{d}/nv.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"nv.gpz", "version 99"}},
		{name: "a CSV as the model", args: predict("--model", "{d}/good.csv", "--input", "{d}/good.csv"), fail: true, mention: []string{"good.csv", "not a gpzoo model"}},
		{name: "a directory as the model", files: f("md.gpz/", nil), args: predict("--model", "{d}/md.gpz", "--input", "{d}/good.csv"), fail: true, mention: []string{"md.gpz", "directory"}},
		// predict: the inputs and flags.
		{name: "prediction input missing a feature", files: f("in.csv", table("a,c", "1,2")), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in.csv"), fail: true, mention: []string{"in.csv", `"b"`}},
		{name: "prediction input with extra columns", files: f("in2.csv", table("id,b,a,note", "7,0.5,0.25,hello", "8,1,1,world")), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in2.csv", "--out", "{d}/p.csv"), creates: []string{"p.csv"}},
		{name: "prediction input with NaN", files: f("in3.csv", table("a,b", "1,2", "NaN,3")), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in3.csv"), fail: true, mention: []string{"in3.csv", "data row 2", `"a"`}},
		{name: "prediction input empty", files: f("in4.csv", nil), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in4.csv"), fail: true, mention: []string{"in4.csv"}},
		{name: "prediction input header only", files: f("in5.csv", []byte("a,b\n")), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in5.csv"), fail: true, mention: []string{"in5.csv", "no data rows"}},
		{name: "prediction input ragged", files: f("in6.csv", table("a,b", "1,2", "3")), args: predict("--model", "{d}/model.gpz", "--input", "{d}/in6.csv"), fail: true, mention: []string{"in6.csv", "data row 2"}},
		{name: "--out is the input", args: predict("--model", "{d}/model.gpz", "--input", "{d}/good.csv", "--out", "{d}/good.csv"), fail: true, mention: []string{"--out", "{d}/good.csv"}},
		{name: "--out into a missing folder", args: predict("--model", "{d}/model.gpz", "--input", "{d}/good.csv", "--out", "{d}/no/p.csv"), fail: true, mention: []string{"--out", "{d}/no/p.csv"}},
		{name: "--samples negative", args: predict("--model", "{d}/model.gpz", "--input", "{d}/good.csv", "--samples", "-1"), fail: true, mention: []string{"--samples -1"}},
		{name: "predict without --input", args: predict("--model", "{d}/model.gpz"), fail: true, mention: []string{"--input"}},
		// run: a zoo entry on the data embedded in the binary.
		{name: "run on embedded data", args: runE("--out", "{d}/r.json"), creates: []string{"r.json"}, stdout: []string{"airfoil/svgp", "test RMSE"}},
		{name: "run an unknown entry", args: []string{"run", "nope/none"}, fail: true, mention: []string{"nope/none", "gpzoo list"}},
		{name: "run with a missing data folder", args: runE("--data", "{d}/nodata"), fail: true, mention: []string{"{d}/nodata"}},
		{name: "run --split negative", args: runE("--split", "-1"), fail: true, mention: []string{"--split -1"}},
		{name: "run --split beyond the folds", args: runE("--split", "99"), fail: true, mention: []string{"99"}},
		{name: "run --splits reversed", args: runE("--splits", "5-2"), fail: true, mention: []string{"--splits", "5-2"}},
		{name: "run --iters negative", args: runE("--iters", "-2"), fail: true, mention: []string{"--iters -2"}},
		{name: "run --seed not a number", args: runE("--seed", "x"), fail: true, mention: []string{"--seed", `"x"`}},
		{name: "run --save into a missing folder", args: runE("--save", "{d}/no/m.gpz"), fail: true, mention: []string{"{d}/no/m.gpz"}},
		{name: "run --optimizer unknown", args: runE("--optimizer", "sgd"), fail: true, mention: []string{"sgd"}},
	}
}

// hugeCSV is a table whose target has magnitude ~1e158 and features of magnitude 1e8 and 1e-8.
func hugeCSV() []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	var b bytes.Buffer
	b.WriteString("a,b,y\n")
	for i := 0; i < 60; i++ {
		a, c := 2*rng.Float64()-1, 2*rng.Float64()-1
		fmt.Fprintf(&b, "%g,%g,%g\n", a*1e8, c*1e-8, (a+c*c)*1e158)
	}
	return b.Bytes()
}

func TestBadInputMatrix(t *testing.T) {
	model := matrixModel(t)
	cases := matrixCases(model)
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			base := map[string][]byte{"good.csv": goodCSV(60, ","), "model.gpz": model}
			for name, content := range c.files {
				base[name] = content
			}
			for name, content := range base {
				p := filepath.Join(dir, name)
				var err error
				switch {
				case strings.HasSuffix(name, "/"):
					err = os.Mkdir(p, 0o755)
				case string(content) == "fifo":
					err = mkfifo(p)
				default:
					err = os.WriteFile(p, content, 0o644)
				}
				if err != nil {
					t.Skipf("cannot make %s here: %v", name, err)
				}
			}
			expand := func(s string) string { return strings.ReplaceAll(s, "{d}", dir) }
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = expand(a)
			}
			before := snapshot(t, dir)
			var out, errb bytes.Buffer
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
						t.Errorf("%q panicked: %v", args, r)
					}
				}()
				return Main(args, &out, &errb)
			}()
			if err != nil && os.Getenv("MATRIX_VERBOSE") != "" {
				t.Logf("%v", err)
			}
			switch {
			case c.fail && err == nil:
				t.Errorf("%q succeeded; it must fail\n%s", args, out.String())
			case !c.fail && err != nil:
				t.Errorf("%q: %v\n%s", args, err, errb.String())
			}
			if err != nil {
				for _, m := range c.mention {
					if !strings.Contains(err.Error(), expand(m)) {
						t.Errorf("%q: message %q does not mention %q", args, err, expand(m))
					}
				}
			} else {
				for _, m := range c.stdout {
					if !strings.Contains(out.String(), m) {
						t.Errorf("%q: output does not mention %q:\n%s", args, m, out.String())
					}
				}
				for _, name := range c.creates {
					if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
						t.Errorf("%q did not create %s: %v", args, name, err)
					}
				}
				if s := out.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
					t.Errorf("%q reports a non-finite number:\n%s", args, s)
				}
			}
			after := snapshot(t, dir)
			for p, h := range before {
				if after[p] != h {
					t.Errorf("%q changed or removed %s", args, p)
				}
			}
		})
	}
}
