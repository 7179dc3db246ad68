package datasets

import "os"

// EnvDataDir is the environment variable naming the benchmark data directory.
const EnvDataDir = "GPZOO_DATA"

// DefaultDir returns the benchmark data directory from $GPZOO_DATA, or "" when
// it is unset (callers then fall back to Embedded data). The directory is not
// checked.
func DefaultDir() string { return os.Getenv(EnvDataDir) }
