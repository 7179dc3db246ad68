package vmath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refPrec is the precision of the reference exponential.
const refPrec = 200

// refLn2 is ln 2 to refPrec bits.
var refLn2, _, _ = big.ParseFloat("0.6931471805599453094172321214581765680755001343602552541206800094933936219696947156058633269964186875",
	10, refPrec, big.ToNearestEven)

// refExp returns eˣ correctly rounded (for x whose result is normal): 2ᵏ·eʳ with r = x − k·ln2 in refPrec-bit
// arithmetic and 40 terms of the Taylor series (|r| ≤ ln2/2: the remainder is below 2⁻²⁰⁰).
func refExp(x float64) float64 {
	k := math.Round(x / math.Ln2)
	r := new(big.Float).SetPrec(refPrec).SetFloat64(x)
	r.Sub(r, new(big.Float).SetPrec(refPrec).Mul(refLn2, big.NewFloat(k)))
	sum := big.NewFloat(1).SetPrec(refPrec)
	term := big.NewFloat(1).SetPrec(refPrec)
	for n := 1; n <= 40; n++ {
		term.Mul(term, r)
		term.Quo(term, big.NewFloat(float64(n)))
		sum.Add(sum, term)
	}
	f, _ := sum.SetMantExp(sum, int(k)).Float64()
	return f
}

// Against the correctly rounded result the error is at most 1 ulp (math.Exp's own error is why the comparison
// with it allows 2); most results are correctly rounded.
func TestExpCorrectlyRounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 40000
	if testing.Short() {
		n = 4000
	}
	src := make([]float64, n)
	for i := range src {
		if i%2 == 0 {
			src[i] = expMin + (expMax-expMin)*rng.Float64()
		} else {
			src[i] = -1 + 2*rng.Float64()
		}
	}
	got := make([]float64, n)
	Exp(got, src)
	var hist [3]int
	for i, x := range src {
		d := ulps(got[i], refExp(x))
		if d > 1 {
			t.Errorf("Exp(%v) = %v: %d ulp from the correctly rounded %v", x, got[i], d, refExp(x))
		}
		hist[min(d, 2)]++
	}
	t.Logf("%d inputs: %d correctly rounded, %d at 1 ulp, %d beyond", n, hist[0], hist[1], hist[2])
}
