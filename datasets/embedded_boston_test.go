package datasets

import (
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestEmbeddedBoston checks the embedded Boston data against the data directory's copy read by LoadUCI.
func TestEmbeddedBoston(t *testing.T) {
	d, err := EmbeddedBoston()
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 506 || d.D() != 13 || d.P() != 1 {
		t.Fatalf("shape %d×%d, %d targets", d.N(), d.D(), d.P())
	}
	want, err := LoadUCI(filepath.Join(dataDir(t), "uci-regression-dropout", "bostonHousing"))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(d.X, want.X) || !mat.Equal(d.Y, want.Y) {
		t.Fatal("embedded Boston data differ from the data directory's")
	}
}
