package zoo

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A runner making its checkpoint folder while another runner of the same table removes the folders its finished
// run left empty (the parents they share) still gets its folder and protocol file: the race two table runners
// lost in TestTableRunLocalAndSpread (mkdir …/.checkpoints/test-tiny: no such file or directory).
func TestNewCheckpointDirRacesRemoval(t *testing.T) {
	dir := t.TempDir()
	done := Task{Table: "race", Row: "set/model-a", Split: 0}
	mine := Task{Table: "race", Row: "set/model-b", Split: 0}
	for i := range 100 {
		ck := checkpointPath(dir, done)
		if err := os.MkdirAll(ck, 0o755); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); removeCheckpoint(dir, done) }()
		var err error
		go func() {
			defer wg.Done()
			d := checkpointPath(dir, mine)
			err = newCheckpointDir(d, filepath.Join(d, "protocol"), "text")
		}()
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if b, err := os.ReadFile(filepath.Join(checkpointPath(dir, mine), "protocol")); err != nil || string(b) != "text" {
			t.Fatalf("round %d: protocol file %q, %v", i, b, err)
		}
		removeCheckpoint(dir, mine)
	}
}
