package blas

import (
	"math"

	"gonum.org/v1/gonum/blas"
)

// The Cholesky factorisation and backward pass this package had before chol.go (recursive Dpotrf, blocked
// backward through this package's Dtrsm, Dgemm and Dgemmt), kept as references for the tests and benchmarks.

// potrfLowerRef is the recursive lower Dpotrf (Gustavson 1997) with unblocked leaves of order ≤ 32.
func potrfLowerRef(a []float64, n, lda int) bool {
	if n <= 32 {
		return potf2LowerRef(a, n, lda)
	}
	n1 := roundUp(n/2, panelRows)
	if n1 >= n {
		n1 = n / 2
	}
	n2 := n - n1
	if !potrfLowerRef(a, n1, lda) {
		return false
	}
	var im Implementation
	a21 := a[n1*lda:]
	im.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, n2, n1, 1, a, lda, a21, lda)
	a22 := a[n1*lda+n1:]
	im.Dsyrk(blas.Lower, blas.NoTrans, n2, n1, -1, a21, lda, 1, a22, lda)
	return potrfLowerRef(a22, n2, lda)
}

func potf2LowerRef(a []float64, n, lda int) bool {
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+j+1]
		d := rj[j]
		for _, v := range rj[:j] {
			d -= v * v
		}
		if !(d > 0) {
			rj[j] = d
			return false
		}
		d = math.Sqrt(d)
		rj[j] = d
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			s := ri[j]
			for k, v := range ri[:j] {
				s -= v * rj[k]
			}
			ri[j] = s / d
		}
	}
	return true
}

// choleskyBackwardRef is Murray's blocked reverse mode through Dtrsm, Dgemm and Dgemmt, blocks of 48 from the
// last row.
func choleskyBackwardRef(w, l []float64, n int) {
	const block = 48
	var im Implementation
	sym := make([]float64, block*block)
	for k := n; k > 0; k -= block {
		j := max(0, k-block)
		nb, nk := k-j, n-k
		if nk > 0 {
			cb := w[k*n+j:]
			im.Dtrsm(blas.Right, blas.Lower, blas.NoTrans, blas.NonUnit, nk, nb, 1, l[j*n+j:], n, cb, n)
			if j > 0 {
				im.Dgemm(blas.NoTrans, blas.NoTrans, nk, j, nb, -1, cb, n, l[j*n:], n, 1, w[k*n:], n)
			}
			im.Dgemmt(blas.Lower, blas.Trans, blas.NoTrans, nb, nk, -1, cb, n, l[k*n+j:], n, 1, w[j*n+j:], n)
		}
		cholRevUnblockedRef(w[j*n+j:], l[j*n+j:], nb, n)
		if j > 0 {
			if nk > 0 {
				im.Dgemm(blas.Trans, blas.NoTrans, nb, j, nk, -1, w[k*n+j:], n, l[k*n:], n, 1, w[j*n:], n)
			}
			s := sym[:nb*nb]
			for r := 0; r < nb; r++ {
				for c := 0; c <= r; c++ {
					v := w[(j+r)*n+j+c]
					if r == c {
						s[r*nb+c] = 2 * v
						continue
					}
					s[r*nb+c], s[c*nb+r] = v, v
				}
			}
			im.Dgemm(blas.NoTrans, blas.NoTrans, nb, j, nb, -1, s, nb, l[j*n:], n, 1, w[j*n:], n)
		}
	}
	for i := 0; i < n; i++ {
		for c := 0; c < i; c++ {
			v := 0.5 * w[i*n+c]
			w[i*n+c], w[c*n+i] = v, v
		}
	}
}

func cholRevUnblockedRef(w, l []float64, nb, ld int) {
	for j := nb - 1; j >= 0; j-- {
		d := l[j*ld+j]
		dbar := w[j*ld+j]
		for i := j + 1; i < nb; i++ {
			dbar -= l[i*ld+j] * w[i*ld+j] / d
		}
		dbar /= d
		for i := j + 1; i < nb; i++ {
			w[i*ld+j] /= d
		}
		for i := j + 1; i < nb; i++ {
			ci := w[i*ld+j]
			for c := 0; c < j; c++ {
				w[i*ld+c] -= ci * l[j*ld+c]
			}
		}
		for c := 0; c < j; c++ {
			s := dbar * l[j*ld+c]
			for i := j + 1; i < nb; i++ {
				s += w[i*ld+j] * l[i*ld+c]
			}
			w[j*ld+c] -= s
		}
		w[j*ld+j] = dbar / 2
	}
}
