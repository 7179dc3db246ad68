package zoo

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A Table is a benchmark table of a paper or a reference notebook, reproduced by running its rows, zoo entries
// at the protocol's budgets, over splits: a table is a command (gpzoo table run NAME), its results are files of
// a results folder (tablerun.go) and its report is generated from the definition and those files, never
// retyped (tablereport.go; REPRODUCTION.md). The tables gpzoo reproduces are in tables.go; a program may register
// its own (RegisterTable) and offer them through cli.Main.
type Table struct {
	// Name names the table (lower case letters, digits and '-'): gpzoo table run NAME, the results folder's
	// subfolder.
	Name string
	// Title is one line; Reproduces names the paper or notebook and its table; Protocol says in words what the
	// rows run: data, splits, models, budgets (the rows' own budgets are in their entries and Options).
	Title, Reproduces, Protocol string
	// Data names the benchmark data sets the table reads (gpzoo data fetch NAMES), "" for embedded data only.
	Data string
	// Splits are the splits every row runs unless its own Splits say otherwise.
	Splits []int
	Rows   []Row
	// Differences are the ways the table's runs differ from the paper's protocol, each with its reason.
	Differences []Difference
	// StandardisedRMSE reports the rows' RMSE on the targets divided by the training targets' standard deviation
	// (Result.TestRMSEStandardised), the unit of the source, instead of the targets' original units.
	StandardisedRMSE bool
}

// Difference is one way a table's runs differ from the published protocol, and why.
type Difference struct{ What, Why string }

// Row is one row of a Table: a zoo entry run with Options on the table's (or its own) splits, beside the
// published numbers.
type Row struct {
	// ID identifies the row within its table and names its results' folder (results/TABLE/ID/split-K.json):
	// letters, digits, '-', '_', '.', '+' and '/' between non-empty parts; "" means the entry's name.
	ID string
	// Label is the row as the paper names it, e.g. "decoupled, L = 1".
	Label string
	// Entry names the zoo entry the row runs.
	Entry   string
	Options RowOptions
	// Splits overrides the table's Splits (nil: the table's).
	Splits []int
	// LL and RMSE are the published test log-likelihood and RMSE (nil: none published).
	LL, RMSE *Published
}

// RowOptions are a row's settings on top of its entry's (zero: the entry's own).
type RowOptions struct {
	Iters, BatchSize, Inducing, TestSamples int
	NatGrad                                 bool
	Optimizer                               string
	// LL names the test log-likelihood the row reports: "" the entry's test_ll (a deep GP's S-sample mixture),
	// LLMomentMatched the moment-matched Gaussian's (test_ll_moment_matched), for protocols that score it.
	LL string
}

// LLMomentMatched is RowOptions.LL for rows scored by the moment-matched Gaussian of a deep GP's samples.
const LLMomentMatched = "moment-matched"

// TableSeed is the seed of every table run (Options.Seed): a table's result depends only on its protocol, the
// split and the code.
const TableSeed = 1

// Published is a published mean ± standard deviation as the source prints it (Text), and its numbers; Std is
// nil when the source gives no spread ("—").
type Published struct {
	Text string   `json:"text"`
	Mean float64  `json:"mean"`
	Std  *float64 `json:"std"`
}

// ParsePublished reads "1.34 ± 0.02", "−2.77 ± 0.01" (either minus sign) or "0.976" (no spread) into a
// Published.
func ParsePublished(s string) (*Published, error) {
	text := strings.TrimSpace(s)
	num := func(f string) (float64, error) {
		v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(f), "−", "-"), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("zoo: published number %q: want \"MEAN\" or \"MEAN ± STD\"", s)
		}
		return v, nil
	}
	m, sd, spread := strings.Cut(text, "±")
	mean, err := num(m)
	if err != nil {
		return nil, err
	}
	p := &Published{Text: strings.ReplaceAll(text, "-", "−"), Mean: mean}
	if spread {
		v, err := num(sd)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("zoo: published number %q: want \"MEAN ± STD\" with STD ≥ 0", s)
		}
		p.Std = &v
	}
	return p, nil
}

// pub is ParsePublished for the tables' literals ("" is nil: nothing published).
func pub(s string) *Published {
	if s == "" {
		return nil
	}
	p, err := ParsePublished(s)
	if err != nil {
		panic(err) // a literal of this package: every test fails at once
	}
	return p
}

