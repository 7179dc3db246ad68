//go:build !linux

package parallel

import "runtime"

// yield lets other goroutines run while a worker or runner polls.
func yield() { runtime.Gosched() }
