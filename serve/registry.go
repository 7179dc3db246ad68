package serve

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// registry holds the loaded models. Readers load one atomic pointer to an immutable table; writers (New, the
// directory watcher) build a new table and swap it in, then retire the models it no longer holds, which finish
// the requests that already have them.
type registry struct {
	s     *Server
	table atomic.Pointer[table]

	mu       sync.Mutex             // serialises writers
	named    map[string]bool        // names of named sources (a watched file of the same name is skipped)
	dirOf    map[string]string      // name of a watched file's model → the file's path
	dirs     []string               // watched directories
	watcher  *fsnotify.Watcher      // nil without directories
	timers   map[string]*time.Timer // debounce, per path
	timersMu sync.Mutex
	stop     chan struct{}
	wg       sync.WaitGroup
}

// table is one immutable state of the registry: each name's loaded versions, in the order they were given
// (the last is the default).
type table struct {
	models map[string][]*model
}

func newRegistry(s *Server) *registry {
	r := &registry{s: s, named: map[string]bool{}, dirOf: map[string]string{}, timers: map[string]*time.Timer{}, stop: make(chan struct{})}
	r.table.Store(&table{models: map[string][]*model{}})
	return r
}

// lookup returns the model name at version ("": the default version), acquired (release it when done), or a
// 404 *oip.Error.
func (r *registry) lookup(name, version string) (*model, error) {
	t := r.table.Load()
	vs := t.models[name]
	if len(vs) == 0 {
		return nil, errorf(http.StatusNotFound, "model %q is not loaded (loaded: %s)", clip(name), t.names())
	}
	m := vs[len(vs)-1]
	if version != "" {
		i := slices.IndexFunc(vs, func(m *model) bool { return m.version == version })
		if i < 0 {
			return nil, errorf(http.StatusNotFound, "model %q has no version %q (loaded: %s)", name, clip(version), strings.Join(versions(vs), ", "))
		}
		m = vs[i]
	}
	m.acquire()
	return m, nil
}

