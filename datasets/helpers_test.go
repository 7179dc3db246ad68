package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"testing"
)

// sentinels lists every sentinel error of the package.
var sentinels = []error{ErrEmpty, ErrRagged, ErrNonFinite, ErrIndex, ErrFormat, ErrCategorical, ErrShape, ErrInvalid, ErrNotFound, ErrNoSource, ErrChecksum}

// hasSentinel reports whether err wraps one of the package's sentinels.
func hasSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// gz compresses b.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// idxBytes builds an IDX file of unsigned bytes with the given dimensions.
func idxBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

// checkPartition verifies that train and test are disjoint, sorted, in range
// and together cover 0..n-1.
func checkPartition(t *testing.T, n int, train, test []int) {
	t.Helper()
	seen := make([]int, n)
	for _, part := range [][]int{train, test} {
		if len(part) == 0 {
			t.Fatalf("empty part")
		}
		for k, i := range part {
			if i < 0 || i >= n {
				t.Fatalf("index %d out of [0,%d)", i, n)
			}
			if k > 0 && part[k-1] >= i {
				t.Fatalf("indices not strictly increasing at %d", k)
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("row %d appears %d times in train ∪ test", i, c)
		}
	}
}
