package datasets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"
)

// IDX limits: large enough for MNIST-like sets, small enough that a corrupt
// header cannot request absurd sizes.
const (
	maxIDXItems     = 1 << 24
	maxIDXItemBytes = 1 << 24
	maxIDXBytes     = 1 << 32
)

// readIDX reads an IDX file of unsigned bytes with ndims dimensions and
// returns its dimensions and payload.
func readIDX(r io.Reader, ndims int, name string) ([]int, []byte, error) {
	in, err := openInput(r, name)
	if err != nil {
		return nil, nil, err
	}
	head := make([]byte, 4+4*ndims)
	if n, err := io.ReadFull(in, head[:4]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, nil, fmt.Errorf("datasets: empty IDX input: %w", ErrEmpty)
		}
		return nil, nil, readError(err, name, 0)
	}
	if head[0] != 0 || head[1] != 0 || head[2] != 0x08 || int(head[3]) != ndims {
		return nil, nil, &FormatError{File: name, Msg: fmt.Sprintf("bad IDX magic % x: want 00 00 08 %02x (unsigned bytes, %d dimensions)", head[:4], ndims, ndims)}
	}
	if _, err := io.ReadFull(in, head[4:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, readError(err, name, 0)
	}
	dims := make([]int, ndims)
	total := int64(1)
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(head[4+4*i:]))
		if dims[i] == 0 {
			return nil, nil, fmt.Errorf("datasets: IDX dimension %d is 0: %w", i, ErrEmpty)
		}
		total *= int64(dims[i])
		if total > maxIDXBytes {
			return nil, nil, &FormatError{File: name, Msg: fmt.Sprintf("IDX dimensions %v too large", dims)}
		}
	}
	if dims[0] > maxIDXItems || total/int64(dims[0]) > maxIDXItemBytes {
		return nil, nil, &FormatError{File: name, Msg: fmt.Sprintf("IDX dimensions %v too large", dims)}
	}
	// Read through a buffer that grows with the data actually present, so a
	// lying header cannot force a huge allocation.
	var buf bytes.Buffer
	got, err := io.Copy(&buf, io.LimitReader(in, total))
	if err != nil {
		return nil, nil, readError(err, name, 0)
	}
	if got != total {
		return nil, nil, &FormatError{File: name, Msg: fmt.Sprintf("IDX payload has %d bytes, header %v needs %d (truncated)", got, dims, total)}
	}
	// Reading to the end also verifies a gzip checksum.
	extra, err := io.Copy(io.Discard, io.LimitReader(in, 1))
	if err != nil {
		return nil, nil, readError(err, name, 0)
	}
	if extra > 0 {
		return nil, nil, &FormatError{File: name, Msg: "trailing bytes after IDX payload"}
	}
	return dims, buf.Bytes(), nil
}

// ParseIDXImages parses an IDX image file (magic 00 00 08 03: unsigned bytes,
// dimensions [n, rows, cols]; gzip detected by magic bytes) into an
// [n, rows*cols] matrix, one image per row in row-major pixel order, scaled
// from 0..255 to [0, 1]. Errors: ErrEmpty for a nil reader, no data or a zero
// dimension; *FormatError for bad magic, truncated or trailing data, corrupt
// gzip, or dimensions over 2^24 images, 2^24 pixels or 2^32 bytes.
func ParseIDXImages(r io.Reader) (*mat.Dense, error) {
	return parseIDXImages(r, "")
}

func parseIDXImages(r io.Reader, name string) (*mat.Dense, error) {
	dims, raw, err := readIDX(r, 3, name)
	if err != nil {
		return nil, err
	}
	pix := make([]float64, len(raw))
	for i, b := range raw {
		pix[i] = float64(b) / 255
	}
	return mat.NewDense(dims[0], dims[1]*dims[2], pix), nil
}

// ParseIDXLabels parses an IDX label file (magic 00 00 08 01: unsigned bytes,
// one dimension [n]; gzip detected by magic bytes) into n labels 0..255.
// Errors: as ParseIDXImages.
func ParseIDXLabels(r io.Reader) ([]int, error) {
	return parseIDXLabels(r, "")
}

func parseIDXLabels(r io.Reader, name string) ([]int, error) {
	_, raw, err := readIDX(r, 1, name)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(raw))
	for i, b := range raw {
		out[i] = int(b)
	}
	return out, nil
}

// LoadMNIST reads an MNIST image file and its label file (gzip or raw IDX)
// into a dataset: X [N, 784] in [0, 1], Y [N, 1] labels 0..9, NumClasses 10.
// Errors: those of ParseIDXImages and ParseIDXLabels; *FormatError when the
// image and label counts differ or a label exceeds 9; file-system errors.
func LoadMNIST(imagesPath, labelsPath string) (*Dataset, error) {
	x, err := withOpen(imagesPath, func(r io.Reader) (*mat.Dense, error) { return parseIDXImages(r, imagesPath) })
	if err != nil {
		return nil, err
	}
	labels, err := withOpen(labelsPath, func(r io.Reader) ([]int, error) { return parseIDXLabels(r, labelsPath) })
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	if len(labels) != n {
		return nil, &FormatError{File: labelsPath, Msg: fmt.Sprintf("%d labels for %d images", len(labels), n)}
	}
	y := mat.NewDense(n, 1, nil)
	for i, l := range labels {
		if l > 9 {
			return nil, &FormatError{File: labelsPath, Msg: fmt.Sprintf("label %d at item %d is not a digit", l, i)}
		}
		y.Set(i, 0, float64(l))
	}
	return &Dataset{Name: "mnist", X: x, Y: y, NumClasses: 10}, nil
}
