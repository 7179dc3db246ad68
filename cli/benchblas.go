package cli

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// The BLAS half of gpzoo bench: level-3 routines and the Cholesky factorisation timed on every implementation
// compiled in.

// blasImpl is one BLAS/LAPACK implementation gpzoo bench compares.
type blasImpl struct {
	name string
	blas blas.Float64
	// potrf factorises the order-n lower triangle of a (row-major, stride n) in place, reporting success.
	potrf func(n int, a []float64) bool
}

// extraImpls are the implementations of optional builds (OpenBLAS with the openblas tag: bench_openblas.go).
var extraImpls []blasImpl

// blasImpls returns what gpzoo bench compares: gpzoo's BLAS with the active kernel, gonum's pure-Go reference,
// then extraImpls.
func blasImpls() []blasImpl {
	return append([]blasImpl{
		{name: "gpzoo-" + ops.BLASKernel(), blas: ops.GpzooBLAS(),
			potrf: func(n int, a []float64) bool { return ops.GpzooLAPACK().Dpotrf(blas.Lower, n, a, n) }},
		{name: "gonum", blas: gonum.Implementation{}, potrf: gonumPotrf},
	}, extraImpls...)
}

// gonumPotrf is gonum's Dpotrf on gonum's BLAS. gonum's LAPACK calls the BLAS installed in blas64, which ops
// sets to gpzoo's (or OpenBLAS), so the reference swaps gonum's in for the call (gpzoo bench runs nothing else
// meanwhile).
func gonumPotrf(n int, a []float64) bool {
	prev := blas64.Implementation()
	blas64.Use(gonum.Implementation{})
	defer blas64.Use(prev)
	return lapackgonum.Implementation{}.Dpotrf(blas.Lower, n, a, n)
}

// timedCall runs one call of a routine on an implementation and returns the time of the call alone (restoring
// an operand overwritten by the previous call is not counted).
type timedCall func(im blasImpl) (time.Duration, error)

// blasRoutine is one routine gpzoo bench times.
type blasRoutine struct {
	name, form string // e.g. "Dtrsm", "LLN": left side, lower triangle, not transposed
	// flops is the routine's operation count at order n.
	flops func(n float64) float64
	// setup draws the order-n operands from rng; its call is shared by the implementations, so all of them
	// solve the same problem.
	setup func(rng *rand.Rand, n int) timedCall
}

// blasRoutines are Dgemm (C = A·B), Dsyrk (lower C = A·Aᵀ), Dtrsm (X = L⁻¹B) and Dpotrf (lower), all n × n.
var blasRoutines = []blasRoutine{
	{"Dgemm", "NN", func(n float64) float64 { return 2 * n * n * n }, func(rng *rand.Rand, n int) timedCall {
		a, b, c := uniform(rng, n*n), uniform(rng, n*n), make([]float64, n*n)
		return func(im blasImpl) (time.Duration, error) {
			t0 := time.Now()
			im.blas.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
			return time.Since(t0), nil
		}
	}},
	{"Dsyrk", "LN", func(n float64) float64 { return n * n * n }, func(rng *rand.Rand, n int) timedCall {
		a, c := uniform(rng, n*n), make([]float64, n*n)
		return func(im blasImpl) (time.Duration, error) {
			t0 := time.Now()
			im.blas.Dsyrk(blas.Lower, blas.NoTrans, n, n, 1, a, n, 0, c, n)
			return time.Since(t0), nil
		}
	}},
	{"Dtrsm", "LLN", func(n float64) float64 { return n * n * n }, func(rng *rand.Rand, n int) timedCall {
		l, b, x := lowerTriangle(rng, n), uniform(rng, n*n), make([]float64, n*n)
		return func(im blasImpl) (time.Duration, error) {
			copy(x, b) // a solve in place repeated on its result would shrink it to subnormals
			t0 := time.Now()
			im.blas.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.NonUnit, n, n, 1, l, n, x, n)
			return time.Since(t0), nil
		}
	}},
	{"Dpotrf", "L", func(n float64) float64 { return n * n * n / 3 }, func(rng *rand.Rand, n int) timedCall {
		a, w := spd(rng, n), make([]float64, n*n)
		return func(im blasImpl) (time.Duration, error) {
			copy(w, a)
			t0 := time.Now()
			ok := im.potrf(n, w)
			d := time.Since(t0)
			if !ok {
				return d, fmt.Errorf("%s Dpotrf: a positive definite matrix of order %d reported as not positive definite", im.name, n)
			}
			return d, nil
		}
	}},
}

// uniform returns n values uniform in [−1, 1).
func uniform(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// lowerTriangle returns a well-conditioned order-n lower triangle (row-major; the upper part zero): off-diagonal
// entries uniform in [−1/n, 1/n), the diagonal in [1, 2).
func lowerTriangle(rng *rand.Rand, n int) []float64 {
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = (2*rng.Float64() - 1) / float64(n)
		}
		l[i*n+i] = 1 + rng.Float64()
	}
	return l
}

// spd returns a symmetric, strictly diagonally dominant (hence positive definite) matrix of order n:
// off-diagonal entries uniform in [−1, 1), the diagonal n + 1.
func spd(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := 2*rng.Float64() - 1
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] = float64(n + 1)
	}
	return a
}

// rate returns the best of rounds rates (calls per second) of call on im, each round repeating the call until
// at least minTime of calls have run, after one warm-up call (counted as the first round when it alone lasts
// minTime).
func rate(call timedCall, im blasImpl, minTime time.Duration, rounds int) (float64, error) {
	best := 0.0
	warm, err := call(im)
	if err != nil {
		return 0, err
	}
	if warm >= minTime {
		best = 1 / warm.Seconds()
		rounds--
	}
	for r := 0; r < rounds; r++ {
		var el time.Duration
		k := 0
		for el < minTime || k == 0 {
			d, err := call(im)
			if err != nil {
				return 0, err
			}
			el += d
			k++
		}
		if el <= 0 { // a clock too coarse to time the call
			el = time.Nanosecond
		}
		best = max(best, float64(k)/el.Seconds())
	}
	return best, nil
}
