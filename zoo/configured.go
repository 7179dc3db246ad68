package zoo

import (
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/gpzoo/gpzoo/cluster"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/ops"
)

// configuredEntry returns the entry that runs c (a configuration of gpzoo train: CustomConfig) on data set data
// under its split protocol (sources), through fit, the code `gpzoo train` runs; Iters is c.Iters.
func configuredEntry(name, data, summary, reference, published string, c CustomConfig) *Entry {
	return &Entry{Name: name, Dataset: data, Model: name[len(data)+1:], Summary: summary, Reference: reference,
		Published: published, Iters: c.Iters, Config: &c, run: runConfigured}
}

// runConfigured runs a configured entry (Entry.Config) on split o.Split of its data set: the inputs and a
// regression target standardised on the training rows (the inputs kept as they are with RawInputs), o's
// overrides applied to the configuration, and the rest as TrainCustom after its split, by fit.
func runConfigured(e *Entry, o Options) (*Result, error) {
	spl, err := loadSplit(e.Dataset, o.DataDir, o.Split)
	if err != nil {
		return nil, err
	}
	if e.RawInputs && spl.train.NumClasses == 0 {
		return nil, fmt.Errorf("zoo: %s: unstandardised inputs are only for classification", e.Name)
	}
	c := e.configFor(o)
	tr, _, std, cats, err := spl.standardisedFor(e.RawInputs, &c)
	if err != nil {
		return nil, err
	}
	c.stream = uint64(o.Split)
	c.CheckpointDir, c.CheckpointEvery, c.Resume, c.Stop = o.CheckpointDir, o.CheckpointEvery, o.Resume, o.Stop
	c.Logger, c.Progress, c.EvalEvery = o.Logger, o.Progress, o.EvalEvery
	if o.Workers > 0 {
		c.Cluster = &ClusterConfig{Workers: o.Workers, URL: o.NATSURL, Security: o.NATSSecurity, Spawn: o.Spawn, Run: o.NATSRun,
			RejoinWait: o.RejoinWait}
		if o.Tau != nil {
			c.Cluster.Tau = *o.Tau
		}
		// Spawned workers load the entry's split themselves and standardise every input column: unless the
		// kernel keeps some as category indices, when they read the rows the server writes for them.
		if o.Spawn != nil && !e.RawInputs && len(cats) == 0 {
			c.Cluster.Data = cluster.DataRef{Name: e.Dataset, Dir: o.DataDir, Split: o.Split}
		}
	}
	if c, err = c.withDefaults(tr); err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	res := newResult(e, o)
	res.DataSource, res.NTrain, res.NTest = spl.source, tr.N(), spl.test.N()
	meta := map[string]string{"entry": e.Name, "data": e.Dataset, "split": fmt.Sprint(o.Split)}
	if len(tr.FeatureNames) > 0 { // the data set's column names; model files name unnamed inputs x0 … x{D−1}
		names, _ := json.Marshal(tr.FeatureNames)
		meta["features"] = string(names)
	}
	cu, err := fit(tr, spl.test, std, c, entrySource(e, o), res, meta)
	if err != nil {
		return nil, err
	}
	if o.SaveModel != "" {
		if err := modelfile.SaveFile(o.SaveModel, cu.File); err != nil {
			return nil, fmt.Errorf("zoo: %s: saving the model: %w", e.Name, err)
		}
		res.ModelFile = o.SaveModel
	}
	return res, nil
}

// configFor returns the configuration a configured entry runs with o: its own with o's overrides (seed,
// optimiser, iterations, inducing inputs, batch size, test samples, natural gradients). The run-time fields
// (checkpoints, stop, logging, cluster) are runConfigured's.
func (e *Entry) configFor(o Options) CustomConfig {
	c := *e.Config
	c.Seed, c.Optimizer = o.Seed, cmp.Or(o.Optimizer, c.Optimizer)
	c.Iters, c.Inducing, c.BatchSize = cmp.Or(o.Iters, c.Iters), cmp.Or(o.Inducing, c.Inducing), cmp.Or(o.BatchSize, c.BatchSize)
	if o.Inducing > 0 && c.Family == "dgp" && c.LayerFamily == "decoupled" {
		c.MeanBases = 5 * o.Inducing // Ma = 5·Mb, as the entries' 500 and 100
	}
	c.TestSamples = cmp.Or(o.TestSamples, c.TestSamples)
	c.NatGrad = c.NatGrad || o.NatGrad
	return c
}

// entrySource is the random source of a configured entry's run: the inducing inputs, the minibatches.
func entrySource(e *Entry, o Options) *rand.PCG {
	return rand.NewPCG(o.Seed, uint64(o.Split)+cmp.Or(e.stream, 0x5eed))
}

// DataSets returns the names of the benchmark data sets TrainSplit (and the zoo's entries) load, sorted.
func DataSets() []string {
	return slices.Sorted(maps.Keys(sources))
}

// TrainSplit trains c (a configuration of gpzoo train: CustomConfig; its TestFraction is ignored) on split k of
// the benchmark data set name (DataSets; its split protocol, the data in dir, the layout of shared/data): the
// split's training rows (subsampled to c.MaxTrainRows when set), standardised on themselves as the entries'
// are, and scored on the split's test rows in original units, through fit, the path of TrainCustom and of the
// zoo's entries. It lets gpzoo train's defaults be checked on the benchmark sets' fixed splits.
func TrainSplit(name, dir string, k int, c CustomConfig) (*Custom, error) {
	spl, err := loadSplit(name, dir, k)
	if err != nil {
		return nil, err
	}
	if spl.train, err = subsampleRows(spl.train, c.MaxTrainRows, c.Seed); err != nil {
		return nil, err
	}
	tr, _, std, _, err := spl.standardisedFor(false, &c)
	if err != nil {
		return nil, err
	}
	c.stream = uint64(k)
	if c, err = c.withDefaults(tr); err != nil {
		return nil, err
	}
	fam, _ := gp.LookupLikelihood(c.Likelihood) // withDefaults checked it
	if err := checkTargets(spl.train, fam, c.Target); err != nil {
		return nil, err
	}
	res := &Result{Entry: "custom/" + c.Family, Dataset: name, Model: c.Family, Split: k, Seed: c.Seed, NTrain: tr.N(),
		NTest: spl.test.N(), DataSource: spl.source, Build: ops.Build, BLAS: ops.BLAS(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	meta := map[string]string{"data": name, "split": fmt.Sprint(k)}
	if len(tr.FeatureNames) > 0 {
		names, _ := json.Marshal(tr.FeatureNames)
		meta["features"] = string(names)
	}
	return fit(tr, spl.test, std, c, rand.NewPCG(c.Seed, 0xc5f), res, meta)
}
