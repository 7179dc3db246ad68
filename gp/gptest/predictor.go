package gptest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// CheckPredictor runs the gp.Predictor conformance suite on p at the rows of x [N,InputDim] with the options o
// (o.Rand must be nil: the suite relies on the default generator) and returns the prediction:
//
//   - shapes: FMean and FVar [N,OutputDim], YMean and YVar [N,PredictiveDim] (the likelihood's width of y, in
//     1..OutputDim: OutputDim but for a likelihood with several latents per target, such as the heteroscedastic
//     Gaussian's L = 2P); non-negative variances; every value finite; Probs, when set, rows of probabilities
//     summing to 1 ([N,K] for K classes, pairs [N,2P] for Bernoulli's P label columns); Components' weights
//     summing to 1, each of the same shapes;
//   - determinism: a second call with the same options gives the same bits;
//   - o.Full (unless the family returns gp.ErrUnsupported): one symmetric [N,N] covariance per output whose
//     diagonal is FVar (1e-8, relative to the variance scale); o.OutputCov: one symmetric [L,L] covariance
//     between the outputs per row whose diagonal is FVar's row (1e-8) and whose correlations lie in [−1, 1];
//     o.Draws: that many samples [N,OutputDim];
//   - errors: nil inputs, empty inputs and a wrong width are *ops.ShapeError; a NaN or ±Inf input is a
//     *ops.NonFiniteError naming its row and column.
func CheckPredictor(t *testing.T, p gp.Predictor, x *mat.Dense, o gp.PredictOptions) *gp.Prediction {
	t.Helper()
	if o.Rand != nil {
		t.Fatal("CheckPredictor: o.Rand must be nil")
	}
	n, d := x.Dims()
	if d != p.InputDim() {
		t.Fatalf("InputDim %d, the inputs have %d columns", p.InputDim(), d)
	}
	pr, err := p.Predict(x, o)
	if errors.Is(err, gp.ErrUnsupported) && o.Full {
		o.Full = false
		pr, err = p.Predict(x, o)
	}
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	l, yd := p.OutputDim(), p.PredictiveDim()
	if yd < 1 || yd > l {
		t.Fatalf("PredictiveDim %d for OutputDim %d latent functions, want 1..%d", yd, l, l)
	}
	checkPair(t, "f", pr.FMean, pr.FVar, n, l)
	checkPair(t, "y", pr.YMean, pr.YVar, n, yd)
	if pr.Probs != nil {
		r, c := pr.Probs.Dims()
		group := c // a K-class likelihood: [N,K] rows of K probabilities
		if c == 2*yd {
			group = 2 // a Bernoulli likelihood: [N,2P], pairs p(y_j = 0), p(y_j = 1)
		} else if c != yd {
			t.Errorf("Probs has %d columns for %d predictive columns", c, yd)
		}
		if r != n {
			t.Errorf("Probs has %d rows, want %d", r, n)
		}
		for i := 0; i < r; i++ {
			row := pr.Probs.RawRowView(i)
			for lo := 0; lo+group <= len(row); lo += group {
				s := 0.0
				for _, v := range row[lo : lo+group] {
					if !(v >= 0 && v <= 1) {
						t.Errorf("Probs row %d holds %v", i, v)
					}
					s += v
				}
				if math.Abs(s-1) > 1e-9 {
					t.Errorf("Probs row %d, columns %d..%d sum to %v", i, lo, lo+group-1, s)
				}
			}
		}
	}
	if len(pr.Components) > 0 {
		w := 0.0
		for k, c := range pr.Components {
			w += c.Weight
			checkPair(t, "component f", c.FMean, c.FVar, n, l)
			checkPair(t, "component y", c.YMean, c.YVar, n, yd)
			if t.Failed() {
				t.Fatalf("component %d malformed", k)
			}
		}
		if math.Abs(w-1) > 1e-12 {
			t.Errorf("component weights sum to %v", w)
		}
	}
	if o.Full {
		if len(pr.FCov) != l {
			t.Fatalf("%d covariances, want %d", len(pr.FCov), l)
		}
		for j, c := range pr.FCov {
			if c.SymmetricDim() != n {
				t.Fatalf("covariance %d is [%d,%d], want [%d,%d]", j, c.SymmetricDim(), c.SymmetricDim(), n, n)
			}
			for i := 0; i < n; i++ {
				v := pr.FVar.At(i, j)
				if math.Abs(c.At(i, i)-v) > 1e-8*math.Max(1, v) {
					t.Errorf("covariance %d diagonal %d = %v, FVar %v", j, i, c.At(i, i), v)
				}
			}
		}
	} else if pr.FCov != nil {
		t.Error("FCov set without Full")
	}
	if o.OutputCov {
		if len(pr.OutputCov) != n {
			t.Fatalf("%d output covariances, want one per row (%d)", len(pr.OutputCov), n)
		}
		for i, c := range pr.OutputCov {
			if c == nil || c.SymmetricDim() != l {
				t.Fatalf("output covariance of row %d is %v, want [%d,%d]", i, c, l, l)
			}
			for a := 0; a < l; a++ {
				v := pr.FVar.At(i, a)
				if math.Abs(c.At(a, a)-v) > 1e-8*math.Max(1, v) {
					t.Errorf("output covariance of row %d: diagonal %d = %v, FVar %v", i, a, c.At(a, a), v)
				}
				for b := 0; b < l; b++ {
					if cv := c.At(a, b); math.IsNaN(cv) || math.IsInf(cv, 0) || math.Abs(cv) > math.Sqrt(c.At(a, a)*c.At(b, b))*(1+1e-8)+1e-12 {
						t.Errorf("output covariance of row %d: (%d,%d) = %v with variances %v, %v", i, a, b, cv, c.At(a, a), c.At(b, b))
					}
				}
			}
		}
	} else if pr.OutputCov != nil {
		t.Error("OutputCov set without OutputCov")
	}
	if len(pr.Draws) != o.Draws {
		t.Errorf("%d draws, want %d", len(pr.Draws), o.Draws)
	}
	for k, s := range pr.Draws {
		if r, c := s.Dims(); r != n || c != l {
			t.Errorf("draw %d is [%d,%d], want [%d,%d]", k, r, c, n, l)
		}
	}

	again, err := p.Predict(x, o)
	if err != nil {
		t.Fatalf("second Predict: %v", err)
	}
	for name, ab := range map[string][2]*mat.Dense{"FMean": {pr.FMean, again.FMean}, "FVar": {pr.FVar, again.FVar},
		"YMean": {pr.YMean, again.YMean}, "YVar": {pr.YVar, again.YVar}} {
		if !sameBits(ab[0], ab[1]) {
			t.Errorf("%s differs between two calls with the same options", name)
		}
	}
	for i := range pr.OutputCov {
		if !sameBits(mat.DenseCopyOf(pr.OutputCov[i]), mat.DenseCopyOf(again.OutputCov[i])) {
			t.Errorf("output covariance of row %d differs between two calls with the same options", i)
		}
	}
	for k := range pr.Draws {
		if !sameBits(pr.Draws[k], again.Draws[k]) {
			t.Errorf("draw %d differs between two calls with the same options", k)
		}
	}

	var se *ops.ShapeError
	for name, bad := range map[string]*mat.Dense{"nil": nil, "empty": {}, "one column more": mat.NewDense(2, d+1, nil)} {
		if _, err := p.Predict(bad, o); !errors.As(err, &se) {
			t.Errorf("%s inputs: %v, want a *ops.ShapeError", name, err)
		}
	}
	if d > 1 {
		if _, err := p.Predict(mat.NewDense(2, d-1, nil), o); !errors.As(err, &se) {
			t.Errorf("one column less: %v, want a *ops.ShapeError", err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
	r, c := rng.IntN(n), rng.IntN(d)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		bad := mat.DenseCopyOf(x)
		bad.Set(r, c, v)
		var nf *ops.NonFiniteError
		if _, err := p.Predict(bad, o); !errors.As(err, &nf) || nf.Row != r || nf.Col != c {
			t.Errorf("%v at row %d, column %d: %v, want a *ops.NonFiniteError naming them", v, r, c, err)
		}
	}
	return pr
}

func checkPair(t *testing.T, what string, mean, variance *mat.Dense, n, l int) {
	t.Helper()
	if mean == nil || variance == nil {
		t.Errorf("%s: nil mean or variance", what)
		return
	}
	for _, m := range []*mat.Dense{mean, variance} {
		if r, c := m.Dims(); r != n || c != l {
			t.Errorf("%s: [%d,%d], want [%d,%d]", what, r, c, n, l)
			return
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < l; j++ {
			m, v := mean.At(i, j), variance.At(i, j)
			if math.IsNaN(m) || math.IsInf(m, 0) || !(v >= 0) || math.IsInf(v, 0) {
				t.Errorf("%s (%d,%d): mean %v, variance %v", what, i, j, m, v)
			}
		}
	}
}

func sameBits(a, b *mat.Dense) bool {
	if a == nil || b == nil {
		return a == b
	}
	ra, ca := a.Dims()
	if rb, cb := b.Dims(); ra != rb || ca != cb {
		return false
	}
	for i := 0; i < ra; i++ {
		for j := 0; j < ca; j++ {
			if math.Float64bits(a.At(i, j)) != math.Float64bits(b.At(i, j)) {
				return false
			}
		}
	}
	return true
}
