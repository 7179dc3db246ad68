package zoo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"gonum.org/v1/gonum/mat"
)

// source describes where a data set lives in the shared/data layout and which split protocol it uses.
type source struct {
	format string // "evans", "uci", "delgado", "delgado-pair", "raetsch", "mnist"
	// path is the folder or file below the format's directory; for "delgado-pair" the prefix P of the files
	// P_train.csv and P_test.csv.
	path string
	// trainSize is the Rätsch protocol's training-set size; testFrac the Fernández-Delgado sets' test fraction.
	trainSize int
	testFrac  float64
	protocol  string // the split protocol, in words (for descriptions)
	// load, for format "embedded" (a data set compiled into the binary with a split protocol of its own, whatever
	// the data directory), returns the data set and split k's training and test rows.
	load func(k int) (d *datasets.Dataset, train, test []int, err error)
}

const (
	protoEvans   = "fold K of the 10-fold test mask of Wilson's preprocessing"
	protoUCI     = "split K of the 20 standard splits of Hernández-Lobato & Adams (2015) (protein: 5)"
	protoDelgado = "a seeded random 90/10 split (seed = split index); features standardised by Fernández-Delgado et al."
	protoRaetsch = "a seeded random split with the usual training size (the official 100 splits are not available)"
	protoMNIST   = "the standard 60000/10000 split (only split 0)"
	protoDelPair = "the given train/test files of Fernández-Delgado et al. (only split 0); features standardised by them"
	protoBB      = "a seeded random 90/10 split (seed = split index), the protocol of bayesian_benchmarks' 10 random splits"
)

var sources = map[string]source{
	"airfoil":      {format: "evans", path: "airfoil", protocol: protoEvans},
	"autompg":      {format: "evans", path: "autompg", protocol: protoEvans},
	"servo":        {format: "evans", path: "servo", protocol: protoEvans},
	"pendulum":     {format: "evans", path: "pendulum", protocol: protoEvans},
	"kin40k":       {format: "evans", path: "kin40k", protocol: protoEvans},
	"pol":          {format: "evans", path: "pol", protocol: protoEvans},
	"pumadyn32nm":  {format: "evans", path: "pumadyn32nm", protocol: protoEvans},
	"bike":         {format: "evans", path: "bike", protocol: protoEvans},
	"keggdirected": {format: "evans", path: "keggdirected", protocol: protoEvans},
	"boston":       {format: "uci", path: "bostonHousing", protocol: protoUCI},
	"yacht":        {format: "uci", path: "yacht", protocol: protoUCI},
	"kin8nm":       {format: "uci", path: "kin8nm", protocol: protoUCI},
	"power":        {format: "uci", path: "power-plant", protocol: protoUCI},
	"protein":      {format: "uci", path: "protein-tertiary-structure", protocol: protoUCI},
	"naval":        {format: "uci", path: "naval-propulsion-plant", protocol: protoUCI},
	"ringnorm":     {format: "delgado", path: "ringnorm.csv", testFrac: 0.1, protocol: protoDelgado},
	"twonorm":      {format: "delgado", path: "twonorm.csv", testFrac: 0.1, protocol: protoDelgado},
	"magic":        {format: "delgado", path: "magic.csv", testFrac: 0.1, protocol: protoDelgado},
	"letter":       {format: "delgado", path: "letter.csv", testFrac: 0.1, protocol: protoDelgado},
	"pendigits":    {format: "delgado-pair", path: "pendigits", protocol: protoDelPair},
	"landsat":      {format: "delgado-pair", path: "statlog-landsat", protocol: protoDelPair},
	"banana":       {format: "raetsch", path: "banana.csv", trainSize: 400, protocol: protoRaetsch},
	"german":       {format: "raetsch", path: "german.csv", trainSize: 700, protocol: protoRaetsch},
	"image":        {format: "raetsch", path: "image.csv", trainSize: 1300, protocol: protoRaetsch},
	"titanic":      {format: "raetsch", path: "titanic.csv", trainSize: 150, protocol: protoRaetsch},
	"splice":       {format: "raetsch", path: "splice.csv", trainSize: 1000, protocol: protoRaetsch},
	"thyroid":      {format: "raetsch", path: "thyroid.csv", trainSize: 140, protocol: protoRaetsch},
	"mnist":        {format: "mnist", protocol: protoMNIST},
	// boston-bb is Boston housing under bayesian_benchmarks' random 90/10 splits (ANCHORS §1.3), from the data
	// embedded in the binary or the data directory's uci-regression-dropout/bostonHousing/data.txt.
	"boston-bb": {format: "uci-random", path: "bostonHousing", testFrac: 0.1, protocol: protoBB},
}

// split is one train/test split of a data set.
type split struct {
	train, test *datasets.Dataset
	source      string
}

