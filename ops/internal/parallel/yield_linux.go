package parallel

import (
	"runtime"
	"syscall"
)

// yield lets other goroutines, and other threads of the machine, run while a worker or runner polls: Gosched
// for the Go scheduler, then sched_yield for the operating system's, so that a poller does not take its
// process's CPU time from a thread of the same process doing the work when the machine is busier than
// GOMAXPROCS (another process on the cores).
func yield() {
	runtime.Gosched()
	syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}