// String writes p as the source does, with "± —" when it gives no spread; "—" for nil.
func (p *Published) String() string {
	switch {
	case p == nil:
		return "—"
	case p.Std == nil:
		return p.Text + " ± —"
	}
	return p.Text
}

// ErrUnknownTable is returned by LookupTable for a name no table has.
var ErrUnknownTable = errors.New("zoo: unknown table")

// ErrBadTable is wrapped by RegisterTable's errors for a malformed table.
var ErrBadTable = errors.New("zoo: malformed table")

var tables []*Table

// RegisterTable adds t to the tables gpzoo table runs. It checks the table: its name (unique), rows with unique
// IDs that are safe folder names, existing entries, row options the entries take, and splits.
func RegisterTable(t *Table) error {
	if err := t.check(); err != nil {
		return err
	}
	for _, o := range tables {
		if o.Name == t.Name {
			return fmt.Errorf("%w %s: a table of that name is registered", ErrBadTable, t.Name)
		}
	}
	tables = append(tables, t)
	return nil
}

func mustRegisterTable(t *Table) {
	if err := RegisterTable(t); err != nil {
		panic(err) // a table of this package: every test fails at once
	}
}

// Tables returns the registered tables sorted by name.
func Tables() []*Table {
	ts := slices.Clone(tables)
	slices.SortFunc(ts, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// LookupTable returns the table named name.
func LookupTable(name string) (*Table, error) {
	for _, t := range tables {
		if t.Name == name {
			return t, nil
		}
	}
	names := make([]string, 0, len(tables))
	for _, t := range Tables() {
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("%w %q (tables: %s)", ErrUnknownTable, name, strings.Join(names, ", "))
}

// RowID is the row's ID: its own, or its entry's name.
func (r *Row) RowID() string { return cmp.Or(r.ID, r.Entry) }

// RowSplits are the splits the row runs by default: its own, or the table's.
func (t *Table) RowSplits(r *Row) []int {
	if r.Splits != nil {
		return r.Splits
	}
	return t.Splits
}

// Row returns the row with ID id.
func (t *Table) Row(id string) (*Row, bool) {
	for i := range t.Rows {
		if t.Rows[i].RowID() == id {
			return &t.Rows[i], true
		}
	}
	return nil, false
}

func (t *Table) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrBadTable, t.Name, fmt.Sprintf(format, a...))
	}
	if t.Name == "" || strings.Trim(t.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return fmt.Errorf("%w %q: a table's name is lower case letters, digits and '-'", ErrBadTable, t.Name)
	}
	if t.Title == "" || t.Reproduces == "" || len(t.Rows) == 0 {
		return bad("a table needs a title, what it reproduces and rows")
	}
	if err := checkSplitList(t.Splits); err != nil {
		return bad("splits: %v", err)
	}
	for _, d := range t.Differences {
		if d.What == "" || d.Why == "" {
			return bad("a difference from the paper's protocol needs what and why")
		}
	}
	seen := map[string]bool{}
	for i := range t.Rows {
		r := &t.Rows[i]
		id := r.RowID()
		if !safeRowID(id) {
			return bad("row %q: its ID must be parts of letters, digits, '-', '_', '.' or '+' joined by '/'", id)
		}
		if seen[id] {
			return bad("row %q appears twice", id)
		}
		seen[id] = true
		if r.Label == "" {
			return bad("row %q has no label", id)
		}
		e, err := Lookup(r.Entry)
		if err != nil {
			return bad("row %q: %v", id, err)
		}
		if e.WritesCurves {
			return bad("row %q: entry %s has no test metrics", id, e.Name)
		}
		if err := checkSplitList(t.RowSplits(r)); err != nil {
			return bad("row %q: splits: %v", id, err)
		}
		o := r.Options
		if o.Iters < 0 || o.BatchSize < 0 || o.Inducing < 0 || o.TestSamples < 0 {
			return bad("row %q: negative option in %+v", id, o)
		}
		if o.LL != "" && o.LL != LLMomentMatched {
			return bad("row %q: LL %q (want \"\" or %q)", id, o.LL, LLMomentMatched)
		}
		if o.LL == LLMomentMatched && (e.Config == nil || e.Config.Family != "dgp") {
			return bad("row %q: only deep GPs report a moment-matched LL", id)
		}
		if o.Optimizer != "" && o.Optimizer != "adam" && o.Optimizer != "lbfgs" {
			return bad("row %q: optimizer %q", id, o.Optimizer)
		}
	}
	return nil
}

