package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpzoo/gpzoo/datasets"
)

const dataUsage = `Usage:
  gpzoo data list [--data DIR]                      one line per data set: files, size, present or missing
  gpzoo data verify [NAME...] [--data DIR]          check sizes and sha256 against the manifest (all files
                                                    without NAME); fails when any file does not match
  gpzoo data fetch NAME... [--data DIR] [--mirror URL]
                                                    download the data sets' files from their public source
                                                    into DIR and check them; present files are skipped
  gpzoo data stats FILE [--test-frac F] ...        one streaming pass: a large file's rows and its training
                                                    rows' statistics (gpzoo data stats --help)
  gpzoo data shard-stats FILE --shard i/k ...       load a worker's shard of a large file as a worker does:
                                                    rows, test rows, means, time, peak RSS

NAME is a data set (see list), "all", or a path or folder of the manifest (e.g. uci-regression-evans/kin40k).
DIR defaults to $%s. The manifest is DIR/%s, or the one built into gpzoo when DIR has none (fetch then
writes it to DIR). --mirror URL replaces %s in the download URLs.
`

// dataFetchTimeout bounds one fetch command (the largest file is ~10 MB).
const dataFetchTimeout = time.Hour

// dataCmd runs `gpzoo data list|verify|fetch`.
func dataCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(stdout, dataUsage, datasets.EnvDataDir, datasets.ManifestFile, datasets.DefaultSourceBase)
		return nil
	}
	sub := args[0]
	switch sub {
	case "stats", "shard-stats":
		return dataShardCmd(sub, args[1:], stdout, stderr)
	case "list", "verify", "fetch":
	default:
		return fmt.Errorf("%w: data: unknown subcommand %q (list, verify, fetch, stats or shard-stats; gpzoo data help)", ErrUsage, sub)
	}
	fs := newFlagSet("data "+sub, stderr)
	fs.Usage = func() {} // -h prints dataUsage instead
	dir := fs.String("data", datasets.DefaultDir(), "data directory")
	var mirror *string
	if sub == "fetch" {
		mirror = fs.String("mirror", "", "mirror replacing "+datasets.DefaultSourceBase)
	}
	names, err := dataParse(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, dataUsage, datasets.EnvDataDir, datasets.ManifestFile, datasets.DefaultSourceBase)
		return nil
	}
	if err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("data %s: no data directory: pass --data DIR or set %s", sub, datasets.EnvDataDir)
	}
	entries, from, err := datasets.DirManifest(*dir)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		if len(names) > 0 {
			return fmt.Errorf("data list takes no names, got %q", names)
		}
		return dataList(stdout, *dir, entries)
	case "verify":
		if len(names) > 0 {
			if entries, err = datasets.SelectEntries(entries, names); err != nil {
				return err
			}
		}
		return dataVerify(stdout, *dir, from, entries)
	}
	if len(names) == 0 { // fetch
		return fmt.Errorf("data fetch: name the data sets to fetch (see gpzoo data list), or all")
	}
	if entries, err = datasets.SelectEntries(entries, names); err != nil {
		return err
	}
	return dataFetch(stdout, *dir, *mirror, entries)
}

// dataParse parses flags that may come before, between or after the names.
func dataParse(fs *flag.FlagSet, args []string) ([]string, error) {
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return names, nil
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// dataList prints one line per data set: its files, total size and state
// (by size only; verify hashes).
func dataList(w io.Writer, dir string, entries []datasets.ManifestEntry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tFILES\tSIZE\tSTATE\tDOWNLOAD\n")
	for _, name := range datasets.DataSetNames() {
		sel, err := datasets.SelectEntries(entries, []string{name})
		if err != nil {
			continue // not in this manifest
		}
		var size int64
		have, fetchable := 0, 0
		for _, e := range sel {
			size += e.Bytes
			if datasets.Present(dir, e) {
				have++
			}
			if _, err := e.DownloadURL(""); err == nil {
				fetchable++
			}
		}
		state := "present"
		switch {
		case have == 0:
			state = "missing"
		case have < len(sel):
			state = fmt.Sprintf("partial (%d/%d)", have, len(sel))
		}
		dl := "yes"
		switch {
		case fetchable == 0:
			dl = "no (copy only)"
		case fetchable < len(sel):
			dl = fmt.Sprintf("%d of %d files", fetchable, len(sel))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", name, len(sel), dataSize(size), state, dl)
	}
	fmt.Fprintf(tw, "(data directory %s; present means the right size: run gpzoo data verify to check checksums)\n", dir)
	return tw.Flush()
}

// dataVerify checks entries and prints each file that fails, then a summary.
func dataVerify(w io.Writer, dir, from string, entries []datasets.ManifestEntry) error {
	bad := 0
	for _, r := range datasets.VerifyEntries(dir, entries) {
		if r.Status == datasets.StatusOK {
			continue
		}
		bad++
		detail := ""
		switch r.Status {
		case datasets.StatusSizeMismatch:
			detail = fmt.Sprintf(": %d bytes, want %d", r.Size, r.Entry.Bytes)
		case datasets.StatusChecksumMismatch:
			detail = fmt.Sprintf(": sha256 %s, want %s", r.SHA256, r.Entry.SHA256)
		case datasets.StatusUnreadable:
			detail = fmt.Sprintf(": %v", r.Err)
		}
		fmt.Fprintf(w, "%s: %s%s\n", r.Status, r.Entry.Path, detail)
	}
	fmt.Fprintf(w, "verified %d files in %s against %s: %d ok, %d failed\n", len(entries), dir, from, len(entries)-bad, bad)
	if bad > 0 {
		return fmt.Errorf("data verify: %d of %d files failed (gpzoo data fetch NAME restores files with a public source)", bad, len(entries))
	}
	return nil
}

// dataFetch downloads entries into dir, one line per file, and writes the
// built-in manifest to dir when it has none.
func dataFetch(w io.Writer, dir, mirror string, entries []datasets.ManifestEntry) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, dataFetchTimeout)
	defer cancel()
	client := &http.Client{}
	var errs []error
	got, skipped := 0, 0
	for _, e := range entries {
		res, err := datasets.Fetch(ctx, client, mirror, []datasets.ManifestEntry{e}, dir)
		if err != nil {
			errs = append(errs, err)
			fmt.Fprintf(w, "FAILED %s\n", e.Path)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if res[0].Skipped {
			skipped++
			fmt.Fprintf(w, "ok      %s (already present)\n", e.Path)
		} else {
			got++
			fmt.Fprintf(w, "fetched %s (%s)\n", e.Path, dataSize(e.Bytes))
		}
	}
	if wrote, err := datasets.WriteEmbeddedManifest(dir); err != nil {
		errs = append(errs, err)
	} else if wrote {
		fmt.Fprintf(w, "wrote %s/%s\n", strings.TrimSuffix(dir, "/"), datasets.ManifestFile)
	}
	fmt.Fprintf(w, "%d fetched, %d already present, %d failed\n", got, skipped, len(entries)-got-skipped)
	if len(errs) > 0 {
		return fmt.Errorf("data fetch: %w", errors.Join(errs...))
	}
	return nil
}

// dataSize formats a byte count.
func dataSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
