package datasets

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// UCI dropout-format folder layout (Hernández-Lobato & Adams 2015; Gal &
// Ghahramani 2016).
const (
	uciData     = "data.txt"
	uciFeatures = "index_features.txt"
	uciTarget   = "index_target.txt"
	uciNSplits  = "n_splits.txt"
)

// ParseUCI builds a dataset from a whitespace-separated numeric matrix
// (data) and the 0-based column indices of the features and targets (read
// with ParseIndices). X is [N, len(features)], Y [N, len(targets)], in the
// listed column order. Errors: those of ReadMatrix and ParseIndices, and
// *IndexError for a column outside the matrix.
func ParseUCI(data, features, targets io.Reader) (*Dataset, error) {
	return parseUCI(data, features, targets, "", "", "")
}

func parseUCI(data, features, targets io.Reader, dn, fn, tn string) (*Dataset, error) {
	m, err := readMatrix(data, 0, dn)
	if err != nil {
		return nil, withFile(err, dn)
	}
	fi, err := parseIndices(features, fn)
	if err != nil {
		return nil, withFile(err, fn)
	}
	ti, err := parseIndices(targets, tn)
	if err != nil {
		return nil, withFile(err, tn)
	}
	x, err := selectColumns(m, fi)
	if err != nil {
		return nil, withFile(err, fn)
	}
	y, err := selectColumns(m, ti)
	if err != nil {
		return nil, withFile(err, tn)
	}
	return &Dataset{X: x, Y: y}, nil
}

// selectColumns copies the columns cols of m into a new matrix.
func selectColumns(m *mat.Dense, cols []int) (*mat.Dense, error) {
	r, c := m.Dims()
	if len(cols) == 0 {
		return nil, fmt.Errorf("datasets: no columns selected: %w", ErrEmpty)
	}
	for _, j := range cols {
		if j < 0 || j >= c {
			return nil, &IndexError{Index: j, Len: c}
		}
	}
	out := mat.NewDense(r, len(cols), nil)
	for i := 0; i < r; i++ {
		src, dst := m.RawRowView(i), out.RawRowView(i)
		for k, j := range cols {
			dst[k] = src[j]
		}
	}
	return out, nil
}

// LoadUCI reads a dropout-format folder (data.txt, index_features.txt,
// index_target.txt) into a regression dataset named after the folder, X
// [N, D], Y [N, 1] (or more columns if index_target.txt lists several).
// Errors: as ParseUCI, plus file-system errors; messages name the file.
func LoadUCI(dir string) (*Dataset, error) {
	if dir == "" {
		return nil, fmt.Errorf("datasets: empty directory name: %w", ErrInvalid)
	}
	files := make([]io.Reader, 3)
	names := []string{filepath.Join(dir, uciData), filepath.Join(dir, uciFeatures), filepath.Join(dir, uciTarget)}
	for i, p := range names {
		f, err := openFile(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files[i] = f
	}
	d, err := parseUCI(files[0], files[1], files[2], names[0], names[1], names[2])
	if err != nil {
		return nil, err
	}
	d.Name = filepath.Base(filepath.Clean(dir))
	return d, nil
}

// NumUCISplits returns the number of train/test splits of a dropout-format
// folder, read from n_splits.txt. Errors: file-system errors, *FormatError
// when the file does not hold exactly one positive integer.
func NumUCISplits(dir string) (int, error) {
	if dir == "" {
		return 0, fmt.Errorf("datasets: empty directory name: %w", ErrInvalid)
	}
	p := filepath.Join(dir, uciNSplits)
	v, err := loadIndices(p)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 || v[0] < 1 {
		return 0, &FormatError{File: p, Msg: "want one positive integer"}
	}
	return v[0], nil
}

// UCISplit returns split k (0-based, k < NumUCISplits(dir)) of a
// dropout-format folder: the train and test row indices from
// index_train_<k>.txt and index_test_<k>.txt, sorted increasingly. The
// indices are checked against the number of rows of data.txt. Errors:
// *IndexError for k out of range or a row index outside [0, N); *FormatError
// for a repeated index or a row in both train and test; ErrEmpty for an empty
// index file; file-system errors.
func UCISplit(dir string, k int) (train, test []int, err error) {
	ns, err := NumUCISplits(dir)
	if err != nil {
		return nil, nil, err
	}
	if k < 0 || k >= ns {
		return nil, nil, &IndexError{Index: k, Len: ns}
	}
	n, err := countRows(filepath.Join(dir, uciData))
	if err != nil {
		return nil, nil, err
	}
	trainPath := filepath.Join(dir, "index_train_"+strconv.Itoa(k)+".txt")
	testPath := filepath.Join(dir, "index_test_"+strconv.Itoa(k)+".txt")
	if train, err = loadIndices(trainPath); err != nil {
		return nil, nil, err
	}
	if test, err = loadIndices(testPath); err != nil {
		return nil, nil, err
	}
	if err := checkIndices(train, n); err != nil {
		return nil, nil, withFile(err, trainPath)
	}
	if err := checkIndices(test, n); err != nil {
		return nil, nil, withFile(err, testPath)
	}
	inTrain := make([]bool, n)
	for _, i := range train {
		inTrain[i] = true
	}
	for _, i := range test {
		if inTrain[i] {
			return nil, nil, &FormatError{File: testPath, Msg: fmt.Sprintf("row %d is in both train and test", i)}
		}
	}
	sort.Ints(train)
	sort.Ints(test)
	return train, test, nil
}
