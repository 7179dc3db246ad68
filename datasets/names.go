package datasets

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Folders of the benchmark data directory and their source licences.
const (
	dirEvans   = "uci-regression-evans/"
	dirUCI     = "uci-regression-dropout/"
	dirDelgado = "classification-delgado/"
	dirRaetsch = "classification-raetsch/"
	licence    = "SOURCE_LICENSE.txt"
)

// AllDataSets is the name that selects every entry of a manifest.
const AllDataSets = "all"

// dataSetPaths maps each benchmark data-set name to the staged paths (files,
// or folders selecting everything below them) of its files, including its
// source folder's licence.
var dataSetPaths = map[string][]string{
	"ringnorm":                {dirDelgado + "ringnorm.csv", dirDelgado + licence},
	"twonorm":                 {dirDelgado + "twonorm.csv", dirDelgado + licence},
	"magic":                   {dirDelgado + "magic.csv", dirDelgado + licence},
	"letter":                  {dirDelgado + "letter.csv", dirDelgado + licence},
	"waveform":                {dirDelgado + "waveform.csv", dirDelgado + licence},
	"iris":                    {dirDelgado + "iris.csv", dirDelgado + licence},
	"breast-cancer-wisc-diag": {dirDelgado + "breast-cancer-wisc-diag.csv", dirDelgado + licence},
	"pendigits":               {dirDelgado + "pendigits_train.csv", dirDelgado + "pendigits_test.csv", dirDelgado + licence},
	"landsat":                 {dirDelgado + "statlog-landsat_train.csv", dirDelgado + "statlog-landsat_test.csv", dirDelgado + licence},
	"banana":                  {dirRaetsch + "banana.csv"},
	"german":                  {dirRaetsch + "german.csv"},
	"image":                   {dirRaetsch + "image.csv"},
	"splice":                  {dirRaetsch + "splice.csv"},
	"thyroid":                 {dirRaetsch + "thyroid.csv"},
	"titanic":                 {dirRaetsch + "titanic.csv"},
	"mnist":                   {"mnist"},
	"ripley":                  {"extras/ripley"},
	"oilflow":                 {"extras/oilflow"},
	"airfoil":                 evansSet("airfoil"),
	"autompg":                 evansSet("autompg"),
	"bike":                    evansSet("bike"),
	"keggdirected":            evansSet("keggdirected"),
	"kin40k":                  evansSet("kin40k"),
	"pendulum":                evansSet("pendulum"),
	"pol":                     evansSet("pol"),
	"pumadyn32nm":             evansSet("pumadyn32nm"),
	"servo":                   evansSet("servo"),
	"tamielectric":            evansSet("tamielectric"),
	"boston":                  uciSet("bostonHousing"),
	"kin8nm":                  uciSet("kin8nm"),
	"naval":                   uciSet("naval-propulsion-plant"),
	"power":                   uciSet("power-plant"),
	"protein":                 uciSet("protein-tertiary-structure"),
	"yacht":                   uciSet("yacht"),
}

// evansSet returns the paths of an Evans data set.
func evansSet(folder string) []string { return []string{dirEvans + folder, dirEvans + licence} }

// uciSet returns the paths of a UCI "dropout" data set.
func uciSet(folder string) []string { return []string{dirUCI + folder, dirUCI + licence} }

// DataSetNames returns the names of the benchmark data sets of the data
// directory (the zoo's names: kin8nm, protein, mnist, airfoil, ...), sorted.
func DataSetNames() []string { return slices.Sorted(maps.Keys(dataSetPaths)) }

// DataSetPaths returns the staged paths of data set name: files, or folders
// standing for every file below them (see MatchPath), including the source
// folder's licence file. ok is false for an unknown name.
func DataSetPaths(name string) (paths []string, ok bool) {
	p, ok := dataSetPaths[name]
	return slices.Clone(p), ok
}

// MatchPath reports whether the staged path p is selected by pattern: p
// equals pattern, or lies in the folder pattern (a trailing slash is
// optional).
func MatchPath(p, pattern string) bool {
	pattern = strings.TrimSuffix(pattern, "/")
	return pattern != "" && (p == pattern || strings.HasPrefix(p, pattern+"/"))
}

// SelectEntries returns the entries selected by names, in manifest order
// and without repeats. Each name is a data-set name (DataSetNames),
// AllDataSets, or a staged path or folder of the manifest (e.g.
// "uci-regression-evans/kin40k"). Errors: ErrInvalid when names is empty,
// ErrNotFound (listing the data-set names) for a name selecting nothing.
func SelectEntries(entries []ManifestEntry, names []string) ([]ManifestEntry, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("datasets: no data set named: %w", ErrInvalid)
	}
	picked := make([]bool, len(entries))
	for _, n := range names {
		patterns, ok := dataSetPaths[n]
		switch {
		case n == AllDataSets:
			patterns = []string{""}
		case !ok:
			patterns = []string{n}
		}
		found := false
		for i, e := range entries {
			for _, p := range patterns {
				if p == "" || MatchPath(e.Path, p) {
					picked[i], found = true, true
				}
			}
		}
		if !found {
			if ok {
				return nil, fmt.Errorf("datasets: data set %q has no files in the manifest: %w", n, ErrNotFound)
			}
			return nil, fmt.Errorf("datasets: %q is neither a data set (%s, %s) nor a path in the manifest: %w",
				truncate(n), strings.Join(DataSetNames(), ", "), AllDataSets, ErrNotFound)
		}
	}
	var out []ManifestEntry
	for i, e := range entries {
		if picked[i] {
			out = append(out, e)
		}
	}
	return out, nil
}
