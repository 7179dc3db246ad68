package oip

// The protocol's tensor data types.
const (
	BOOL   = "BOOL"
	UINT8  = "UINT8"
	UINT16 = "UINT16"
	UINT32 = "UINT32"
	UINT64 = "UINT64"
	INT8   = "INT8"
	INT16  = "INT16"
	INT32  = "INT32"
	INT64  = "INT64"
	FP16   = "FP16"
	FP32   = "FP32"
	FP64   = "FP64"
	BYTES  = "BYTES"
)

// maxExactInt is 2⁵³: every integer of magnitude up to it is exact in a float64.
const maxExactInt = 1 << 53

// datatypeInfo describes how the decoder reads one data type's elements.
type datatypeInfo struct {
	// numeric: the elements are JSON numbers the decoder reads (BOOL, FP16 and BYTES are known but not read).
	numeric bool
	// integer: the elements must be integers in [min, max].
	integer  bool
	min, max float64
	// fp32: the elements are rounded to float32.
	fp32 bool
}

var datatypes = map[string]datatypeInfo{
	BOOL:   {},
	UINT8:  {numeric: true, integer: true, min: 0, max: 1<<8 - 1},
	UINT16: {numeric: true, integer: true, min: 0, max: 1<<16 - 1},
	UINT32: {numeric: true, integer: true, min: 0, max: 1<<32 - 1},
	UINT64: {numeric: true, integer: true, min: 0, max: maxExactInt},
	INT8:   {numeric: true, integer: true, min: -1 << 7, max: 1<<7 - 1},
	INT16:  {numeric: true, integer: true, min: -1 << 15, max: 1<<15 - 1},
	INT32:  {numeric: true, integer: true, min: -1 << 31, max: 1<<31 - 1},
	INT64:  {numeric: true, integer: true, min: -maxExactInt, max: maxExactInt},
	FP16:   {},
	FP32:   {numeric: true, fp32: true},
	FP64:   {numeric: true},
	BYTES:  {},
}

// KnownDatatype reports whether dt is one of the protocol's tensor data types (case-sensitive).
func KnownDatatype(dt string) bool {
	_, ok := datatypes[dt]
	return ok
}
