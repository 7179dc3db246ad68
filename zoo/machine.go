package zoo

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gpzoo/gpzoo/ops"
)

// Machine describes the computer and build a run ran on, as a result records it.
type Machine struct {
	// CPU is the processor's model name (/proc/cpuinfo on Linux; "unknown" elsewhere); Cores the logical CPUs
	// the process may use (runtime.NumCPU) and GOMAXPROCS the Go scheduler's limit.
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Build is "purego" or "openblas" (ops.Build), BLAS the level-3 kernel that ran (ops.BLAS).
	Build string `json:"build"`
	BLAS  string `json:"blas"`
	OS    string `json:"os"`
	Arch  string `json:"arch"`
	Go    string `json:"go"`
}

// VCS is the commit a binary was built from, from its build information (debug.ReadBuildInfo: go build in a
// git checkout stamps it; go run and go test binaries have none, and then every field is "unknown").
type VCS struct {
	Revision string `json:"revision"`
	// Modified is "true" when the working tree had uncommitted changes, "false", or "unknown".
	Modified string `json:"modified"`
	Time     string `json:"time,omitempty"`
}

// String writes v as its revision's first 12 digits, "+modified" for a dirty tree, or "unknown".
func (v *VCS) String() string {
	if v == nil || v.Revision == "" || v.Revision == "unknown" {
		return "unknown"
	}
	s := v.Revision[:min(12, len(v.Revision))]
	if v.Modified == "true" {
		s += "+modified"
	}
	return s
}

// String writes m in one line, e.g. "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz, 2 cores, GOMAXPROCS 2,
// purego/avx512".
func (m *Machine) String() string {
	if m == nil {
		return "unknown"
	}
	return fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s/%s", m.CPU, m.Cores, m.GOMAXPROCS, m.Build, m.BLAS)
}

var cpuModel = sync.OnceValue(func() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "unknown"
})

// CurrentMachine returns this process's Machine.
func CurrentMachine() *Machine {
	return &Machine{CPU: cpuModel(), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Build: ops.Build,
		BLAS: ops.BLAS(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
}

// CurrentVCS returns the commit this binary was built from.
var CurrentVCS = sync.OnceValue(func() *VCS {
	v := &VCS{Revision: "unknown", Modified: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value
		case "vcs.time":
			v.Time = s.Value
		}
	}
	return v
})

// stamp records where and when r was made: the machine, the commit and the date (UTC, RFC 3339).
func stamp(r *Result) {
	r.Machine, r.VCS, r.Date = CurrentMachine(), CurrentVCS(), time.Now().UTC().Format(time.RFC3339)
}
