// Command gpzoo runs gpzoo's model zoo: `gpzoo list` shows the entries, `gpzoo run [ENTRY]` trains one and
// reports its test metrics (--splits: on several splits, with mean ± std; without an entry, the showcase runs the
// default entry on data embedded in the binary), `gpzoo report` tabulates JSON results against the published
// numbers; entries that write training curves (ringnorm/odvgp-illustration) write them as CSV to --curves.
package main

import (
	"fmt"
	"os"

	"github.com/gpzoo/gpzoo/cli"
)

func main() {
	if err := cli.Main(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gpzoo:", err)
		os.Exit(cli.ExitCode(err)) // 2 for a usage error, 1 for a failed run
	}
}
