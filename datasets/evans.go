package datasets

import (
	"fmt"
	"io"
	"path/filepath"

	"gonum.org/v1/gonum/mat"
)

// Evans (uci_datasets) folder layout.
const (
	evansData = "data.csv.gz"
	evansMask = "test_mask.csv.gz"
)

// ParseEvans parses an Evans-format regression table from r: comma-separated
// numbers, no header, the last column the target (gzip detected by magic
// bytes). X is [N, C-1], Y [N, 1]. Errors: those of ReadMatrix, and
// *FormatError when there are fewer than 2 columns.
func ParseEvans(r io.Reader) (*Dataset, error) {
	return parseEvans(r, "")
}

func parseEvans(r io.Reader, name string) (*Dataset, error) {
	m, err := readMatrix(r, ',', name)
	if err != nil {
		return nil, err
	}
	return splitLastColumn(m, name)
}

// splitLastColumn splits m [N, C] into X [N, C-1] and Y [N, 1].
func splitLastColumn(m *mat.Dense, name string) (*Dataset, error) {
	r, c := m.Dims()
	if c < 2 {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("%d column(s): want features and a target", c)}
	}
	x := mat.NewDense(r, c-1, nil)
	x.Copy(m.Slice(0, r, 0, c-1))
	y := mat.NewDense(r, 1, nil)
	y.Copy(m.Slice(0, r, c-1, c))
	return &Dataset{X: x, Y: y}, nil
}

// LoadEvans reads dir/data.csv.gz of an Evans-format folder into a regression
// dataset named after the folder. Errors: as ParseEvans, plus file-system
// errors.
func LoadEvans(dir string) (*Dataset, error) {
	if dir == "" {
		return nil, fmt.Errorf("datasets: empty directory name: %w", ErrInvalid)
	}
	p := filepath.Join(dir, evansData)
	d, err := withOpen(p, func(r io.Reader) (*Dataset, error) { return parseEvans(r, p) })
	if err != nil {
		return nil, err
	}
	d.Name = filepath.Base(filepath.Clean(dir))
	return d, nil
}

// ParseFoldMask parses a test-fold mask from r: an [n, F] comma-separated
// matrix of 0/1 (gzip detected), entry (i, f) = 1 when row i is in the test
// set of fold f. It returns, for each fold f, its test row indices in
// increasing order. A row may belong to any number of test folds; the
// training rows of a fold are the complement (see Complement). Errors:
// ErrInvalid for n < 1; *FormatError when the mask has a number of rows
// other than n or an entry other than 0 or 1; those of ReadMatrix.
func ParseFoldMask(r io.Reader, n int) ([][]int, error) {
	return parseFoldMask(r, n, "")
}

func parseFoldMask(r io.Reader, n int, name string) ([][]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("datasets: fold mask for n=%d rows: %w", n, ErrInvalid)
	}
	m, err := readMatrix(r, ',', name)
	if err != nil {
		return nil, err
	}
	rows, folds := m.Dims()
	if rows != n {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("fold mask has %d rows, dataset has %d", rows, n)}
	}
	out := make([][]int, folds)
	for i := 0; i < rows; i++ {
		for f, v := range m.RawRowView(i) {
			switch v {
			case 1:
				out[f] = append(out[f], i)
			case 0:
			default:
				return nil, &FormatError{File: name, Line: i + 1, Msg: fmt.Sprintf("mask entry %v at row %d, fold %d (0-based) is not 0 or 1", v, i, f)}
			}
		}
	}
	return out, nil
}

// LoadFoldMask reads the fold mask file at path (see ParseFoldMask) for a
// dataset of n rows.
func LoadFoldMask(path string, n int) ([][]int, error) {
	return withOpen(path, func(r io.Reader) ([][]int, error) { return parseFoldMask(r, n, path) })
}

// EvansSplit returns fold (0-based) of an Evans-format folder: test holds the
// rows marked in column fold of test_mask.csv.gz, train the others, both
// sorted. Errors: *IndexError when fold is outside [0, F); ErrEmpty when the
// fold's test set is empty; those of LoadFoldMask; file-system errors.
func EvansSplit(dir string, fold int) (train, test []int, err error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("datasets: empty directory name: %w", ErrInvalid)
	}
	n, err := countRows(filepath.Join(dir, evansData))
	if err != nil {
		return nil, nil, err
	}
	return foldSplit(func() ([][]int, error) { return LoadFoldMask(filepath.Join(dir, evansMask), n) }, n, fold)
}

// foldSplit selects fold from the masks returned by load.
func foldSplit(load func() ([][]int, error), n, fold int) (train, test []int, err error) {
	folds, err := load()
	if err != nil {
		return nil, nil, err
	}
	if fold < 0 || fold >= len(folds) {
		return nil, nil, &IndexError{Index: fold, Len: len(folds)}
	}
	test = folds[fold]
	if len(test) == 0 {
		return nil, nil, fmt.Errorf("datasets: fold %d has no test rows: %w", fold, ErrEmpty)
	}
	train, err = Complement(n, test)
	if err != nil {
		return nil, nil, err
	}
	if len(train) == 0 {
		return nil, nil, fmt.Errorf("datasets: fold %d has no training rows: %w", fold, ErrEmpty)
	}
	return train, test, nil
}
