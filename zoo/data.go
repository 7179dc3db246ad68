package zoo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gpzoo/gpzoo/datasets"
)

// source describes where a data set lives in the shared/data layout.
type source struct {
	name   string // our lower-case name
	format string // "evans" or "uci"
	folder string // folder below the format's directory
}

var sources = map[string]source{
	"airfoil":  {"airfoil", "evans", "airfoil"},
	"autompg":  {"autompg", "evans", "autompg"},
	"servo":    {"servo", "evans", "servo"},
	"pendulum": {"pendulum", "evans", "pendulum"},
	"boston":   {"boston", "uci", "bostonHousing"},
	"yacht":    {"yacht", "uci", "yacht"},
}

// split is one train/test split of a data set, ready to standardise.
type split struct {
	train, test *datasets.Dataset
	source      string
}

// loadSplit loads data set name and its split k: the Evans sets use fold k of their 10-fold mask, the
// dropout-format UCI sets the split files of Hernández-Lobato & Adams (2015). Without a data directory, data
// embedded in the binary is used where there is some.
func loadSplit(name, dir string, k int) (*split, error) {
	src, ok := sources[name]
	if !ok {
		return nil, fmt.Errorf("zoo: no loader for data set %q", name)
	}
	var (
		d           *datasets.Dataset
		train, test []int
		err         error
		from        string
	)
	switch {
	case dir == "" && src.format == "evans" && embedded(name):
		from = "embedded:" + name
		if d, err = datasets.Embedded(name); err == nil {
			train, test, err = datasets.EmbeddedFold(name, k)
		}
	case dir == "":
		return nil, fmt.Errorf("zoo: data set %q is not embedded: pass --data DIR or set %s to the benchmark data directory", name, datasets.EnvDataDir)
	case src.format == "evans":
		p := filepath.Join(dir, "uci-regression-evans", src.folder)
		from = p
		if d, err = datasets.LoadEvans(p); err == nil {
			train, test, err = datasets.EvansSplit(p, k)
		}
	default:
		p := filepath.Join(dir, "uci-regression-dropout", src.folder)
		from = p
		if d, err = datasets.LoadUCI(p); err == nil {
			train, test, err = datasets.UCISplit(p, k)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("zoo: data set %q not found (looked in %s): %w", name, from, err)
		}
		return nil, fmt.Errorf("zoo: data set %q split %d: %w", name, k, err)
	}
	s := &split{source: from}
	if s.train, err = d.Subset(train); err != nil {
		return nil, err
	}
	if s.test, err = d.Subset(test); err != nil {
		return nil, err
	}
	return s, nil
}

func embedded(name string) bool {
	for _, n := range datasets.EmbeddedNames() {
		if n == name {
			return true
		}
	}
	return false
}
