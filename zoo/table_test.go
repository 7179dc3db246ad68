package zoo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpzoo/gpzoo/cluster"
	"github.com/gpzoo/gpzoo/train"
	"github.com/gpzoo/gpzoo/zoo"
)

// tinyTable is a table of short runs on the Boston data embedded in the binary (no data folder needed): an
// Adam-trained SVGP row, which checkpoints, and an L-BFGS SGPR row, which does not, on splits 0 and 1.
func tinyTable(name string) *zoo.Table {
	return &zoo.Table{Name: name, Title: "tiny", Reproduces: "nothing (a test)", Protocol: "short runs", Splits: []int{0, 1},
		Rows: []zoo.Row{
			{Entry: "boston-bb/svgp", Label: "SVGP", Options: zoo.RowOptions{Iters: 8, Inducing: 5, BatchSize: 64},
				LL: mustPub("−2.408"), RMSE: mustPub("2.632")},
			{Entry: "boston-bb/sgpr", Label: "SGPR", Options: zoo.RowOptions{Iters: 3, Inducing: 5},
				LL: mustPub("−2.398 ± 0.1")},
		},
		Differences: []zoo.Difference{{What: "tiny budgets", Why: "a test"}}}
}

func mustPub(s string) *zoo.Published {
	p, err := zoo.ParsePublished(s)
	if err != nil {
		panic(err)
	}
	return p
}

var registerTiny sync.Once

