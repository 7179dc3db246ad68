package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update-reference", false, "rewrite docs/cli.md from the commands' --help")

// referencePath is the generated command-line reference, beside the other docs.
var referencePath = filepath.Join("..", "docs", "cli.md")

// cliReference returns docs/cli.md's text: gpzoo help, then every command's --help, exactly as they print.
func cliReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# gpzoo command-line reference\n\n")
	b.WriteString("Generated from the commands' own `--help` by `go test ./cli -run TestCLIReference -update-reference`;\n")
	b.WriteString("a test fails when it and the commands disagree. Every command prints the same text with `--help` (exit status 0).\n")
	b.WriteString("An unknown command or flag exits with status 2, a failed run with 1.\n\n")
	help := func(args ...string) string {
		var out, errb bytes.Buffer
		if err := Main(args, &out, &errb); err != nil {
			t.Fatalf("gpzoo %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimRight(out.String(), "\n")
	}
	b.WriteString("## Contents\n\n")
	for _, c := range commands {
		if c.run != nil {
			fmt.Fprintf(&b, "- [gpzoo %s](#gpzoo-%s)\n", c.name, c.name)
		}
	}
	b.WriteString("\n## gpzoo help\n\n```text\n" + help("help") + "\n```\n")
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		fmt.Fprintf(&b, "\n## gpzoo %s\n\n```text\n%s\n```\n", c.name, help(c.name, "--help"))
	}
	return b.String()
}

// TestCLIReference: docs/cli.md is what the commands' --help print (regenerate it with -update-reference).
func TestCLIReference(t *testing.T) {
	t.Setenv("GPZOO_DATA", "") // flags whose default is read from the environment print it: the reference has none
	want := cliReference(t)
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v (write it with go test ./cli -run TestCLIReference -update-reference)", err)
	}
	if string(got) != want {
		t.Errorf("%s differs from the commands' --help: regenerate it with go test ./cli -run TestCLIReference -update-reference", referencePath)
	}
}
