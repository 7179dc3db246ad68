// Package modelfile saves trained gpzoo models to self-describing, versioned, checksummed files and loads
// them back so that predictions are reproduced bit for bit.
//
// A model file holds a model (any gp.Model that is also a gp.Describer: exact GPR, by Cholesky or by conjugate
// gradients (gp/cg), SGPR, SVGP with any layer and likelihood, deep GPs), the data standardisation applied before
// training, the training data that prediction needs (exact GP, SGPR), the prediction cache of a gp.Cached model
// (the CG exact GP's, so that loading does not solve), and free string metadata. Importing this package links every model family,
// so every registered kind can be loaded.
//
// # Format
//
// All integers are little-endian. A file is, in order:
//
//	magic      8 bytes   0x89 'G' 'P' 'Z' '\r' '\n' 0x1A '\n' (the high byte and the line endings catch
//	                     7-bit and text-mode transfers, as in PNG)
//	version    uint32    1, or 2 (FormatVersion) for a model with priors on its Params or a prediction cache
//	length     uint64    the payload's length in bytes (at most MaxPayload)
//	payload    length bytes of UTF-8 JSON (see below)
//	checksum   32 bytes  SHA-256 of every byte before it (magic, version, length and payload)
//
// The payload is one JSON object:
//
//	{
//	  "created_by":   "gpzoo <module version>",
//	  "spec":         gp.Spec of the model: {"kind", "config", "children", "priors"}, recursively (gp.Describe:
//	                  "priors" lists the priors of the Params, version 2 only),
//	  "params":       [{"name", "shape": [..], "transform": Transform.String(), "trainable": bool,
//	                    "raw": base64 of the raw (unconstrained) values as little-endian float64 bits}, ...],
//	  "standardizer": {"x_mean", "x_std", "y_mean", "y_std": base64 float64 bits} or absent,
//	  "train_x":      {"rows", "cols", "data": base64 float64 bits, row-major} or absent,
//	  "train_y":      likewise,
//	  "meta":         {"key": "value", ...},
//	  "cache":        {"name": base64 float64 bits, ...} or absent (version 2: a gp.Cached model's prediction
//	                  cache, the CG exact GP's α and LOVE cache, restored after the parameters and the data)
//	}
//
// Every float is stored as its IEEE-754 bits, never as decimal text, so values round-trip exactly. Params are
// listed in the order Model.Params returns them. Readers reject unknown payload fields: a writer that adds
// any must bump FormatVersion.
//
// # Loading
//
// Load checks, in order: the magic (ErrNotModelFile), the version (*VersionError when newer, ErrCorrupt when
// 0), the length (ErrCorrupt above MaxPayload; memory grows only with the bytes actually read), the length of
// the input (ErrTruncated, with the bytes expected and read), the checksum and the JSON (ErrCorrupt). It then
// rebuilds the model with gp.BuildSpec, checks each stored Param against the rebuilt one (name, shape,
// transform; count), restores the raw values and trainable flags, and validates the standardizer and the
// training data against the model's input dimension. Every inconsistency is ErrCorrupt naming what is wrong.
//
// # Errors
//
// ErrNotModelFile, ErrTruncated and ErrCorrupt are sentinels wrapped with detail (use errors.Is);
// *VersionError carries the versions (use errors.As). Save and SaveFile report models that cannot describe
// themselves, Specs that do not rebuild to the same Params, non-finite values and inconsistent shapes.
package modelfile