// safeRowID reports whether id is a relative folder path of parts made of [A-Za-z0-9._+-], none of them "." or
// "..".
func safeRowID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, part := range strings.Split(id, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.+", c)) {
				return false
			}
		}
	}
	return path.Clean(id) == id
}

func checkSplitList(s []int) error {
	if len(s) == 0 {
		return fmt.Errorf("%w: none", ErrBadSplits)
	}
	for _, k := range s {
		if k < 0 {
			return fmt.Errorf("%w: split %d", ErrBadSplits, k)
		}
	}
	if d := firstDuplicate(s); d >= 0 {
		return fmt.Errorf("%w: split %d named twice", ErrBadSplits, d)
	}
	return nil
}

// Task is one run of a table: a row on a split.
type Task struct {
	Table string `json:"table"`
	Row   string `json:"row"`
	Split int    `json:"split"`
}

// Key is the task's name: TABLE/ROW/split-K, the path of its result file below the results folder without
// ".json".
func (k Task) Key() string { return fmt.Sprintf("%s/%s/split-%d", k.Table, k.Row, k.Split) }

// Tasks returns the table's runs, row by row in the table's order and split by split: the rows whose ID matches
// one of the comma-separated glob patterns of rows (path.Match; a pattern without '/' matches the ID's last
// part, e.g. dgp-decoupled-* or *svgp*; "" every row), each on splits (nil: the row's own). A pattern that
// matches no row is an error listing the rows.
func (t *Table) Tasks(rows string, splits []int) ([]Task, error) {
	var pats []string
	for _, p := range strings.Split(rows, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("zoo: table %s: row pattern %q: %w", t.Name, p, err)
			}
			pats = append(pats, p)
		}
	}
	if splits != nil {
		if err := checkSplitList(splits); err != nil {
			return nil, fmt.Errorf("zoo: table %s: %w", t.Name, err)
		}
	}
	matched := make([]bool, len(pats))
	var out []Task
	for i := range t.Rows {
		r := &t.Rows[i]
		id := r.RowID()
		take := len(pats) == 0
		for j, p := range pats {
			if ok, _ := path.Match(p, id); ok || !strings.Contains(p, "/") && matchBase(p, id) {
				take, matched[j] = true, true
			}
		}
		if !take {
			continue
		}
		ks := splits
		if ks == nil {
			ks = t.RowSplits(r)
		}
		for _, k := range ks {
			out = append(out, Task{Table: t.Name, Row: id, Split: k})
		}
	}
	for j, p := range pats {
		if !matched[j] {
			ids := make([]string, len(t.Rows))
			for i := range t.Rows {
				ids[i] = t.Rows[i].RowID()
			}
			return nil, fmt.Errorf("zoo: table %s: no row matches %q (rows: %s)", t.Name, p, strings.Join(ids, ", "))
		}
	}
	return out, nil
}

// options returns the Options a row's run takes on split k (DataDir and the run-time fields are the caller's).
func (r *Row) options(k int) Options {
	o := r.Options
	return Options{Split: k, Seed: TableSeed, Iters: o.Iters, BatchSize: o.BatchSize, Inducing: o.Inducing,
		TestSamples: o.TestSamples, NatGrad: o.NatGrad, Optimizer: o.Optimizer}
}

// runtimeFields are CustomConfig's fields that say how a run is carried out, not what it computes: they stay
// out of a protocol.
var runtimeFields = map[string]bool{"CheckpointDir": true, "CheckpointEvery": true, "Resume": true, "Stop": true,
	"Logger": true, "Progress": true, "Cluster": true, "EvalEvery": true}

// RowProtocol returns the row's protocol in canonical text and its fingerprint (the first 16 hex digits of the
// text's SHA-256): the entry, its data set's split protocol, the seed, the row's options and what the entry's
// configuration becomes with them (every field of CustomConfig but the run-time ones, runtimeFields, and those
// at a zero value: canonicalProtocol). A result
// records both; a result whose fingerprint differs from its row's current one is stale. The fingerprint does
// not see the defaults of the library the configuration leaves to it (the recorded commit says which code ran).
func (t *Table) RowProtocol(r *Row) (text, fingerprint string, err error) {
	full, err := t.fullProtocol(r)
	if err != nil {
		return "", "", err
	}
	text = canonicalProtocol(full)
	return text, protocolFingerprint(text), nil
}

