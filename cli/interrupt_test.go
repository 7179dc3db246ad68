package cli

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrainInterruptLBFGS: SIGINT to a real gpzoo train process in an L-BFGS fit (the exact GP by Cholesky, 1,350
// training rows, which converges after about 40 iterations) ends it at the next evaluation, after its first
// progress record at iteration 10: an "interrupted" error, exit status 1, no model file. Before, the fit ignored
// the signal and ran to the end.
func TestTrainInterruptLBFGS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	csv, model := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.gpz")
	if err := Main([]string{"synth", "--rows", "1500", "--inputs", "8", "--seed", "3", "--out", csv}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "train", "--csv", csv, "--target", "y", "--model", "gpr", "--save", model)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sent := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !sent && strings.Contains(sc.Text(), "msg=\"train: L-BFGS\"") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			sent = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("gpzoo train still running 2 minutes after SIGINT; standard error:\n%s", log.String())
	}
	var ee *exec.ExitError
	if !sent || !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(log.String(), "interrupted") {
		t.Fatalf("signal sent %t, exit %v; want exit status 1 and an interrupted error; standard error:\n%s", sent, err, log.String())
	}
	if _, err := os.Stat(model); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted run wrote %s (%v)", model, err)
	}
}
