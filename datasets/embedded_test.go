package datasets

import "testing"

func TestEmbedded(t *testing.T) {
	if got := EmbeddedNames(); len(got) != 1 || got[0] != "airfoil" {
		t.Fatalf("EmbeddedNames = %v", got)
	}
	d, err := Embedded("airfoil")
	if err != nil {
		t.Fatal(err)
	}
	if d.N() != 1503 || d.D() != 5 || d.Name != "airfoil" {
		t.Fatalf("got %d×%d %q", d.N(), d.D(), d.Name)
	}
	// The published files, byte for byte.
	for _, f := range []string{evansData, evansMask} {
		raw, err := embeddedFile("airfoil", f)
		if err != nil {
			t.Fatal(err)
		}
		embeddedDigest(t, "uci-regression-evans/airfoil/"+f, raw)
	}
	count := make([]int, d.N())
	for f := 0; f < 10; f++ {
		train, test, err := EmbeddedFold("airfoil", f)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d.N(), train, test)
		for _, i := range test {
			count[i]++
		}
	}
	for i, c := range count {
		if c != 1 {
			t.Fatalf("row %d in %d folds", i, c)
		}
	}
}
