package plots

import "math"

// MaxBins is the largest number of bins ECE and Reliability accept.
const MaxBins = 10000

// calBin is one equal-width probability bin of a reliability diagram.
type calBin struct {
	lo, hi   float64 // the bin covers [lo, hi), the last bin [lo, 1]
	n        int     // predictions that fell into the bin
	sumProb  float64 // Σ prob over the bin
	nCorrect int     // predictions in the bin whose event occurred
}

// confidence is the bin's mean predicted probability; only meaningful when n > 0.
func (b calBin) confidence() float64 { return b.sumProb / float64(b.n) }

// frequency is the bin's empirical frequency of the event; only meaningful when n > 0.
func (b calBin) frequency() float64 { return float64(b.nCorrect) / float64(b.n) }

// calibrate validates its inputs (errors attributed to fn), sorts the predictions into bins equal-width bins
// of [0, 1] and returns the bins and the expected calibration error.
func calibrate(fn string, prob []float64, correct []bool, bins int) ([]calBin, float64, error) {
	if bins < 1 || bins > MaxBins {
		return nil, 0, &RangeError{Func: fn, Name: "bins", Index: -1, Value: float64(bins), Min: 1, Max: MaxBins}
	}
	if err := checkAtLeast(fn, "prob", len(prob), 1); err != nil {
		return nil, 0, err
	}
	if err := checkLen(fn, "correct", len(correct), len(prob)); err != nil {
		return nil, 0, err
	}
	if err := checkFinite(fn, "prob", prob); err != nil {
		return nil, 0, err
	}
	for i, p := range prob {
		if p < 0 || p > 1 {
			return nil, 0, &RangeError{Func: fn, Name: "prob", Index: i, Value: p, Min: 0, Max: 1}
		}
	}
	bs := make([]calBin, bins)
	for b := range bs {
		bs[b].lo, bs[b].hi = float64(b)/float64(bins), float64(b+1)/float64(bins)
	}
	for i, p := range prob {
		b := min(int(math.Floor(p*float64(bins))), bins-1)
		bs[b].n++
		bs[b].sumProb += p
		if correct[i] {
			bs[b].nCorrect++
		}
	}
	var ece float64
	for _, b := range bs {
		if b.n > 0 {
			ece += float64(b.n) * math.Abs(b.frequency()-b.confidence())
		}
	}
	return bs, ece / float64(len(prob)), nil
}

// ECE returns the expected calibration error of the predicted probabilities prob, where correct[i] reports
// whether the event that prob[i] predicts occurred (for a classifier: prob is the largest class probability and
// correct whether that class was the label; for a binary one it may instead be p(y=1) and y = 1). The
// predictions are sorted into bins equal-width bins of [0, 1] — bin b holds b/bins ≤ p < (b+1)/bins, the last
// bin also p = 1 — and
//
//	ECE = Σ_b (n_b / N) · |freq_b − conf_b|,
//
// where n_b is the bin's count, conf_b its mean prob and freq_b its fraction of correct (Naeini et al. 2015;
// Guo et al. 2017, eq. 3). Empty bins contribute nothing. The ECE lies in [0, 1].
//
// Shapes: len(correct) = len(prob) ≥ 1; 1 ≤ bins ≤ MaxBins.
//
// Errors: *ShapeError, *NonFiniteError naming the row of prob, or *RangeError for a probability outside [0, 1]
// or a bad bins.
func ECE(prob []float64, correct []bool, bins int) (float64, error) {
	_, ece, err := calibrate("ECE", prob, correct, bins)
	return ece, err
}
