package mcmc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Options configure a NUTS run. Zero values mean Stan's defaults.
type Options struct {
	// Warmup is the number of adaptation iterations, whose draws are discarded (default 1000; 0 is allowed
	// only with NoWarmup).
	Warmup int
	// NoWarmup runs no warmup: the draws start at the initial point with StepSize and a unit metric.
	NoWarmup bool
	// Samples is the number of draws kept per chain (default 1000).
	Samples int
	// MaxDepth is the maximum tree depth (default 10: at most 1023 leapfrog steps per iteration).
	MaxDepth int
	// TargetAccept is δ, the mean acceptance statistic the step-size adaptation aims at (default 0.8, in (0, 1)).
	TargetAccept float64
	// StepSize is the initial step size ε₀ before Stan's doubling/halving heuristic (default 1).
	StepSize float64
	// InitBuffer, TermBuffer and BaseWindow lay out the metric's adaptation windows (defaults 75, 50, 25).
	InitBuffer, TermBuffer, BaseWindow int
	// MaxDeltaH is the energy error beyond which a state is divergent (default 1000).
	MaxDeltaH float64
}

// ErrOptions marks invalid Options; ErrStepSize a step size that the heuristic drove to 0 or beyond 1e7;
// ErrInit an initial point whose log density or gradient is not finite.
var (
	ErrOptions  = errors.New("mcmc: invalid options")
	ErrStepSize = errors.New("mcmc: step size out of range")
	ErrInit     = errors.New("mcmc: the initial point has no finite log density")
)

// WithDefaults returns o with its zero fields set to their defaults, or an error wrapping ErrOptions.
func (o Options) WithDefaults() (Options, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if !o.NoWarmup {
		def(&o.Warmup, 1000)
	}
	def(&o.Samples, 1000)
	def(&o.MaxDepth, 10)
	def(&o.InitBuffer, 75)
	def(&o.TermBuffer, 50)
	def(&o.BaseWindow, 25)
	if o.TargetAccept == 0 {
		o.TargetAccept = 0.8
	}
	if o.StepSize == 0 {
		o.StepSize = 1
	}
	if o.MaxDeltaH == 0 {
		o.MaxDeltaH = 1000
	}
	switch {
	case o.Warmup < 0 || o.Samples < 1 || o.MaxDepth < 1 || o.MaxDepth > 30 || o.InitBuffer < 0 || o.TermBuffer < 0 || o.BaseWindow < 1:
		return o, fmt.Errorf("%w: warmup %d, samples %d, max depth %d, windows %d/%d/%d", ErrOptions, o.Warmup, o.Samples, o.MaxDepth, o.InitBuffer, o.BaseWindow, o.TermBuffer)
	case o.NoWarmup && o.Warmup != 0:
		return o, fmt.Errorf("%w: NoWarmup with Warmup %d", ErrOptions, o.Warmup)
	case !(o.TargetAccept > 0 && o.TargetAccept < 1):
		return o, fmt.Errorf("%w: target acceptance %v, want in (0, 1)", ErrOptions, o.TargetAccept)
	case !(o.StepSize > 0) || math.IsInf(o.StepSize, 0) || !(o.MaxDeltaH > 0):
		return o, fmt.Errorf("%w: step size %v, max ΔH %v", ErrOptions, o.StepSize, o.MaxDeltaH)
	}
	return o, nil
}

// Chain is one chain's output.
type Chain struct {
	// Draws are the Samples draws after warmup, each of length d.
	Draws [][]float64
	// Stats are the draws' transitions; WarmupStats the warmup's.
	Stats, WarmupStats []Transition
	// StepSize and InvMetric are the adapted step size and the diagonal of the inverse metric.
	StepSize  float64
	InvMetric []float64
	// Gradients counts the log-density evaluations of the whole chain (warmup included).
	Gradients int
}

