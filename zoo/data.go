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
	// trainSize is the Rätsch protocol's training-set size; testFrac the Fernández-Delgado sets' test fraction;
	// trainPercent the "uci-random" sets' training share (⌊N·trainPercent/100⌋ rows: datasets.RandomSplitTrain)
	// and stream the random stream of their splits (split k's permutation is drawn from PCG(k, stream)).
	trainSize    int
	testFrac     float64
	trainPercent int
	stream       uint64
	// set names the benchmark data set the source reads when its name is another (kin8nm-bb reads kin8nm):
	// DataSetOf.
	set      string
	protocol string // the split protocol, in words (for descriptions)
	// load, for format "embedded" (a data set compiled into the binary with a split protocol of its own, whatever
	// the data directory), returns the data set and split k's training and test rows.
	load func(k int) (d *datasets.Dataset, train, test []int, err error)
}

const (
	protoEvans     = "fold K of the 10-fold test mask of Wilson's preprocessing"
	protoUCI       = "split K of the 20 standard splits of Hernández-Lobato & Adams (2015) (protein: 5)"
	protoDelgado   = "a seeded random 90/10 split (seed = split index); features standardised by Fernández-Delgado et al."
	protoDelgado80 = "a seeded random 80/20 split (seed = split index); features standardised by Fernández-Delgado et al."
	protoRaetsch   = "a seeded random split with the usual training size (the official 100 splits are not available)"
	protoMNIST     = "the standard 60000/10000 split (only split 0)"
	protoDelPair   = "the given train/test files of Fernández-Delgado et al. (only split 0); features standardised by them"
	protoBB        = "a seeded random 90/10 split (seed = split index) with ⌊0.9·N⌋ training rows, the protocol and sizes of bayesian_benchmarks' 10 random splits (n_train = int(N·0.9); not its numpy permutations)"
	protoHavasi    = "a seeded random 80/20 split (seed = split index) with ⌊0.8·N⌋ training rows, the protocol of Havasi et al. (2018, seed 003, Sec. 3: a random 20% of the rows as test data, 5 repeats)"
)

// bostonPath is the folder of the Boston housing data, which the binary embeds (datasets.EmbeddedBoston): a
// "uci-random" source of that folder runs without a data directory.
const bostonPath = "bostonHousing"

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
	"iris":         {format: "delgado", path: "iris.csv", testFrac: 0.2, protocol: protoDelgado80},
	"pendigits":    {format: "delgado-pair", path: "pendigits", protocol: protoDelPair},
	"landsat":      {format: "delgado-pair", path: "statlog-landsat", protocol: protoDelPair},
	"banana":       {format: "raetsch", path: "banana.csv", trainSize: 400, protocol: protoRaetsch},
	"german":       {format: "raetsch", path: "german.csv", trainSize: 700, protocol: protoRaetsch},
	"image":        {format: "raetsch", path: "image.csv", trainSize: 1300, protocol: protoRaetsch},
	"titanic":      {format: "raetsch", path: "titanic.csv", trainSize: 150, protocol: protoRaetsch},
	"splice":       {format: "raetsch", path: "splice.csv", trainSize: 1000, protocol: protoRaetsch},
	"thyroid":      {format: "raetsch", path: "thyroid.csv", trainSize: 140, protocol: protoRaetsch},
	"mnist":        {format: "mnist", protocol: protoMNIST},
	// The -bb sets are bayesian_benchmarks' random 90/10 splits (ANCHORS §1.3; the Doubly-Stochastic-DGP
	// notebooks' kin8nm split is one of the same kind, 7372/820) of the data directory's uci-regression-dropout
	// folders; boston-bb reads the data embedded in the binary when no data directory is given.
	"boston-bb":  {format: "uci-random", path: bostonPath, trainPercent: 90, stream: 0xbb, set: "boston", protocol: protoBB},
	"kin8nm-bb":  {format: "uci-random", path: "kin8nm", trainPercent: 90, stream: 0xbb, set: "kin8nm", protocol: protoBB},
	"power-bb":   {format: "uci-random", path: "power-plant", trainPercent: 90, stream: 0xbb, set: "power", protocol: protoBB},
	"protein-bb": {format: "uci-random", path: "protein-tertiary-structure", trainPercent: 90, stream: 0xbb, set: "protein", protocol: protoBB},
	"yacht-bb":   {format: "uci-random", path: "yacht", trainPercent: 90, stream: 0xbb, set: "yacht", protocol: protoBB},
	"naval-bb":   {format: "uci-random", path: "naval-propulsion-plant", trainPercent: 90, stream: 0xbb, set: "naval", protocol: protoBB},
	// The -havasi sets are Havasi et al.'s random 80/20 splits (seed 003, Sec. 3; ANCHORS §1.1).
	"kin8nm-havasi":  {format: "uci-random", path: "kin8nm", trainPercent: 80, stream: 0x4a5a, set: "kin8nm", protocol: protoHavasi},
	"protein-havasi": {format: "uci-random", path: "protein-tertiary-structure", trainPercent: 80, stream: 0x4a5a, set: "protein", protocol: protoHavasi},
}

// DataSetOf returns the name of the benchmark data set (datasets.DataSetNames: what gpzoo data fetch takes) that
// the zoo's data set name reads: kin8nm for kin8nm-bb and kin8nm-havasi, name itself for the others.
func DataSetOf(name string) string {
	if src, ok := sources[name]; ok && src.set != "" {
		return src.set
	}
	return name
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
	if dir == "" && !(src.format == "evans" && embedded(name)) && !(src.format == "uci-random" && src.path == bostonPath) && src.format != "embedded" {
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
			train, test, err = datasets.RandomSplitTrain(d.N(), src.trainPercent, rand.New(rand.NewPCG(uint64(k), src.stream)))
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
