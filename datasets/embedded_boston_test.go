package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// embeddedDigest checks that the embedded copy of a benchmark file has the size and SHA-256 the embedded
// manifest records for it: the embedded data are the published files, byte for byte.
func embeddedDigest(t *testing.T, stagedPath string, data []byte) {
	t.Helper()
	es, err := EmbeddedManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Path != stagedPath {
			continue
		}
		sum := sha256.Sum256(data)
		if int64(len(data)) != e.Bytes || hex.EncodeToString(sum[:]) != e.SHA256 {
			t.Fatalf("embedded %s: %d bytes, sha256 %x; the manifest says %d bytes, %s", stagedPath, len(data), sum, e.Bytes, e.SHA256)
		}
		return
	}
	t.Fatalf("%s is not in the embedded manifest", stagedPath)
}

// TestEmbeddedBoston checks the embedded Boston data: the published file (its manifest digest) and its shape.
func TestEmbeddedBoston(t *testing.T) {
	embeddedDigest(t, "uci-regression-dropout/bostonHousing/data.txt", bostonData)
	d, err := EmbeddedBoston()
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 506 || d.D() != 13 || d.P() != 1 || d.Y.At(0, 0) != 24 || d.X.At(0, 0) != 0.00632 {
		t.Fatalf("shape %d×%d, %d targets, row 0 x0=%v y=%v", d.N(), d.D(), d.P(), d.X.At(0, 0), d.Y.At(0, 0))
	}
}
