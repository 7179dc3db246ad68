package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gpzoo/gpzoo"

// allowed lists, for each package of the module, the module packages it may import (non-test code).
// Packages under cmd/ and examples/ may import anything; nothing may import them. Package cli (the command line
// as a library) may import what the command did; only cmd/ and examples/ may import it.
var allowed = map[string][]string{
	"ops":                        {"ops/internal/blas", "ops/internal/vmath", "ops/internal/parallel"},
	"graph":                      {"ops"},
	"gp":                         {"graph", "ops"},
	"gp/gptest":                  {"gp", "graph", "ops", "internal/testkit/gradcheck", "internal/testkit/benchmodels"},
	"gp/likelihoods":             {"gp", "graph", "ops"},
	"gp/layers":                  {"gp", "graph", "ops"},
	"gp/dgp":                     {"gp", "graph", "ops"},
	"gp/models":                  {"gp", "gp/layers", "gp/likelihoods", "graph", "ops"},
	"gp/advgp":                   {"gp", "gp/layers", "gp/likelihoods", "gp/models", "graph", "ops"},
	"gp/grammar":                 {"gp", "graph", "ops"},
	"gp/approx":                  {"gp", "graph", "ops"},
	"gp/cg":                      {"gp", "graph", "ops"},
	"vbks":                       {"gp", "gp/grammar", "gp/layers", "gp/likelihoods", "gp/models", "graph", "ops", "train", "datasets"},
	"cluster":                    {"gp", "gp/advgp", "gp/cg", "graph", "ops", "train", "datasets", "internal/atomicfile", "internal/access"},
	"gp/modelfile":               {"gp", "gp/cg", "gp/layers", "gp/likelihoods", "gp/models", "gp/dgp", "gp/approx", "gp/bayes", "graph", "ops", "datasets", "internal/atomicfile"},
	"gp/bayes":                   {"gp", "graph", "ops", "mcmc"},
	"datasets":                   {"internal/atomicfile"},
	"mcmc":                       {},
	"plots":                      {},
	"oip/pb":                     {},
	"train":                      {"gp", "graph", "ops", "datasets", "internal/atomicfile"},
	"zoo":                        {"gp", "gp/cg", "gp/likelihoods", "gp/layers", "gp/models", "gp/dgp", "gp/approx", "gp/bayes", "mcmc", "gp/modelfile", "gp/advgp", "gp/grammar", "cluster", "vbks", "train", "datasets", "plots", "graph", "ops", "internal/atomicfile"},
	"internal/testkit/gradcheck": {"ops", "graph"},
	"internal/testkit/archtest":  {},
	"internal/atomicfile":        {},
	"internal/access":            {},
	"internal/testkit/datatest":  {"datasets"},

	// The numerics floor below ops (Go's internal rule lets only ops/... import it): gpzoo's level-3 BLAS,
	// the vectorised elementwise math and the choice of their kernels by CPU.
	"ops/internal/blas":     {"ops/internal/cpusel", "ops/internal/parallel"},
	"ops/internal/vmath":    {"ops/internal/cpusel"},
	"ops/internal/cpusel":   {},
	"ops/internal/parallel": {},

	// The Open Inference Protocol's REST messages (and their conversions to and from oip/pb's gRPC messages)
	// and the prediction server.
	"oip":   {"oip/pb"},
	"serve": {"gp", "gp/modelfile", "datasets", "oip", "oip/pb", "internal/access"},
	// The Go client of the protocol (REST and gRPC).
	"client": {"oip", "oip/pb", "internal/access"},

	// The command line as a library; cmd/gpzoo is its main.
	"cli": {"datasets", "cluster", "gp", "gp/bayes", "gp/modelfile", "internal/atomicfile", "internal/testkit/benchmodels",
		"internal/testkit/benchmodels/variational", "internal/testkit/benchmodels/cgproduct", "ops", "plots", "train", "vbks", "zoo", "serve", "oip",
		"client", "internal/access"},

	// The models the step benchmarks (gp, gp/models, gp/dgp) and gpzoo bench time.
	"internal/testkit/benchmodels":             {"gp", "graph", "ops"},
	"internal/testkit/benchmodels/cgproduct":   {"gp", "gp/cg", "internal/testkit/benchmodels"},
	"internal/testkit/benchmodels/variational": {"gp", "gp/likelihoods", "gp/layers", "gp/models", "gp/dgp", "train", "internal/testkit/benchmodels"},
}

// engineAllowed are the only packages whose non-test code may import the engine (gorgonia) directly.
var engineAllowed = map[string]bool{"ops": true, "graph": true, "internal/testkit/gradcheck": true}

func TestImportDAG(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		free := strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "examples/")
		ok, known := allowed[pkg]
		if !known && !free {
			t.Errorf("package %q has no entry in the import DAG (add it to ARCHITECTURE.md and this test)", pkg)
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "gorgonia.org/") && !free && !engineAllowed[pkg] {
				t.Errorf("%s imports the engine %s directly: go through package graph", pkg, imp)
			}
			if strings.HasPrefix(imp, "github.com/nats-io/") && !free && pkg != "cluster" {
				t.Errorf("%s imports %s: only package cluster talks to NATS", pkg, imp)
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(dep, "cmd/") || strings.HasPrefix(dep, "examples/") {
				t.Errorf("%s imports %s: nothing may import a command or an example", pkg, dep)
			}
			if free {
				continue
			}
			if dep == "cli" {
				t.Errorf("%s imports cli: only cmd/ and examples/ may import the command line", pkg)
				continue
			}
			if !contains(ok, dep) {
				t.Errorf("forbidden import: %s -> %s", pkg, dep)
			}
		}
	}
	if checked < 8 {
		t.Errorf("only %d packages checked: is go list working?", checked)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