func (t *table) names() string {
	names := make([]string, 0, len(t.models))
	for n := range t.models {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 20 {
		names = append(names[:20], "…")
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (t *table) count() int {
	n := 0
	for _, vs := range t.models {
		n += len(vs)
	}
	return n
}

func versions(vs []*model) []string {
	out := make([]string, len(vs))
	for i, m := range vs {
		out[i] = m.version
	}
	return out
}

// clip shortens a name from a request for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// update swaps in a table where name's versions are vs (nil: name unloaded), and retires the models it drops.
// r.mu is held.
func (r *registry) update(name string, vs []*model) {
	old := r.table.Load()
	next := &table{models: make(map[string][]*model, len(old.models)+1)}
	for n, v := range old.models {
		next.models[n] = v
	}
	if vs == nil {
		delete(next.models, name)
	} else {
		next.models[name] = vs
	}
	r.table.Store(next)
	for _, m := range old.models[name] {
		if !slices.Contains(vs, m) {
			m.retire()
		}
	}
	r.s.met.loaded.Set(float64(next.count()))
}

// addNamed loads a named source (at New: an error stops the server from starting).
func (r *registry) addNamed(src ModelSource) error {
	m, err := r.s.load(src.Name, src.Version, src.File)
	if err != nil {
		r.s.met.loadFailures.WithLabelValues(src.Name).Inc()
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	vs := r.table.Load().models[src.Name]
	if slices.ContainsFunc(vs, func(o *model) bool { return o.version == m.version }) {
		m.retire()
		return &SourceError{Source: src.String(), Msg: "version " + m.version + " of " + src.Name + " is given twice"}
	}
	r.named[src.Name] = true
	r.update(src.Name, append(slices.Clip(vs), m))
	r.s.log.Info("model loaded", "model", m.name, "version", m.version, "path", m.path, "task", m.task, "inputs", len(m.features))
	return nil
}

// watch loads every *.gpz of dir and follows its changes.
func (r *registry) watch(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return &SourceError{Source: dir, Msg: err.Error()}
	}
	if !st.IsDir() {
		return &SourceError{Source: dir, Msg: "not a directory"}
	}
	if r.watcher == nil {
		if r.watcher, err = fsnotify.NewWatcher(); err != nil {
			return &SourceError{Source: dir, Msg: "watching: " + err.Error()}
		}
		r.wg.Add(1)
		go r.loop()
	}
	if err := r.watcher.Add(dir); err != nil {
		return &SourceError{Source: dir, Msg: "watching: " + err.Error()}
	}
	r.mu.Lock()
	r.dirs = append(r.dirs, dir)
	r.mu.Unlock()
	r.rescan(dir)
	return nil
}

// modelFile returns the model name of a watched file, and whether the file is one (*.gpz, not hidden: the
// temporary files of an atomic write start with a dot).
func modelFile(path string) (string, bool) {
	base := filepath.Base(path)
	if strings.HasPrefix(base, ".") || !strings.HasSuffix(base, ".gpz") {
		return "", false
	}
	return strings.TrimSuffix(base, ".gpz"), true
}

// rescan syncs every model file of dir and unloads the models of dir's files that are gone.
func (r *registry) rescan(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.s.log.Error("scanning the model directory", "dir", dir, "err", err)
		return
	}
	present := map[string]bool{}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if _, ok := modelFile(path); ok {
			present[path] = true
			r.sync(path)
		}
	}
	r.mu.Lock()
	var gone []string
	for _, path := range r.dirOf {
		if filepath.Dir(path) == filepath.Clean(dir) && !present[path] {
			gone = append(gone, path)
		}
	}
	r.mu.Unlock()
	for _, path := range gone {
		r.sync(path)
	}
}

// sync brings the model of a watched file up to date with the file: loaded (new file), swapped (changed file),
// unloaded (removed file), or kept (a file that does not load is refused, logged and counted).
func (r *registry) sync(path string) {
	name, ok := modelFile(path)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := checkSegment("name", name); err != nil {
		r.s.log.Warn("model file skipped", "path", path, "err", err)
		return
	}
	if r.named[name] {
		r.s.log.Warn("model file skipped: its name is served from a named source", "path", path, "model", name)
		return
	}
	if owner, ok := r.dirOf[name]; ok && owner != path {
		r.s.log.Warn("model file skipped: a file of another watched directory has its name", "path", path, "model", name, "served", owner)
		return
	}
	cur := r.table.Load().models[name]
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if len(cur) > 0 {
			r.update(name, nil)
			r.s.log.Info("model unloaded: its file was removed", "model", name, "path", path)
		}
		delete(r.dirOf, name)
		r.s.met.loadFailing.DeleteLabelValues(name)
		return
	}
	m, err := r.s.load(name, "", path)
	if err != nil {
		r.s.met.loadFailures.WithLabelValues(name).Inc()
		r.s.met.loadFailing.WithLabelValues(name).Set(1)
		if len(cur) > 0 {
			r.s.log.Error("model file refused: the loaded version keeps serving", "model", name, "path", path, "serving", cur[len(cur)-1].version, "err", err)
		} else {
			r.s.log.Error("model file refused", "model", name, "path", path, "err", err)
		}
		return
	}
	r.s.met.loadFailing.WithLabelValues(name).Set(0)
	if len(cur) == 1 && cur[0].sha256 == m.sha256 {
		m.retire() // the same file: keep the model (and its compiled programs) already serving
		return
	}
	r.dirOf[name] = path
	r.update(name, []*model{m})
	if len(cur) > 0 {
		r.s.log.Info("model replaced", "model", name, "version", m.version, "previous", cur[len(cur)-1].version, "path", path)
	} else {
		r.s.log.Info("model loaded", "model", name, "version", m.version, "path", path, "task", m.task, "inputs", len(m.features))
	}
}

// loop follows the watched directories' events: a change to a model file (re)syncs it once the file has been
// quiet for the debounce delay; an overflow of the event queue rescans every directory.
func (r *registry) loop() {
	defer r.wg.Done()
	for {
		select {
		case <-r.stop:
			return
		case ev, ok := <-r.watcher.Events:
			if !ok {
				return
			}
			if _, ok := modelFile(ev.Name); ok && !ev.Has(fsnotify.Chmod) {
				r.debounce(ev.Name)
			}
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return
			}
			r.s.log.Error("watching the model directories", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				r.mu.Lock()
				dirs := slices.Clone(r.dirs)
				r.mu.Unlock()
				for _, d := range dirs {
					r.rescan(d)
				}
			}
		}
	}
}

// debounce syncs path once no event has touched it for the debounce delay.
func (r *registry) debounce(path string) {
	r.timersMu.Lock()
	defer r.timersMu.Unlock()
	if t, ok := r.timers[path]; ok {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(r.s.cfg.WatchDebounce, func() {
		r.timersMu.Lock()
		if r.timers[path] != t {
			r.timersMu.Unlock()
			return
		}
		delete(r.timers, path)
		r.wg.Add(1)
		r.timersMu.Unlock()
		defer r.wg.Done()
		select {
		case <-r.stop:
			return
		default:
		}
		r.sync(path)
	})
	r.timers[path] = t
}

// close stops watching, waits for a sync in progress, and retires every model.
func (r *registry) close() {
	select {
	case <-r.stop:
		return
	default:
	}
	close(r.stop)
	if r.watcher != nil {
		r.watcher.Close()
	}
	r.timersMu.Lock()
	for p, t := range r.timers {
		t.Stop()
		delete(r.timers, p)
	}
	r.timersMu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.table.Load().models {
		r.update(name, nil)
	}
}
