package zoo

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/train"
)

// saveModel writes the model an entry trained to o.SaveModel (nothing when it is empty): the model (with the
// standardised training data an exact GP or SGPR holds to predict from), the data standardisation, and the
// entry, split and seed as metadata. The saved model predicts (gpzoo predict, modelfile.File.Predict) on inputs
// in the data set's original units.
func saveModel(e *Entry, o Options, res *Result, model modelfile.Model, std *datasets.Standardizer) error {
	if o.SaveModel == "" {
		return nil
	}
	f := newModelFile(model, std, map[string]string{
		"entry": e.Name, "data": e.Dataset, "split": fmt.Sprint(o.Split), "seed": fmt.Sprint(o.Seed),
		"optimizer": res.Optimizer})
	if res.TestSamples > 0 {
		f.Meta["test_samples"] = fmt.Sprint(res.TestSamples)
	}
	if err := modelfile.SaveFile(o.SaveModel, f); err != nil {
		return fmt.Errorf("zoo: %s: saving the model: %w", e.Name, err)
	}
	res.ModelFile = o.SaveModel
	return nil
}

// trainConfig completes c with o's logging, progress, stop channel and checkpoints; sources are the random
// sources of every generator the run draws from while training (minibatches first, then the model's), which a
// checkpoint saves and restores.
func (o Options) trainConfig(c train.Config, sources ...*rand.PCG) train.Config {
	c.Logger, c.Progress, c.Stop = o.Logger, o.Progress, o.Stop
	c.Checkpoint = checkpointConfig(o.CheckpointDir, o.CheckpointEvery, o.Resume, sources)
	return c
}

// checkpointConfig returns the checkpoint configuration of a run (nil when dir is empty); sources are the
// random sources of every generator the run draws from while training.
func checkpointConfig(dir string, every int, resume bool, sources []*rand.PCG) *train.CheckpointConfig {
	if dir == "" {
		return nil
	}
	rs := make([]train.RandState, len(sources))
	for i, s := range sources {
		rs[i] = s
	}
	return &train.CheckpointConfig{Dir: dir, Every: every, Resume: resume, Sources: rs}
}

// refuseCheckpoint returns an error when o asks for checkpoints that what (an L-BFGS fit, say) cannot take.
func (o Options) refuseCheckpoint(e *Entry, what string) error {
	if o.CheckpointDir != "" || o.Resume {
		return fmt.Errorf("zoo: %s: checkpoints are for Adam training, not %s", e.Name, what)
	}
	return nil
}

// EvalSamples is the number of samples a deep-GP entry propagates per test point in the evaluations of
// Options.EvalEvery (the final score uses the entry's test samples).
const EvalSamples = 10

// withEval sets c to score the test split every o.EvalEvery steps with score, which fills a Result's test
// metrics.
func (o Options) withEval(c train.Config, score func(r *Result) error) train.Config {
	if o.EvalEvery > 0 {
		c.EvalEvery, c.Eval = o.EvalEvery, evalFunc(score)
	}
	return c
}

// evalFunc returns a train.Config's Eval scoring the test split with score, which fills a Result's test
// metrics.
func evalFunc(score func(r *Result) error) func(int) (map[string]float64, error) {
	return func(int) (map[string]float64, error) {
		r := &Result{}
		if err := score(r); err != nil {
			return nil, err
		}
		m := map[string]float64{"test_ll": r.TestLL}
		if r.TestRMSE != nil {
			m["test_rmse"] = *r.TestRMSE
		}
		if r.TestAccuracy != nil {
			m["test_accuracy"] = *r.TestAccuracy
		}
		return m, nil
	}
}

// newModelFile returns the model file of a trained model (an exact GP or SGPR holds its standardised training
// data, which the file saves with it): the standardisation and meta.
func newModelFile(model modelfile.Model, std *datasets.Standardizer, meta map[string]string) *modelfile.File {
	return &modelfile.File{Model: model, Standardizer: std, Meta: meta}
}
