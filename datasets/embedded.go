package datasets

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"slices"
)

// embedFS holds small MIT-licensed data sets; provenance in embed/README.md.
//
//go:embed embed/airfoil/data.csv.gz embed/airfoil/test_mask.csv.gz
var embedFS embed.FS

// embedded lists the embedded sets, all in Evans format.
var embedded = []string{"airfoil"}

// EmbeddedNames returns the names of the data sets compiled into the package
// (currently "airfoil": 1503 × 5, Evans format, 10 folds), sorted.
func EmbeddedNames() []string { return slices.Clone(embedded) }

// Embedded returns a fresh copy of the embedded data set name (see
// EmbeddedNames), parsed as by ParseEvans: X [N, D], Y [N, 1]. Errors:
// ErrNotFound for an unknown name.
func Embedded(name string) (*Dataset, error) {
	raw, err := embeddedFile(name, evansData)
	if err != nil {
		return nil, err
	}
	d, err := parseEvans(bytes.NewReader(raw), "embedded "+name+"/"+evansData)
	if err != nil {
		return nil, err
	}
	d.Name = name
	return d, nil
}

// EmbeddedFold returns fold (0-based) of the embedded data set's 10-fold test
// mask: sorted train and test row indices. Errors: ErrNotFound for an unknown
// name, *IndexError for fold outside [0, 10).
func EmbeddedFold(name string, fold int) (train, test []int, err error) {
	d, err := Embedded(name)
	if err != nil {
		return nil, nil, err
	}
	raw, err := embeddedFile(name, evansMask)
	if err != nil {
		return nil, nil, err
	}
	n := d.N()
	return foldSplit(func() ([][]int, error) {
		return parseFoldMask(bytes.NewReader(raw), n, "embedded "+name+"/"+evansMask)
	}, n, fold)
}

// embeddedFile returns the bytes of file of the embedded set name.
func embeddedFile(name, file string) ([]byte, error) {
	if !slices.Contains(embedded, name) {
		return nil, fmt.Errorf("datasets: no embedded data set %q (have %v): %w", name, embedded, ErrNotFound)
	}
	raw, err := embedFS.ReadFile(path.Join("embed", name, file))
	if err != nil {
		return nil, fmt.Errorf("datasets: embedded %s/%s: %w", name, file, ErrNotFound)
	}
	return raw, nil
}

// bostonData is data.txt of the Boston housing set in the layout of uci-regression-dropout/bostonHousing
// (506 rows, 13 features then the target); provenance in embed/README.md.
//
//go:embed embed/boston/data.txt
var bostonData []byte

// EmbeddedBoston returns a fresh copy of the embedded Boston housing data (UCI; the file of Gal & Ghahramani's
// uci-regression-dropout/bostonHousing, without its split files): X [506, 13], Y [506, 1] (median home value in
// $1000s, the last column), as LoadUCI reads that folder.
func EmbeddedBoston() (*Dataset, error) {
	const name = "embedded boston/data.txt"
	m, err := readMatrix(bytes.NewReader(bostonData), 0, name)
	if err != nil {
		return nil, err
	}
	d, err := splitLastColumn(m, name)
	if err != nil {
		return nil, err
	}
	d.Name = "boston"
	return d, nil
}
