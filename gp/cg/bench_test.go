package cg_test

import (
	"fmt"
	"testing"

	"github.com/gpzoo/gpzoo/internal/testkit/benchmodels/cgproduct"
)

// BenchmarkKernelProduct times one product K·V of the CG exact GP (SE-ARD, D = 8, V [N,11]) with K kept whole and
// recomputed by blocks: the figure gpzoo bench reports (GFLOP/s from cgproduct.KernelProduct's Flops).
func BenchmarkKernelProduct(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		for _, keep := range []bool{true, false} {
			mode := "recomputed"
			if keep {
				mode = "kept"
			}
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) {
				p, err := cgproduct.New(n, keep)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := p.Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(p.Flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
