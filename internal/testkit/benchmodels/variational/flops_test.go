package variational

import (
	"math"
	"testing"

	bm "github.com/gpzoo/gpzoo/internal/testkit/benchmodels"
)

// The counts are positive, equal the closed forms of their comments and scale as the algorithm does: doubling
// the minibatch about doubles the SVGP step's count, doubling M about quadruples it (the M²B terms dominate).
func TestFlops(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if !(got > 0) || math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: %v flops, want the closed form %v", what, got, want)
		}
	}
	for _, c := range []struct {
		m, n, d, p float64
		dx, white  bool
	}{{200, 1024, 8, 1, false, false}, {200, 1024, 8, 8, false, true}, {50, 300, 3, 5, true, false}} {
		i := 1.0
		if c.dx {
			i = 2
		}
		m, n, d, p := c.m, c.n, c.d, c.p
		want := 3*(p+1)*m*m*n + m*m*m/3 + bm.CholGradFlops(int(m)) + (3+2*i)*m*n*d + (15+10*p)*m*n + 7*m*m*d +
			(11+20*p)*m*m + 14*m*(d+p)
		if c.white {
			want += m*n + m*m
		}
		near("SVGP layer", svgpLayerFlops(m, layerShape{n: n, d: d, p: p, dx: c.dx, white: c.white}), want)

		ma, mb := 2.5*m, m/2
		want = (3*p+3)*mb*mb*n + (3*p+1.0/3)*mb*mb*mb + bm.CholGradFlops(int(mb)) + ma*ma*ma/3 + bm.CholGradFlops(int(ma)) +
			(3+2*i)*(ma+mb)*n*d + (10+6*p)*ma*n + (14+4*p)*mb*n + 7*(ma*ma+mb*mb)*d + (11+3*p)*ma*ma +
			(12+21*p)*mb*mb + 14*((ma+mb)*d+p*ma)
		if c.white {
			want += (ma+mb)*n + ma*ma + mb*mb
		}
		near("decoupled layer", decoupledLayerFlops(ma, mb, layerShape{n: n, d: d, p: p, dx: c.dx, white: c.white}), want)
	}

	svgp := SVGPFlops(200, 1024)
	if r := SVGPFlops(200, 2048) / svgp; r < 1.85 || r > 2 {
		t.Errorf("doubling B multiplies the SVGP count by %.3f, want about 2", r)
	}
	if r := SVGPFlops(400, 1024) / svgp; r < 3.6 || r > 4.5 {
		t.Errorf("doubling M multiplies the SVGP count by %.3f, want about 4", r)
	}
	for _, f := range DGPFamilies {
		n := float64(dgpSamples * dgpBatch)
		if got := DGPFlops(f); !(got > svgp) {
			t.Errorf("%s: %v flops", f, got)
		}
		// The deep GP's count is its two layers' and the sample's: S·B rows in each layer.
		var layers float64
		if f == DGPCoupled {
			layers = svgpLayerFlops(dgpM, layerShape{n: n, d: dgpDim, p: dgpWidth, white: true}) +
				svgpLayerFlops(dgpM, layerShape{n: n, d: dgpWidth, p: 1, dx: true})
		} else {
			layers = decoupledLayerFlops(dgpMa, dgpMb, layerShape{n: n, d: dgpDim, p: dgpWidth, white: true}) +
				decoupledLayerFlops(dgpMa, dgpMb, layerShape{n: n, d: dgpWidth, p: 1, dx: true})
		}
		near(f, DGPFlops(f), layers+8*n*dgpWidth)
	}
	if got := DGPFlops("nosuch"); got != 0 {
		t.Errorf("unknown family: %v flops", got)
	}
	// A deeper or wider step's count is its layers' and samples': the first layer on the data, the further hidden
	// layers W → W on differentiated samples, the last W → 1, a sample per hidden layer.
	for _, s := range append([]DGPShape{{DGPDecoupled, 0, 10, 500, 9}}, FullBatchDGPs...) {
		n, d, w := float64(s.Rows), float64(s.Dim), float64(s.Width)
		layer := func(sh layerShape) float64 {
			if s.Family == DGPCoupled {
				return svgpLayerFlops(dgpM, sh)
			}
			return decoupledLayerFlops(dgpMa, dgpMb, sh)
		}
		want := layer(layerShape{n: n, d: d, p: 1})
		if s.Hidden > 0 {
			want = layer(layerShape{n: n, d: d, p: w, white: true}) + layer(layerShape{n: n, d: w, p: 1, dx: true}) +
				float64(s.Hidden)*8*n*w
			for l := 1; l < s.Hidden; l++ {
				want += layer(layerShape{n: n, d: w, p: w, dx: true, white: true})
			}
		}
		near(s.Name(), DGPShapeFlops(s), want)
	}
	// Three hidden layers cost about three times one's extra hidden layer more; 10,000 rows about 10000/6553
	// times 6,553's.
	l1, l3 := DGPShapeFlops(FullBatchDGPs[0]), DGPShapeFlops(FullBatchDGPs[2])
	if r := l3 / l1; r < 2 || r > 3.5 {
		t.Errorf("%s over %s: %.3f, want between 2 and 3.5", FullBatchDGPs[2].Name(), FullBatchDGPs[0].Name(), r)
	}
	if got := DGPShapeFlops(DGPShape{DGPCoupled, 1, 10, 0, 8}); got != 0 {
		t.Errorf("no rows: %v flops", got)
	}
}

// The full-batch shapes are Havasi et al.'s: both families, L = 1 and 3 on kin8nm's 6,553 rows of 8 inputs, L = 4
// on protein's 10,000 of 9, width 10; their names say so, and the minibatch shape keeps its family's name.
func TestFullBatchShapes(t *testing.T) {
	want := []string{
		"coupled-M200,L=1,N=6553,D=8,W=10", "decoupled-Ma500-Mb100,L=1,N=6553,D=8,W=10",
		"coupled-M200,L=3,N=6553,D=8,W=10", "decoupled-Ma500-Mb100,L=3,N=6553,D=8,W=10",
		"coupled-M200,L=4,N=10000,D=9,W=10", "decoupled-Ma500-Mb100,L=4,N=10000,D=9,W=10",
	}
	if len(FullBatchDGPs) != len(want) {
		t.Fatalf("%d full-batch shapes, want %d", len(FullBatchDGPs), len(want))
	}
	for i, s := range FullBatchDGPs {
		if s.Name() != want[i] {
			t.Errorf("shape %d: %q, want %q", i, s.Name(), want[i])
		}
	}
	for _, f := range DGPFamilies {
		if got := MinibatchDGP(f).Name(); got != f {
			t.Errorf("minibatch shape of %s named %q", f, got)
		}
		if DGPFlops(f) != DGPShapeFlops(MinibatchDGP(f)) {
			t.Errorf("%s: DGPFlops %v, DGPShapeFlops %v", f, DGPFlops(f), DGPShapeFlops(MinibatchDGP(f)))
		}
	}
}