// Sample runs one chain of NUTS on d from init (length d.Dim(), where log π and its gradient must be finite:
// ErrInit otherwise), drawing from rng: warmup with adaptation, then o.Samples draws. progress, when set, is
// called after every iteration with its index (0-based, warmup first).
func Sample(d Density, init []float64, rng *rand.Rand, o Options, progress func(iter int)) (*Chain, error) {
	o, err := o.WithDefaults()
	if err != nil {
		return nil, err
	}
	if d == nil || rng == nil || len(init) != d.Dim() || d.Dim() < 1 {
		return nil, fmt.Errorf("%w: nil density or generator, or an initial point of length %d for dimension %d", ErrOptions, len(init), dimOf(d))
	}
	s := newNUTS(d, rng, o)
	z := newPoint(d.Dim())
	copy(z.q, init)
	if err := s.h.eval(&z); err != nil {
		return nil, err
	}
	if math.IsInf(z.logp, 0) || math.IsNaN(z.logp) {
		return nil, fmt.Errorf("%w (log π = %v at %v)", ErrInit, z.logp, init)
	}
	out := &Chain{Draws: make([][]float64, 0, o.Samples), Stats: make([]Transition, 0, o.Samples), WarmupStats: make([]Transition, 0, o.Warmup)}
	if o.Warmup > 0 {
		if err := s.initStepSize(&z); err != nil {
			return nil, err
		}
	}
	da := &dualAveraging{mu: math.Log(10 * s.eps), delta: o.TargetAccept, gamma: 0.05, kappa: 0.75, t0: 10}
	ma := &metricAdapter{w: newWindows(o.Warmup, o.InitBuffer, o.TermBuffer, o.BaseWindow), est: newWelford(d.Dim())}
	for it := 0; it < o.Warmup+o.Samples; it++ {
		next, t, err := s.transition(&z)
		if err != nil {
			return nil, fmt.Errorf("mcmc: iteration %d: %w", it, err)
		}
		z = next
		if it < o.Warmup {
			out.WarmupStats = append(out.WarmupStats, t)
			s.eps = da.learn(t.AcceptStat)
			if ma.learn(s.h.invM, z.q) {
				if err := s.initStepSize(&z); err != nil {
					return nil, err
				}
				da.mu = math.Log(10 * s.eps)
				da.restart()
			}
			if it == o.Warmup-1 {
				s.eps = da.final()
			}
		} else {
			out.Draws = append(out.Draws, append([]float64(nil), z.q...))
			out.Stats = append(out.Stats, t)
		}
		if progress != nil {
			progress(it)
		}
	}
	out.StepSize, out.InvMetric, out.Gradients = s.eps, append([]float64(nil), s.h.invM...), s.h.evals
	return out, nil
}

func dimOf(d Density) int {
	if d == nil {
		return 0
	}
	return d.Dim()
}

// ChainRand returns chain c's generator for seed: PCG(seed, c), one stream per chain.
func ChainRand(seed uint64, c int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(c))) }

// Run runs len(inits) chains in parallel (at most GOMAXPROCS at a time): chain c samples the Density newDensity(c)
// returns (each chain its own) from inits[c], drawing from ChainRand(seed, c), so the chains depend on the seed
// and not on the scheduling. progress, when set, is called after every iteration of every chain (from the
// chains' goroutines, so it must be safe for concurrent use). The first error (by chain) is returned.
func Run(newDensity func(chain int) (Density, error), inits [][]float64, seed uint64, o Options, progress func(chain, iter int)) ([]*Chain, error) {
	if newDensity == nil || len(inits) == 0 {
		return nil, fmt.Errorf("%w: no density or no chains", ErrOptions)
	}
	if _, err := o.WithDefaults(); err != nil {
		return nil, err
	}
	chains := make([]*Chain, len(inits))
	errs := make([]error, len(inits))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for c := range inits {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			d, err := newDensity(c)
			if err != nil {
				errs[c] = fmt.Errorf("mcmc: chain %d: %w", c, err)
				return
			}
			var pr func(int)
			if progress != nil {
				pr = func(it int) { progress(c, it) }
			}
			if chains[c], err = Sample(d, inits[c], ChainRand(seed, c), o, pr); err != nil {
				errs[c] = fmt.Errorf("mcmc: chain %d: %w", c, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return chains, nil
}
