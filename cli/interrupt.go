package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptContext returns a context that SIGINT or SIGTERM cancels: training stops after its current step or
// evaluation (checkpointing it where the command checkpoints). The first signal also restores the default
// handling, so a second one ends the process at once, even inside a phase that does not watch the context (a
// long solve, an L-BFGS evaluation). stop releases the signals.
func interruptContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
