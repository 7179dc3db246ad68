// Package datasets loads the benchmark data used by gpzoo and prepares it for
// training: parsers for the UCI "dropout" folders (Hernández-Lobato & Adams
// 2015 splits), Evans' uci_datasets folders (10-fold test masks), the
// Fernández-Delgado and Rätsch classification CSVs, MNIST IDX files and plain
// user CSVs with a header; seeded train/test splits and k-fold partitions;
// column standardisation with the inverse maps needed to report metrics in
// original units; and a fixed-size minibatch Sampler.
//
// The benchmark data directory is taken from $GPZOO_DATA (DefaultDir); when it
// is unset, the MIT-licensed airfoil set compiled into the package is
// available through Embedded and EmbeddedFold.
//
// # Conventions
//
//   - All numbers are float64. A Dataset holds X [N, D] (rows are points) and
//     Y [N, P]; class labels are stored in Y [N, 1] as 0..NumClasses-1.
//   - Row, column, fold and split indices are 0-based everywhere, including in
//     error messages (which say so). Line numbers in *FormatError are 1-based.
//   - Every parser has an io.Reader form (ReadMatrix, ReadTable, ParseUCI,
//     ParseIndices, ParseEvans, ParseFoldMask, ParseDelgado, ParseRaetsch,
//     ParseIDXImages, ParseIDXLabels) and gzip input is detected by its magic
//     bytes, so files may be compressed or not. Load* functions open files and
//     name them in errors.
//   - Randomness is injected as a *rand.Rand from math/rand/v2, seeded by the
//     caller: the same seed gives the same splits and batches.
//   - Returned index slices are sorted (except Sampler batches) and fresh;
//     returned datasets share no memory with their inputs.
//   - Exported functions return errors rather than panic on bad data or
//     arguments. The one exception is GatherRows, a non-allocating hot-loop
//     helper that panics on shape errors like gonum's mat (CheckGather
//     validates its arguments).
//
// # Errors
//
// Every error wraps one sentinel, to be tested with errors.Is: ErrEmpty,
// ErrRagged, ErrNonFinite, ErrIndex, ErrFormat, ErrCategorical, ErrShape,
// ErrInvalid, ErrNotFound, ErrNoSource or ErrChecksum (file-system errors are wrapped as they come from
// package os, e.g. fs.ErrNotExist). The detailed cases are typed, available
// through errors.As, and unwrap to their sentinel:
//
//   - *NonFiniteError{Row, Col, Value}: a NaN or ±Inf literal, or an
//     overflowing number, at 0-based data row Row and column Col.
//   - *RaggedError{Row, Want, Got}: row Row has Got fields, Want expected.
//   - *IndexError{Index, Len}: Index outside [0, Len) (row, column, split or
//     fold index).
//   - *FormatError{File, Line, Msg}: unparsable text, bad IDX magic,
//     truncated or corrupt gzip, bad labels or masks.
//   - *TableError: a bad cell of a user table (ReadTable, ReadInputs), with
//     its 1-based data row, file line and column name; *NonNumericError:
//     every non-numeric used column of a user table, with an example cell.
//   - *ChecksumError: a downloaded file whose SHA-256 is not the manifest's.
//
// # Users' tables and the benchmark data directory
//
// ReadTable/LoadTable read a user's CSV with a header row (target and
// features by column name; classification labels mapped to 0..K−1 with the
// original values kept), ReadInputs/LoadInputs the inputs of a prediction
// file by header name. The manifest (MANIFEST.tsv of the data directory, or
// the embedded copy) lists every benchmark file with its size, SHA-256 and
// public source; Verify checks a directory against it and Fetch downloads
// missing files, checking each before it is renamed into place.
//
// All messages start with "datasets: ".
package datasets