// fullProtocol returns the row's protocol text with every configuration line, zero values included.
func (t *Table) fullProtocol(r *Row) (string, error) {
	e, err := Lookup(r.Entry)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "entry %s\n", e.Name)
	if src, ok := sources[e.Dataset]; ok {
		fmt.Fprintf(&b, "data %s: format=%s path=%s trainSize=%d testFrac=%g trainPercent=%d stream=%#x\n", e.Dataset,
			src.format, src.path, src.trainSize, src.testFrac, src.trainPercent, src.stream)
	}
	o := r.options(0)
	fmt.Fprintf(&b, "seed %d\noptions iters=%d batch=%d inducing=%d test_samples=%d natgrad=%t optimizer=%q ll=%q\n",
		o.Seed, o.Iters, o.BatchSize, o.Inducing, o.TestSamples, o.NatGrad, o.Optimizer, r.Options.LL)
	fmt.Fprintf(&b, "raw_inputs %t stream %#x\n", e.RawInputs, e.stream)
	if e.Config != nil {
		c := e.configFor(o)
		v := reflect.ValueOf(c)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || runtimeFields[f.Name] {
				continue
			}
			x := v.Field(i)
			if x.IsZero() { // a zero struct prints its fields: give it the empty value canonicalProtocol drops
				fmt.Fprintf(&b, "config %s=\n", f.Name)
				continue
			}
			if x.Kind() == reflect.Pointer {
				if x.IsNil() {
					fmt.Fprintf(&b, "config %s=nil\n", f.Name)
					continue
				}
				x = x.Elem()
			}
			fmt.Fprintf(&b, "config %s=%+v\n", f.Name, x.Interface())
		}
	}
	return b.String(), nil
}

// canonicalProtocol drops the configuration lines of a protocol text whose value prints as a zero value ("",
// 0, false, nil, [], map[]; fullProtocol prints any zero value, a struct's too, as ""): a field CustomConfig
// gains later, at a zero value that keeps the behaviour before it, then leaves every fingerprint as it was. Results recorded before the rule hold the zero lines: their
// fingerprint is taken from their protocol text through the same rule (TableRun.CurrentFingerprint).
//
// A struct's line (`config Exact={Solver:cg Memory:0 ...}`, fmt's %+v) keeps only its fields of non-zero value,
// and goes when none is left, so that a field the struct gains later at a zero value leaves the fingerprint as it
// was too; a struct whose print does not split into Name:value fields (a nested struct, a string with spaces) is
// kept whole.
func canonicalProtocol(text string) string {
	lines := strings.SplitAfter(text, "\n")
	out := lines[:0]
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "config "); ok {
			if name, v, ok := strings.Cut(strings.TrimSuffix(rest, "\n"), "="); ok {
				v = canonicalStruct(v)
				if isZeroPrint(v) {
					continue
				}
				l = "config " + name + "=" + v + "\n"
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// isZeroPrint reports whether v is how fmt prints a zero value (fullProtocol prints a zero struct as "").
func isZeroPrint(v string) bool {
	switch v {
	case "", "0", "false", "nil", "<nil>", "[]", "map[]", "{}":
		return true
	}
	return false
}

// canonicalStruct returns a struct's %+v print {A:x B:y ...} without its zero-valued fields ("{}" when none is
// left), or v unchanged when it is not such a print of plain fields.
func canonicalStruct(v string) string {
	if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
		return v
	}
	inner := v[1 : len(v)-1]
	if strings.ContainsAny(inner, "{}[]") {
		return v
	}
	var kept []string
	for _, f := range strings.Fields(inner) {
		name, val, ok := strings.Cut(f, ":")
		if !ok || name == "" {
			return v
		}
		if !isZeroPrint(val) {
			kept = append(kept, f)
		}
	}
	return "{" + strings.Join(kept, " ") + "}"
}

// protocolFingerprint returns the first 16 hex digits of the protocol text's SHA-256.
func protocolFingerprint(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:8])
}

// matchBase reports whether pattern matches the last '/'-separated part of id.
func matchBase(pattern, id string) bool {
	ok, _ := path.Match(pattern, path.Base(id))
	return ok
}