// registeredTiny registers tinyTable("test-tiny") once (queue runners look tables up by name).
func registeredTiny(t *testing.T) *zoo.Table {
	t.Helper()
	registerTiny.Do(func() {
		if err := zoo.RegisterTable(tinyTable("test-tiny")); err != nil {
			t.Fatal(err)
		}
	})
	tab, err := zoo.LookupTable("test-tiny")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// metrics are the columns of a result that do not depend on timing.
func metrics(r *zoo.Result) string {
	return fmt.Sprintf("%s %s split %d: LL %v RMSE %v steps %d %s ELBO %v fp %s", r.Table.Table, r.Table.Row, r.Split, r.TestLL,
		*r.TestRMSE, r.Iters, r.StopReason, r.ELBOPerPoint, r.Table.Fingerprint)
}

// readAll returns the metrics of every result of tab in dir, by task key.
func readAll(t *testing.T, tab *zoo.Table, dir string) map[string]string {
	t.Helper()
	plan, err := tab.Plan(zoo.TableOptions{Results: dir})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range plan {
		if p.State != zoo.TaskDone {
			t.Fatalf("%s: %v", p.Key(), p.State)
		}
		out[p.Key()] = metrics(p.Result)
	}
	return out
}

type fileStamp struct {
	mod  time.Time
	data []byte
}

func stampOf(t *testing.T, path string) fileStamp {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	return fileStamp{st.ModTime(), b}
}

// An interrupted table, run again, resumes: stopped between runs it redoes no finished run (their files keep
// their bytes and times), stopped in the middle of a run it resumes that run from its checkpoint, and either
// way it ends with the results of an uninterrupted run, bit for bit in every metric.
func TestTableResume(t *testing.T) {
	tab := tinyTable("resume")
	whole := t.TempDir()
	var ran []string
	count := func(e zoo.TableEvent) {
		if e.What == zoo.EventStart || e.What == zoo.EventResume {
			ran = append(ran, e.What+" "+e.Task.Key())
		}
	}
	sum, err := zoo.RunTable(tab, zoo.TableOptions{Results: whole, Event: count})
	if err != nil || sum.Ran != 4 || len(ran) != 4 {
		t.Fatalf("uninterrupted: %+v %v, ran %v", sum, err, ran)
	}
	want := readAll(t, tab, whole)
	if _, err := os.Stat(filepath.Join(whole, ".checkpoints")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("finished runs left checkpoints: %v", err)
	}

	// Stopped between runs: after the first run finishes.
	dir := t.TempDir()
	stop := make(chan struct{})
	ran = nil
	_, err = zoo.RunTable(tab, zoo.TableOptions{Results: dir, Stop: stop, Event: func(e zoo.TableEvent) {
		count(e)
		if e.What == zoo.EventFinished {
			close(stop)
		}
	}})
	if !errors.Is(err, train.ErrInterrupted) || len(ran) != 1 {
		t.Fatalf("interrupted between runs: %v, ran %v", err, ran)
	}
	first := zoo.ResultPath(dir, zoo.Task{Table: "resume", Row: "boston-bb/svgp", Split: 0})
	before := stampOf(t, first)
	time.Sleep(10 * time.Millisecond)
	ran = nil
	var skipped []string
	sum, err = zoo.RunTable(tab, zoo.TableOptions{Results: dir, Event: func(e zoo.TableEvent) {
		count(e)
		if e.What == zoo.EventDone {
			skipped = append(skipped, e.Task.Key())
		}
	}})
	if err != nil || sum.Ran != 3 || sum.Done != 1 || len(ran) != 3 || !slices.Equal(skipped, []string{"resume/boston-bb/svgp/split-0"}) {
		t.Fatalf("rerun: %+v %v, ran %v, skipped %v", sum, err, ran, skipped)
	}
	if after := stampOf(t, first); !after.mod.Equal(before.mod) || !bytes.Equal(after.data, before.data) {
		t.Error("the finished run's result file was written again")
	}
	if got := readAll(t, tab, dir); !mapsEqual(got, want) {
		t.Errorf("resumed table:\n%v\nuninterrupted:\n%v", got, want)
	}

	// Stopped in the middle of a run (after its 3rd step): the run keeps its checkpoint and resumes from it.
	dir = t.TempDir()
	stop = make(chan struct{})
	ran = nil
	_, err = zoo.RunTable(tab, zoo.TableOptions{Results: dir, Stop: stop, Progress: &stopAfter{k: 3, stop: stop}, Event: count})
	if !errors.Is(err, train.ErrInterrupted) || len(ran) != 1 {
		t.Fatalf("interrupted mid-run: %v, ran %v", err, ran)
	}
	ck := filepath.Join(dir, ".checkpoints", "resume", "boston-bb", "svgp", "split-0", train.CheckpointFile)
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no checkpoint after the interrupt: %v", err)
	}
	ran = nil
	sum, err = zoo.RunTable(tab, zoo.TableOptions{Results: dir, Event: count})
	if err != nil || sum.Ran != 4 || len(ran) != 4 || ran[0] != "resume resume/boston-bb/svgp/split-0" || strings.HasPrefix(ran[1], "resume ") {
		t.Fatalf("rerun after a mid-run interrupt: %+v %v, ran %v", sum, err, ran)
	}
	if got := readAll(t, tab, dir); !mapsEqual(got, want) {
		t.Errorf("table resumed mid-run:\n%v\nuninterrupted:\n%v", got, want)
	}
	plan, _ := tab.Plan(zoo.TableOptions{Results: dir})
	if r := plan[0].Result; !r.Table.Resumed || r.Table.TrainSecondsTotal < r.TrainSeconds {
		t.Errorf("the resumed run's record: %+v (train seconds of this session %v)", r.Table, r.TrainSeconds)
	}
	if _, err := os.Stat(filepath.Join(dir, ".checkpoints")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the resumed run left its checkpoint: %v", err)
	}
	// A third run of the finished table runs nothing.
	ran = nil
	if sum, err := zoo.RunTable(tab, zoo.TableOptions{Results: dir, Event: count}); err != nil || sum.Done != 4 || len(ran) != 0 {
		t.Errorf("finished table run again: %+v %v %v", sum, err, ran)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A row whose protocol changed after its results were written has stale results: kept, reported, skipped, and
// rerun (their files replaced) only when asked; a checkpoint of the old protocol is refused, not deleted.
func TestTableStaleResults(t *testing.T) {
	dir := t.TempDir()
	old := tinyTable("stale")
	old.Rows = old.Rows[:1]
	if _, err := zoo.RunTable(old, zoo.TableOptions{Results: dir, Splits: []int{0}}); err != nil {
		t.Fatal(err)
	}
	changed := tinyTable("stale")
	changed.Rows = changed.Rows[:1]
	changed.Rows[0].Options.Iters = 9
	path := zoo.ResultPath(dir, zoo.Task{Table: "stale", Row: "boston-bb/svgp", Split: 0})
	before := stampOf(t, path)
	var events []string
	ev := func(e zoo.TableEvent) { events = append(events, e.What) }
	sum, err := zoo.RunTable(changed, zoo.TableOptions{Results: dir, Splits: []int{0}, Event: ev})
	if err != nil || sum.Stale != 1 || sum.Ran != 0 || !slices.Equal(events, []string{zoo.EventStale}) {
		t.Fatalf("stale: %+v %v %v", sum, err, events)
	}
	if !bytes.Equal(stampOf(t, path).data, before.data) {
		t.Fatal("a stale result was replaced unasked")
	}
	rep, err := changed.Report(dir)
	if err != nil || rep.Rows[0].Status != "not run" || !slices.Equal(rep.Rows[0].Stale, []int{0}) {
		t.Fatalf("report of a stale row: %+v %v", rep.Rows[0], err)
	}
	events = nil
	sum, err = zoo.RunTable(changed, zoo.TableOptions{Results: dir, Splits: []int{0}, RedoStale: true, Event: ev})
	if err != nil || sum.Ran != 1 {
		t.Fatalf("redo stale: %+v %v", sum, err)
	}
	plan, err := changed.Plan(zoo.TableOptions{Results: dir, Splits: []int{0}})
	if err != nil || plan[0].State != zoo.TaskDone || plan[0].Result.Iters != 9 {
		t.Fatalf("after redoing: %+v %v", plan, err)
	}

	// An interrupted run's checkpoint of the old protocol.
	stop := make(chan struct{})
	if _, err := zoo.RunTable(old, zoo.TableOptions{Results: dir, Splits: []int{1}, Stop: stop, Progress: &stopAfter{k: 2, stop: stop}}); !errors.Is(err, train.ErrInterrupted) {
		t.Fatal(err)
	}
	if _, err := zoo.RunTable(changed, zoo.TableOptions{Results: dir, Splits: []int{1}}); !errors.Is(err, zoo.ErrStaleCheckpoint) {
		t.Fatalf("checkpoint of another protocol: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".checkpoints", "stale", "boston-bb", "svgp", "split-1", train.CheckpointFile)); err != nil {
		t.Errorf("the refused checkpoint is gone: %v", err)
	}
}

// A file in a run's place that is not that run's result (malformed, truncated, or another run's) stops the table
// before it runs anything, with an error naming the file; the file is left as it was.
func TestTableBadResultFiles(t *testing.T) {
	tab := tinyTable("bad")
	for _, c := range []struct{ name, content string }{
		{"corrupt", "{not json"},
		{"truncated", `{"entry": "boston-bb/svgp", "split": 0`},
		{"foreign", `{"entry": "boston-bb/svgp", "split": 0, "n_test": 3, "test_rmse": 2, "test_ll": -2}`},
		{"other split", `{"entry": "boston-bb/svgp", "split": 1, "n_test": 3, "test_rmse": 2, "test_ll": -2, "table": {"table": "bad", "row": "boston-bb/svgp"}}`},
	} {
		dir := t.TempDir()
		path := zoo.ResultPath(dir, zoo.Task{Table: "bad", Row: "boston-bb/svgp", Split: 0})
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		var ran int
		_, err := zoo.RunTable(tab, zoo.TableOptions{Results: dir, Event: func(e zoo.TableEvent) {
			if e.What == zoo.EventStart {
				ran++
			}
		}})
		if !errors.Is(err, zoo.ErrBadResultFile) || !strings.Contains(err.Error(), path) || ran != 0 {
			t.Errorf("%s: %v (ran %d)", c.name, err, ran)
		}
		if b, _ := os.ReadFile(path); string(b) != c.content {
			t.Errorf("%s: the file changed", c.name)
		}
		if _, err := tab.Report(dir); !errors.Is(err, zoo.ErrBadResultFile) {
			t.Errorf("%s: report: %v", c.name, err)
		}
	}
	if _, err := zoo.LookupTable("no-such-table"); !errors.Is(err, zoo.ErrUnknownTable) || !strings.Contains(err.Error(), "havasi-kin8nm") {
		t.Errorf("unknown table: %v", err)
	}
}

// The report sets each row's published numbers beside its results: mean ± sample std of the splits run,
// which splits, steps and stop reasons, wall times, machine and commit; rows without results are "not run".
func TestTableReport(t *testing.T) {
	tab := tinyTable("report")
	dir := t.TempDir()
	if _, err := zoo.RunTable(tab, zoo.TableOptions{Results: dir, Rows: "*/svgp"}); err != nil {
		t.Fatal(err)
	}
	rep, err := tab.Report(dir)
	if err != nil {
		t.Fatal(err)
	}
	svgp, sgpr := rep.Rows[0], rep.Rows[1]
	plan, _ := tab.Plan(zoo.TableOptions{Results: dir, Rows: "*/svgp"})
	a, b := plan[0].Result, plan[1].Result
	if svgp.Status != "done" || !slices.Equal(svgp.Splits, []int{0, 1}) || svgp.TestLL.N != 2 || svgp.TestLL.Mean != (a.TestLL+b.TestLL)/2 ||
		svgp.TestRMSE.Mean != (*a.TestRMSE+*b.TestRMSE)/2 || !slices.Equal(svgp.Steps, []int{8, 8}) ||
		!slices.Equal(svgp.StopReasons, []string{"iterations", "iterations"}) || svgp.TrainSecondsTotal <= 0 ||
		len(svgp.Machines) != 1 || !slices.Equal(svgp.Commits, []string{"unknown"}) || svgp.PublishedLL.Mean != -2.408 {
		t.Errorf("svgp row %+v", svgp)
	}
	if sgpr.Status != "not run" || sgpr.TestLL != nil || rep.Compute.RowsNotRun != 1 || rep.Compute.Runs != 2 {
		t.Errorf("sgpr row %+v, compute %+v", sgpr, rep.Compute)
	}
	// A table of the source's standardised RMSE reports each result's RMSE over the training targets' standard
	// deviation (Boston's targets: about 9, so the two units differ).
	std := *tab
	std.StandardisedRMSE = true
	srep, err := std.Report(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.TestRMSEStandardised == nil || b.TestRMSEStandardised == nil || *a.TestRMSEStandardised >= *a.TestRMSE/2 ||
		srep.Rows[0].TestRMSE.Mean != (*a.TestRMSEStandardised+*b.TestRMSEStandardised)/2 {
		t.Errorf("standardised RMSE: results %v %v, report %+v", a.TestRMSEStandardised, b.TestRMSEStandardised, srep.Rows[0].TestRMSE)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## report: tiny", "Command: `gpzoo table run report`", "| SGPR `boston-bb/sgpr` | −2.398 ± 0.1 | not run |",
		"8 (iterations ×2)", "1. tiny budgets. Why: a test.", "0,1 (2)", svgp.TestLL.String(), "−2.408 ± —"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back zoo.TableReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Rows[0].TestLL.Mean != svgp.TestLL.Mean || back.Rows[1].Status != "not run" {
		t.Errorf("JSON round trip: %v %+v", err, back.Rows)
	}
	// gpzoo report pools table results by row: two rows of one entry are two report rows.
	pool := tinyTable("pool")
	pool.Rows = append(pool.Rows[:1], zoo.Row{ID: "boston-bb/svgp+longer", Entry: "boston-bb/svgp", Label: "SVGP, longer",
		Options: zoo.RowOptions{Iters: 9, Inducing: 5, BatchSize: 64}})
	pdir := t.TempDir()
	if _, err := zoo.RunTable(pool, zoo.TableOptions{Results: pdir, Splits: []int{0}}); err != nil {
		t.Fatal(err)
	}
	var classic zoo.Report
	for _, id := range []string{"boston-bb/svgp", "boston-bb/svgp+longer"} {
		if err := classic.AddFile(zoo.ResultPath(pdir, zoo.Task{Table: "pool", Row: id, Split: 0})); err != nil {
			t.Fatal(err)
		}
	}
	if rows, err := classic.Rows(); err != nil || len(rows) != 2 || rows[0].Key != "boston-bb/svgp" || rows[1].Key != "boston-bb/svgp+longer" ||
		rows[1].Entry != "boston-bb/svgp" || rows[1].Reference == "" {
		t.Errorf("gpzoo report of two rows of one entry: %v %+v", err, rows)
	}
	// Results beyond the planned splits count, and the row says which splits it has.
	if _, err := zoo.RunTable(tab, zoo.TableOptions{Results: dir, Rows: "*/sgpr", Splits: []int{3}}); err != nil {
		t.Fatal(err)
	}
	rep, _ = tab.Report(dir)
	if r := rep.Rows[1]; r.Status != "partial" || !slices.Equal(r.Splits, []int{3}) {
		t.Errorf("sgpr after split 3: %+v", r)
	}
}

// Two runners take a table's runs from the queue on an embedded NATS server with JetStream (goroutines here;
// the CLI's test starts runner processes) and the submitter writes the same results as a local run.
func TestTableSpreadOverRunners(t *testing.T) {
	tab := registeredTiny(t)
	local := t.TempDir()
	if _, err := zoo.RunTable(tab, zoo.TableOptions{Results: local}); err != nil {
		t.Fatal(err)
	}
	e, err := cluster.StartEmbedded(cluster.EmbeddedConfig{Token: "tok", JetStreamDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := func() *cluster.Queue {
		q, err := cluster.OpenQueue(ctx, e.URL, cluster.Security{Token: "tok"}, cluster.QueueConfig{Name: zoo.TableQueueName})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(q.Close)
		return q
	}
	sub := open()
	spread := t.TempDir()
	// Split 0 of the SVGP row is done already: it is not queued.
	if _, err := zoo.RunTable(tab, zoo.TableOptions{Results: spread, Rows: "*/svgp", Splits: []int{0}}); err != nil {
		t.Fatal(err)
	}
	runners := []*cluster.Queue{open(), open()}
	var events []string
	var mu sync.Mutex
	queued := make(chan struct{})
	type out struct {
		sum zoo.TableSummary
		err error
	}
	done := make(chan out, 1)
	go func() {
		n := 0
		s, err := zoo.SubmitTable(ctx, tab, sub, zoo.TableOptions{Results: spread, Event: func(e zoo.TableEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e.What+" "+e.Task.Key())
			if e.What == zoo.EventQueued {
				if n++; n == 3 {
					close(queued) // every run is on the queue before the runners look (they stop when it is empty)
				}
			}
		}})
		done <- out{s, err}
	}()
	select {
	case <-queued:
	case o := <-done:
		t.Fatalf("the submitter ended before queueing: %+v %v\n%v", o.sum, o.err, events)
	}
	var wg sync.WaitGroup
	for i, q := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := zoo.WorkTables(ctx, q, zoo.TableOptions{Results: t.TempDir(), Runner: fmt.Sprintf("runner-%d", i)}, true); err != nil {
				t.Error(err)
			}
		}()
	}
	o := <-done
	wg.Wait()
	sum, err := o.sum, o.err
	if err != nil || sum.Ran != 3 || sum.Done != 1 {
		t.Fatalf("spread: %+v %v\n%v", sum, err, events)
	}
	if got, want := readAll(t, tab, spread), readAll(t, tab, local); !mapsEqual(got, want) {
		t.Errorf("spread results:\n%v\nlocal:\n%v", got, want)
	}
	plan, _ := tab.Plan(zoo.TableOptions{Results: spread})
	for _, p := range plan[1:] {
		if r := p.Result.Table.Runner; r != "runner-0" && r != "runner-1" {
			t.Errorf("%s ran on %q", p.Key(), r)
		}
	}
	// Submitting again queues nothing: every run has its result.
	sum, err = zoo.SubmitTable(ctx, tab, sub, zoo.TableOptions{Results: spread})
	if err != nil || sum.Done != 4 || sum.Ran != 0 {
		t.Errorf("second submission: %+v %v", sum, err)
	}
}
