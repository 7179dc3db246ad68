package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// interleave (the transposing packer of Dgemm's operands) against a plain loop, for every kernel (vector code in
// blocks of 8 and 4 rows and columns, Go for the rest): rows 0…17, columns 0…41 at leading dimensions beyond
// them and panel widths from the rows to 17; the entries of dst beyond the rows must stay untouched.
func TestInterleave(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for rows := 0; rows <= 17; rows++ {
			for k := 0; k <= 41; k++ {
				for _, extra := range []int{0, 3} {
					width, ld := max(rows, 1)+extra, k+1+2*extra
					src := operand(rng, max(rows, 1), ld, ld)
					dst := make([]float64, max(k, 1)*width+1)
					for i := range dst {
						dst[i] = canary
					}
					want := append([]float64(nil), dst...)
					for i := 0; i < rows; i++ {
						for p := 0; p < k; p++ {
							want[p*width+i] = src[i*ld+p]
						}
					}
					interleave(dst, src, ld, rows, k, width)
					sameBits(t, fmt.Sprintf("rows %d k %d width %d ld %d", rows, k, width, ld), dst, want)
				}
			}
		}
	})
}
