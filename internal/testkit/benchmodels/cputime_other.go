//go:build !unix

package benchmodels

import "time"

// CPUTime reports false: the process's CPU time is read only on Unix systems.
func CPUTime() (time.Duration, bool) { return 0, false }
