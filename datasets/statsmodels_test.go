package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"
)

// TestEmbeddedStatsmodels: the embedded files are the bytes embed/README.md records (sha256), the CO₂ months
// run from March 1958 to December 2001 in order, each the mean of its weeks (March 1958 has one week, 316.1),
// with the series' gaps left out, and Engel's 235 households read as in the file.
func TestEmbeddedStatsmodels(t *testing.T) {
	readme, err := os.ReadFile("embed/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{"co2.csv": co2Weekly, "engel.csv": engelCSV} {
		sum := sha256.Sum256(raw)
		if h := hex.EncodeToString(sum[:]); !strings.Contains(string(readme), h) {
			t.Errorf("statsmodels/%s: sha256 %s is not the one embed/README.md records", name, h)
		}
	}
	co2, err := EmbeddedCO2Monthly()
	if err != nil {
		t.Fatal(err)
	}
	n := co2.N()
	if n < 500 || n > 526 {
		t.Fatalf("%d months, want about 526 less the gaps", n)
	}
	if x, y := co2.X.At(0, 0), co2.Y.At(0, 0); math.Abs(x-(1958+2.5/12)) > 1e-12 || y != 316.1 {
		t.Errorf("first month %v, %v; want March 1958 (%v), 316.1", x, y, 1958+2.5/12)
	}
	if x := co2.X.At(n-1, 0); math.Abs(x-(2001+11.5/12)) > 1e-12 {
		t.Errorf("last month %v, want December 2001", x)
	}
	// December 2001's weeks: 370.6 ... 371.5 in the file; its mean lies between them.
	if y := co2.Y.At(n-1, 0); y < 370 || y > 372 {
		t.Errorf("December 2001: %v ppmv", y)
	}
	for i := 1; i < n; i++ {
		if co2.X.At(i, 0) <= co2.X.At(i-1, 0) {
			t.Fatalf("months out of order at %d", i)
		}
		if y := co2.Y.At(i, 0); y < 310 || y > 380 {
			t.Errorf("month %v: %v ppmv", co2.X.At(i, 0), y)
		}
	}
	if err := co2.Validate(); err != nil {
		t.Error(err)
	}
	engel, err := EmbeddedEngel()
	if err != nil {
		t.Fatal(err)
	}
	if engel.N() != 235 || engel.X.At(0, 0) != 420.157650843928 || engel.Y.At(0, 0) != 255.839424594576 {
		t.Errorf("engel: %d rows, first %v, %v", engel.N(), engel.X.At(0, 0), engel.Y.At(0, 0))
	}
	if err := engel.Validate(); err != nil {
		t.Error(err)
	}
}
