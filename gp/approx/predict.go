package approx

import (
	"fmt"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// Predict returns the predictive distribution at xs [Ns,D] (gp.Predictor): the latent mean m(x*) + k*ᵀα and
// variance k** − k*ᵀ(K + W⁻¹)⁻¹k* of the approximation (R&W Algorithms 3.2 and 3.6), and y's through the
// likelihood's own predictive (class probabilities for a classifier, counts' mean and variance for Poisson).
// Test rows run in chunks of o.ChunkRows (default gp.DefaultPredictChunk) through programs kept in o.Programs;
// o.Full adds the full latent covariance (one run over all rows) and o.Draws joint samples from it.
func (m *GP) Predict(xs *mat.Dense, o gp.PredictOptions) (*gp.Prediction, error) {
	if m == nil || m.Kernel == nil || m.Likelihood == nil {
		return nil, fmt.Errorf("%w: approx.GP.Predict: incomplete model", gp.ErrConfig)
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := gp.CheckInputs("approx.GP.Predict", xs, m.Kernel.InputDim()); err != nil {
		return nil, err
	}
	q, err := m.Approximation(o.Graph)
	if err != nil {
		return nil, err
	}
	x, _ := m.cond.data.Data()
	ns, _ := xs.Dims()
	fm, fv := mat.NewDense(ns, 1, nil), mat.NewDense(ns, 1, nil)
	err = marginalRuns("approx.GP", m.Kernel, m.Mean, x, xs, o, func(lo, hi, chunk int, prog *graph.Program) error {
		kxs := prog.Output("kxs") // [N,chunk]
		v, err := q.PredictVar(kxs, prog.Output("kss"))
		if err != nil {
			return err
		}
		n := len(q.Alpha)
		for i := lo; i < hi; i++ {
			j := i - lo
			mu := 0.0
			for r := 0; r < n; r++ {
				mu += kxs[r*chunk+j] * q.Alpha[r]
			}
			if m.Mean != nil {
				mu += prog.Output("ms")[j]
			}
			fm.Set(i, 0, mu)
			fv.Set(i, 0, v[j])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &gp.Prediction{FMean: fm, FVar: fv}
	if out.YMean, out.YVar, out.Probs, err = gp.LikelihoodPredictive(m.Likelihood, fm, fv); err != nil {
		return nil, fmt.Errorf("approx: GP.Predict: the likelihood's predictive: %w", err)
	}
	if o.OutputCov {
		out.OutputCov = gp.DiagonalOutputCov(fv)
	}
	if o.Full || o.Draws > 0 {
		cov, err := m.predictCov(xs, q, o.Graph)
		if err != nil {
			return nil, err
		}
		if o.Full {
			out.FCov = []*mat.SymDense{cov}
		}
		if o.Draws > 0 {
			if out.Draws, err = gp.DrawJoint(fm, []*mat.SymDense{cov}, o.Draws, o.Rng(), o.Graph.Jitter); err != nil {
				return nil, fmt.Errorf("approx: GP.Predict: %w", err)
			}
		}
	}
	return out, nil
}

// marginalRuns runs K(X, X*) [N,chunk] ("kxs"), diag K(X*, X*) ("kss") and, when mf is set, m(X*) ("ms") at xs's
// rows in chunks of o.ChunkRows (default gp.DefaultPredictChunk; the last chunk padded with zero rows), through
// one program kept in o.Programs, and calls each with the chunk's rows [lo, hi), the chunk size and the program.
func marginalRuns(what string, kern gp.Kernel, mf gp.MeanFunction, x, xs *mat.Dense, o gp.PredictOptions,
	each func(lo, hi, chunk int, prog *graph.Program) error) error {
	n, d := x.Dims()
	ns, _ := xs.Dims()
	chunk := o.ChunkRows
	if chunk <= 0 {
		chunk = gp.DefaultPredictChunk
	}
	chunk = min(chunk, ns)
	build := func() (*graph.Program, any, error) {
		g := graph.New(o.Graph)
		xn, xsn := g.Input("x", n, d), g.Input("xs", chunk, d)
		outs := map[string]*graph.Node{"kxs": kern.K(xn, xsn), "kss": kern.KDiag(xsn)}
		if mf != nil {
			outs["ms"] = mf.Mean(xsn)
		}
		prog, err := g.CompileForward(outs)
		if err != nil {
			return nil, nil, fmt.Errorf("%s.Predict: %w", what, err)
		}
		copyRows(prog.InputData("x"), x)
		return prog, nil, nil
	}
	return o.Programs.Use(fmt.Sprintf("%s.marginals/%d,%d/%d", what, n, d, chunk), build, func(prog *graph.Program, _ any) error {
		buf := prog.InputData("xs")
		for lo := 0; lo < ns; lo += chunk {
			hi := min(lo+chunk, ns)
			clear(buf) // padding rows of the last chunk
			for i := lo; i < hi; i++ {
				copy(buf[(i-lo)*d:], xs.RawRowView(i))
			}
			if err := prog.Run(); err != nil {
				return fmt.Errorf("%s.Predict rows %d..%d: %w", what, lo, hi, err)
			}
			if err := each(lo, hi, chunk, prog); err != nil {
				return err
			}
		}
		return nil
	})
}

// predictCov returns the full latent predictive covariance at xs (one run over all rows).
func (m *GP) predictCov(xs *mat.Dense, q interface {
	PredictCov(kxs, kss []float64, m int) ([]float64, error)
}, o graph.Options) (*mat.SymDense, error) {
	x, _ := m.cond.data.Data()
	n, d := x.Dims()
	ns, _ := xs.Dims()
	g := graph.New(o)
	xn, xsn := g.Input("x", n, d), g.Input("xs", ns, d)
	prog, err := g.CompileForward(map[string]*graph.Node{"kxs": m.Kernel.K(xn, xsn), "kss": m.Kernel.K(xsn, xsn)})
	if err != nil {
		return nil, fmt.Errorf("approx: GP.Predict (full covariance): %w", err)
	}
	defer prog.Close()
	copyRows(prog.InputData("x"), x)
	copyRows(prog.InputData("xs"), xs)
	if err := prog.Run(); err != nil {
		return nil, fmt.Errorf("approx: GP.Predict (full covariance): %w", err)
	}
	cov, err := q.PredictCov(prog.Output("kxs"), prog.Output("kss"), ns)
	if err != nil {
		return nil, err
	}
	return gp.SymFromRowMajor(cov, ns), nil
}
