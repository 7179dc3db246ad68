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

// blasCase is one routine at one shape that gpzoo bench times on every implementation.
type blasCase struct {
	routine, form string // e.g. "Dtrsm", "LLN": left side, lower triangle, not transposed
	// m, n, k: Dgemm's C is m×n and its inner dimension k; Dtrsm's and Dtrmm's B is m×n (the triangle m×m);
	// Dsyrk's C is n×n (m = n) from an n×k operand; Dpotrf's matrix is n×n (m = n).
	m, n, k int
	// use names where a training step runs this shape (the step shapes only).
	use   string
	flops float64
	// setup draws the operands from rng; its call is shared by the implementations, so all of them solve the
	// same problem.
	setup func(rng *rand.Rand) timedCall
}

// shape is the case's shape as one token: "m×n×k" for Dgemm and Dsyrk, "m×n" for Dtrsm and Dtrmm, "n×n" for
// Dpotrf (ASCII x).
func (c blasCase) shape() string {
	switch c.routine {
	case "Dgemm", "Dsyrk":
		return fmt.Sprintf("%dx%dx%d", c.m, c.n, c.k)
	default:
		return fmt.Sprintf("%dx%d", c.m, c.n)
	}
}

// squareCases are Dgemm (C = A·B), Dsyrk (lower C = A·Aᵀ), Dtrsm (X = L⁻¹B) and Dpotrf (lower), all n × n, at
// each order of sizes: flops 2n³, n³, n³ and n³/3.
func squareCases(sizes []int) []blasCase {
	var cs []blasCase
	for _, f := range []func(n int) blasCase{
		func(n int) blasCase { return gemmCase(blas.NoTrans, blas.NoTrans, n, n, n) },
		func(n int) blasCase { return syrkCase(n, n) },
		func(n int) blasCase { return triCase("Dtrsm", blas.NoTrans, n, n) },
		potrfCase,
	} {
		for _, n := range sizes {
			cs = append(cs, f(n))
		}
	}
	return cs
}

// The shapes of the training steps gpzoo bench times (benchModels): M inducing points, minibatch B, D inputs,
// deep-GP width W.
const (
	stepM = 200
	stepB = 1024
	stepD = 8
	stepW = 8
)

// stepCases are the level-3 calls of the SVGP and deep-GP steps at their shapes (M = 200, B = 1024, D = 8,
// W = 8): thin products, tall-skinny solves and triangular products, the rank-B update and the M×M Cholesky.
func stepCases() []blasCase {
	const m, b, d, w = stepM, stepB, stepD, stepW
	use := func(c blasCase, u string) blasCase { c.use = u; return c }
	return []blasCase{
		use(gemmCase(blas.NoTrans, blas.NoTrans, m, b, d), "covariance K(Z,X): the −2·Z·Xᵀ term (k = D)"),
		use(gemmCase(blas.NoTrans, blas.Trans, d, m, b), "covariance backward to Z: Xᵀ·Wᵀ (k = B)"),
		use(gemmCase(blas.Trans, blas.NoTrans, b, w, m), "a layer's mean Aᵀ·m, W outputs (k = M)"),
		use(gemmCase(blas.NoTrans, blas.Trans, m, m, b), "an M×M product of two M×B (k = B)"),
		use(triCase("Dtrsm", blas.NoTrans, m, b), "A = L_u⁻¹·K_uf"),
		use(triCase("Dtrsm", blas.Trans, m, b), "its backward, L_u⁻ᵀ·G"),
		use(triCase("Dtrmm", blas.Trans, m, b), "TriQuadCols: L_qᵀ·A"),
		use(syrkCase(m, b), "rank-B update of an M×M matrix"),
		use(potrfCase(m), "Cholesky of K_uu"),
	}
}

// gemmCase times C = op(A)·op(B), C m×n, inner dimension k: 2mnk flops.
func gemmCase(tA, tB blas.Transpose, m, n, k int) blasCase {
	form := string([]byte{transChar(tA), transChar(tB)})
	return blasCase{routine: "Dgemm", form: form, m: m, n: n, k: k, flops: 2 * float64(m) * float64(n) * float64(k),
		setup: func(rng *rand.Rand) timedCall {
			lda, ldb := k, n // row-major op(A) m×k, op(B) k×n as stored
			if tA == blas.Trans {
				lda = m
			}
			if tB == blas.Trans {
				ldb = k
			}
			a, b, c := uniform(rng, m*k), uniform(rng, k*n), make([]float64, m*n)
			return func(im blasImpl) (time.Duration, error) {
				t0 := time.Now()
				im.blas.Dgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, n)
				return time.Since(t0), nil
			}
		}}
}

// syrkCase times the lower triangle of C = A·Aᵀ, C n×n, A n×k: n²k flops.
func syrkCase(n, k int) blasCase {
	return blasCase{routine: "Dsyrk", form: "LN", m: n, n: n, k: k, flops: float64(n) * float64(n) * float64(k),
		setup: func(rng *rand.Rand) timedCall {
			a, c := uniform(rng, n*k), make([]float64, n*n)
			return func(im blasImpl) (time.Duration, error) {
				t0 := time.Now()
				im.blas.Dsyrk(blas.Lower, blas.NoTrans, n, k, 1, a, k, 0, c, n)
				return time.Since(t0), nil
			}
		}}
}

// triCase times routine "Dtrsm" (X = op(L)⁻¹·B) or "Dtrmm" (X = op(L)·B) for a lower triangle L m×m on the left
// and B m×n: m²n flops.
func triCase(routine string, tA blas.Transpose, m, n int) blasCase {
	return blasCase{routine: routine, form: "LL" + string(transChar(tA)), m: m, n: n, k: m,
		flops: float64(m) * float64(m) * float64(n),
		setup: func(rng *rand.Rand) timedCall {
			l, b, x := lowerTriangle(rng, m), uniform(rng, m*n), make([]float64, m*n)
			f := blas.Float64.Dtrsm
			if routine == "Dtrmm" {
				f = blas.Float64.Dtrmm
			}
			return func(im blasImpl) (time.Duration, error) {
				copy(x, b) // a solve or product in place repeated on its result would drift to subnormals or overflow
				t0 := time.Now()
				f(im.blas, blas.Left, blas.Lower, tA, blas.NonUnit, m, n, 1, l, m, x, n)
				return time.Since(t0), nil
			}
		}}
}

// potrfCase times the lower Cholesky factorisation of an n×n matrix: n³/3 flops.
func potrfCase(n int) blasCase {
	nf := float64(n)
	return blasCase{routine: "Dpotrf", form: "L", m: n, n: n, k: n, flops: nf * nf * nf / 3,
		setup: func(rng *rand.Rand) timedCall {
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
		}}
}

// transChar is 'N' or 'T'.
func transChar(t blas.Transpose) byte {
	if t == blas.NoTrans {
		return 'N'
	}
	return 'T'
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
