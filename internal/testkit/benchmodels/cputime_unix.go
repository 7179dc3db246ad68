//go:build unix

package benchmodels

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used so far, from getrusage, and true. On a
// shared machine a step's CPU time at GOMAXPROCS = 1 (go test -cpu 1) measures its work more steadily than its
// wall time, which grows with the other processes' load.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
