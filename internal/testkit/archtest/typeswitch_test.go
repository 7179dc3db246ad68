package archtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Prediction has one contract, gp.Predictor: model files, the zoo and the CLI (and the servers and workers built
// on them) must not pick a model family by its type. TestNoModelTypeSwitch enforces it on the non-test Go files
// of the packages in predictorClients (every build tag's files), parsed with go/ast:
//
//  1. No type switch (`switch x.(type)`) may name, in any case clause and anywhere inside the case's type
//     (*T, []T, map[K]V, func(T), …), a type of a model package (modelPackages: the model families, their
//     layers and likelihoods, and package gp, whose interfaces included). Any other type switch is allowed: its
//     cases name the standard library's or the package's own types. Capability checks on a model go through a
//     single type assertion to an interface (f.Model.(gp.Predictor), lik.(gp.ClassLikelihood)), never through a
//     switch, so that a new family needs no new case anywhere.
//  2. No type assertion may name a concrete model family type (familyTypes: *gp.GPR, *models.SVGP, …): an
//     if-else chain of them is the same switch.
//  3. No dot import of a model package (its types would be unqualified and escape rules 1 and 2).
//
// Qualified names are resolved through each file's own imports, so an aliased import is caught too.
var (
	predictorClients = []string{"./gp/modelfile", "./zoo", "./serve", "./cli", "./cmd/..."}
	modelPackages    = []string{"gp", "gp/models", "gp/dgp", "gp/advgp", "gp/layers", "gp/likelihoods", "vbks"}
	familyTypes      = map[string][]string{"gp": {"GPR"}, "gp/models": {"SVGP", "SGPR"}, "gp/dgp": {"DGP"},
		"gp/advgp": {"Model", "ShardTerm"}, "vbks": {"Result"}}
)

func TestNoModelTypeSwitch(t *testing.T) {
	args := append([]string{"list", "-json=Dir,ImportPath,GoFiles,IgnoredGoFiles", "-e"}, predictorClients...)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	files := 0
	for dec.More() {
		var p struct {
			Dir, ImportPath         string
			GoFiles, IgnoredGoFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		for _, name := range append(p.GoFiles, p.IgnoredGoFiles...) {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(p.Dir, name)
			for _, v := range checkModelTypeSwitches(t, path, nil) {
				t.Error(v)
			}
			files++
		}
	}
	if files < 10 {
		t.Fatalf("checked only %d files: go list found too few (%s)", files, out)
	}
}

// TestModelTypeSwitchDetector checks the rules on small sources: what they must refuse and what they allow.
func TestModelTypeSwitchDetector(t *testing.T) {
	head := "package p\nimport (\n\t\"os\"\n\tgpm \"" + module + "/gp/models\"\n\t\"" + module + "/gp\"\n\t\"" + module + "/gp/likelihoods\"\n)\n"
	for name, c := range map[string]struct {
		body string
		bad  bool
	}{
		"family case":      {"func f(m any) { switch m.(type) { case *gpm.SVGP: } }", true},
		"nested in a type": {"func f(m any) { switch m.(type) { case []*gpm.SGPR, int: } }", true},
		"interface case":   {"func f(m any) { switch m.(type) { case gp.Predictor: } }", true},
		"likelihood case":  {"func f(l any) { switch l.(type) { case *likelihoods.Bernoulli: } }", true},
		"family assertion": {"func f(m any) { _, _ = m.(*gp.GPR) }", true},
		"dot import":       {"", true},
		"std-lib switch":   {"func f(w any) { switch w.(type) { case *os.File, error: } }", false},
		"capability":       {"func f(m any) { _, _ = m.(gp.Predictor); _, _ = m.(*likelihoods.Gaussian) }", false},
		"own types":        {"type a int\nfunc f(m any) { switch m.(type) { case a, *a: } }", false},
	} {
		src := head + c.body + "\n"
		if name == "dot import" {
			src = "package p\nimport . \"" + module + "/gp/models\"\nvar _ = SVGP{}\n"
		}
		got := checkModelTypeSwitches(t, "x.go", []byte(src))
		if (len(got) > 0) != c.bad {
			t.Errorf("%s: violations %q, want any: %v", name, got, c.bad)
		}
	}
}

// checkModelTypeSwitches parses the Go file at path (or src when not nil) and returns its violations of the
// rules of TestNoModelTypeSwitch.
func checkModelTypeSwitches(t *testing.T, path string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	var f *ast.File
	var err error
	if src != nil {
		f, err = parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	} else {
		f, err = parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	}
	if err != nil {
		t.Fatal(err)
	}
	isModel := map[string]bool{}
	for _, p := range modelPackages {
		isModel[module+"/"+p] = true
	}
	var out []string
	// local names of the imported model packages → their path inside the module
	local := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !isModel[p] {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == "." {
			out = append(out, fmt.Sprintf("%s: dot import of %s (a model package)", fset.Position(im.Pos()), p))
			continue
		}
		local[name] = strings.TrimPrefix(p, module+"/")
	}
	// modelTypes returns the model-package types named anywhere in the type expression e.
	modelTypes := func(e ast.Expr) []string {
		var names []string
		ast.Inspect(e, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					if p, ok := local[id.Name]; ok {
						names = append(names, p+"."+sel.Sel.Name)
					}
				}
			}
			return true
		})
		return names
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.TypeSwitchStmt:
			for _, cl := range s.Body.List {
				for _, e := range cl.(*ast.CaseClause).List {
					if names := modelTypes(e); len(names) > 0 {
						out = append(out, fmt.Sprintf("%s: type switch over model types (%s): predict through gp.Predictor, check capabilities with one interface assertion", fset.Position(e.Pos()), strings.Join(names, ", ")))
					}
				}
			}
		case *ast.TypeAssertExpr:
			if s.Type == nil { // x.(type) of a switch
				return true
			}
			for _, name := range modelTypes(s.Type) {
				i := strings.LastIndex(name, ".")
				for _, ft := range familyTypes[name[:i]] {
					if ft == name[i+1:] {
						out = append(out, fmt.Sprintf("%s: type assertion to the model family type %s: predict through gp.Predictor", fset.Position(s.Pos()), name))
					}
				}
			}
		}
		return true
	})
	return out
}