// loadSplit loads data set name and its split k under the data set's protocol (see sources). Without a data
// directory, data embedded in the binary is used where there is some.
func loadSplit(name, dir string, k int) (*split, error) {
	src, ok := sources[name]
	if !ok {
		return nil, fmt.Errorf("zoo: no loader for data set %q", name)
	}
	if k < 0 {
		return nil, fmt.Errorf("zoo: split must be ≥ 0, got %d", k)
	}
	if dir == "" && !(src.format == "evans" && embedded(name)) && src.format != "uci-random" && src.format != "embedded" {
		return nil, fmt.Errorf("zoo: data set %q is not embedded: pass --data DIR or set %s to the benchmark data directory", name, datasets.EnvDataDir)
	}
	var (
		d, dt       *datasets.Dataset
		train, test []int
		err         error
		from        string
	)
	switch src.format {
	case "embedded":
		from = "embedded:" + name
		d, train, test, err = src.load(k)
	case "evans":
		if dir == "" {
			from = "embedded:" + name
			if d, err = datasets.Embedded(name); err == nil {
				train, test, err = datasets.EmbeddedFold(name, k)
			}
			break
		}
		from = filepath.Join(dir, "uci-regression-evans", src.path)
		if d, err = datasets.LoadEvans(from); err == nil {
			train, test, err = datasets.EvansSplit(from, k)
		}
	case "uci":
		from = filepath.Join(dir, "uci-regression-dropout", src.path)
		if d, err = datasets.LoadUCI(from); err == nil {
			train, test, err = datasets.UCISplit(from, k)
		}
	case "uci-random":
		if dir == "" {
			from = "embedded:boston"
			d, err = datasets.EmbeddedBoston()
		} else {
			from = filepath.Join(dir, "uci-regression-dropout", src.path)
			d, err = datasets.LoadUCI(from)
		}
		if err == nil {
			train, test, err = datasets.RandomSplit(d.N(), src.testFrac, rand.New(rand.NewPCG(uint64(k), 0xbb)))
		}
	case "delgado":
		from = filepath.Join(dir, "classification-delgado", src.path)
		if d, err = datasets.LoadDelgado(from); err == nil {
			train, test, err = datasets.RandomSplit(d.N(), src.testFrac, rand.New(rand.NewPCG(uint64(k), 0xde1)))
		}
	case "delgado-pair":
		if k != 0 {
			return nil, fmt.Errorf("zoo: %s has only split 0 (the given train/test files), got %d", name, k)
		}
		from = filepath.Join(dir, "classification-delgado", src.path+"_{train,test}.csv")
		if d, err = datasets.LoadDelgado(filepath.Join(dir, "classification-delgado", src.path+"_train.csv")); err == nil {
			dt, err = datasets.LoadDelgado(filepath.Join(dir, "classification-delgado", src.path+"_test.csv"))
		}
		if err == nil && d.D() != dt.D() {
			err = fmt.Errorf("train and test files have %d and %d features", d.D(), dt.D())
		}
		if err == nil {
			// A class may be missing from one file: both share the larger label range.
			d.NumClasses = max(d.NumClasses, dt.NumClasses)
			dt.NumClasses = d.NumClasses
			return &split{train: d, test: dt, source: from}, nil
		}
	case "raetsch":
		from = filepath.Join(dir, "classification-raetsch", src.path)
		if d, err = datasets.LoadRaetsch(from); err == nil && d.N() <= src.trainSize {
			err = fmt.Errorf("%d rows: the protocol trains on %d and tests on the rest", d.N(), src.trainSize)
		}
		if err == nil {
			train, test, err = datasets.RandomSplit(d.N(), 1-float64(src.trainSize)/float64(d.N()), rand.New(rand.NewPCG(uint64(k), 0x4a7)))
		}
	case "mnist":
		if k != 0 {
			return nil, fmt.Errorf("zoo: mnist has only split 0, got %d", k)
		}
		from = filepath.Join(dir, "mnist")
		if d, err = datasets.LoadMNIST(filepath.Join(from, "train-images-idx3-ubyte.gz"), filepath.Join(from, "train-labels-idx1-ubyte.gz")); err == nil {
			dt, err = datasets.LoadMNIST(filepath.Join(from, "t10k-images-idx3-ubyte.gz"), filepath.Join(from, "t10k-labels-idx1-ubyte.gz"))
		}
		if err == nil {
			return &split{train: d, test: dt, source: from}, nil
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

// standardised returns the split standardised on its training part: the inputs (unless keepX, which only
// classification sets may ask for, e.g. MNIST pixels) and, for regression, the targets. std is nil when nothing
// was standardised.
func (s *split) standardised(keepX bool) (tr, te *datasets.Dataset, std *datasets.Standardizer, err error) {
	tr, te, std, _, err = s.standardisedFor(keepX, nil)
	return tr, te, std, err
}

// standardisedFor is standardised for the configuration c (nil: none): the categorical input columns of c's
// kernel (a coregion kernel's task column) keep their category indices (keepCategorical, checked on the
// training and the test rows), as TrainCustom keeps them in a user's file; cats are those columns.
func (s *split) standardisedFor(keepX bool, c *CustomConfig) (tr, te *datasets.Dataset, std *datasets.Standardizer, cats []gp.CategoricalInput, err error) {
	classify := s.train.NumClasses > 0
	if keepX && classify {
		return s.train, s.test, nil, nil, nil
	}
	if std, err = datasets.FitStandardizer(s.train, !classify); err != nil {
		return nil, nil, nil, nil, err
	}
	if c != nil {
		var test *mat.Dense
		if s.test != nil {
			test = s.test.X
		}
		if cats, err = keepCategorical(*c, s.train.X, std, s.train.X, test); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if tr, err = std.Apply(s.train); err != nil {
		return nil, nil, nil, nil, err
	}
	if te, err = std.Apply(s.test); err != nil {
		return nil, nil, nil, nil, err
	}
	return tr, te, std, cats, nil
}
