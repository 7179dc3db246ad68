package likelihoods_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// TestConformance runs gptest.CheckLikelihood on every registered likelihood family (so a new built-in is
// covered by registering it), built by the family's New: class families with 3 classes (2 when the family
// refuses 3, as Bernoulli does) and class labels as targets; the others with 2 target columns of reals, or of
// counts 0..7 when the family's CheckTarget refuses reals (Poisson). A Student-t with a trainable ν and a
// Gaussian with a high variance floor are checked too.
func TestConformance(t *testing.T) {
	t.Parallel()
	fams := gp.LikelihoodFamilies()
	if len(fams) < 6 {
		t.Fatalf("%d likelihood families registered, want the 6 built-ins at least", len(fams))
	}
	for i, f := range fams {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(i)+1, 26))
			o := gp.LikelihoodOptions{Outputs: 2, Rand: rand.New(rand.NewPCG(5, 6))}
			c := gptest.LikelihoodCase{Outputs: 2}
			if f.Classes {
				o.Outputs, c.Outputs, o.Classes = 1, 1, 3
				if _, err := f.New(o); err != nil {
					o.Classes = 2
				}
				k := o.Classes
				c.Target = func(rng *rand.Rand) float64 { return float64(rng.IntN(k)) }
			} else if f.CheckTarget != nil && f.CheckTarget(0.5) != nil {
				c.Target = func(rng *rand.Rand) float64 { return float64(rng.IntN(8)) }
			}
			lik, err := f.New(o)
			if err != nil {
				t.Fatal(err)
			}
			if f.CheckTarget != nil {
				for range 20 {
					if y := c.Target(rng); f.CheckTarget(y) != nil {
						t.Fatalf("the test draws target %v, which %s refuses", y, f.Name)
					}
				}
			}
			gptest.CheckLikelihood(t, lik, rng, c)
		})
	}
	for name, mk := range map[string]func() (gp.Likelihood, error){
		"studentt-traindf": func() (gp.Likelihood, error) {
			return likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.7, DF: 4, TrainDF: true, QuadPoints: 30})
		},
		"gaussian-floor": func() (gp.Likelihood, error) {
			return likelihoods.NewGaussian(likelihoods.GaussianConfig{Variance: 3, VarianceFloor: 1})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lik, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			gptest.CheckLikelihood(t, lik, rand.New(rand.NewPCG(9, 9)), gptest.LikelihoodCase{Outputs: 1})
		})
	}
}

// recorder is a testing.TB that records failures instead of failing (Fatal ends the goroutine, as in a test).
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Error(args...); runtime.Goexit() }

// run runs f with r in a goroutine of its own (so that Fatal can end it) and returns the failures.
func (r *recorder) run(f func(testing.TB)) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msgs
}

// brokenStudentT is a Student-t likelihood with one defect, which CheckLikelihood must report.
type brokenStudentT struct {
	*likelihoods.StudentT
	defect string
	frozen *likelihoods.StudentT // "stale": predicts with the values the Params had at construction
}

// badSlope is the Student-t log-density with a derivative 0.1% too large.
type badSlope struct{ likelihoods.StudentTLogLik }

func (badSlope) Name() string { return "StudentT-badSlope" }
func (b badSlope) DLogProbDF(f, y float64, theta []float64) float64 {
	return 1.001 * b.StudentTLogLik.DLogProbDF(f, y, theta)
}

func (b *brokenStudentT) VariationalExpectations(fMean, fVar, y *graph.Node) *graph.Node {
	if b.defect != "slope" {
		return b.StudentT.VariationalExpectations(fMean, fVar, y)
	}
	g, ps := fMean.Graph(), b.Params()
	return g.QuadratureVE(badSlope{}, ops.DefaultQuadPoints, fMean, fVar, y, g.Param(ps[0]), g.Param(ps[1]))
}

func (b *brokenStudentT) PredictLogDensity(fMean, fVar, y []float64, n int) ([]float64, error) {
	switch b.defect {
	case "offset":
		out, err := b.StudentT.PredictLogDensity(fMean, fVar, y, n)
		for i := range out {
			out[i] += 1e-3
		}
		return out, err
	case "stale":
		return b.frozen.PredictLogDensity(fMean, fVar, y, n)
	case "unchecked":
		x, w, _ := ops.GaussHermite(ops.DefaultQuadPoints)
		out := make([]float64, n)
		for i := range out {
			yy := y[i]
			out[i] = ops.GaussHermiteLogExpect(func(f float64) float64 {
				return likelihoods.StudentTLogLik{}.LogProb(f, yy, []float64{b.Scale(), b.DF()})
			}, fMean[i], fVar[i], x, w)
		}
		return out, nil
	}
	return b.StudentT.PredictLogDensity(fMean, fVar, y, n)
}

// TestConformanceCatches: CheckLikelihood reports a wrong gradient, a predictive log density inconsistent with
// the expectations, predictions from stale parameter values and unchecked non-finite operands (and, for every
// mutant, that the Spec rebuilds a *StudentT, not the mutant's type).
func TestConformanceCatches(t *testing.T) {
	t.Parallel()
	for defect, want := range map[string]string{
		"slope":     "gradcheck: ∂loss/∂gptest.fmean",
		"offset":    "at fVar = 0, row 0",
		"stale":     "PredictLogDensity does not change with likelihood.scale",
		"unchecked": "PredictLogDensity: NaN in fMean accepted",
	} {
		t.Run(defect, func(t *testing.T) {
			t.Parallel()
			mk := func() *likelihoods.StudentT {
				s, err := likelihoods.NewStudentT(likelihoods.StudentTConfig{Scale: 0.8})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			lik := &brokenStudentT{StudentT: mk(), defect: defect, frozen: mk()}
			msgs := (&recorder{TB: t}).run(func(tb testing.TB) {
				gptest.CheckLikelihood(tb, lik, rand.New(rand.NewPCG(1, 2)), gptest.LikelihoodCase{})
			})
			found := false
			for _, m := range msgs {
				found = found || strings.Contains(m, want)
			}
			if !found {
				t.Errorf("no failure mentions %q; failures:\n%s", want, strings.Join(msgs, "\n"))
			}
		})
	}
}
