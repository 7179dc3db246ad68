package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// The empirical spectrum of a regression's targets, which kernels that initialise themselves from the data read
// (gp.DataInitializer, InitKernelFromData): the spectral mixture's components and the periodic kernel's period.

// periodogramMaxFreqs bounds the frequency grid of each periodogram.
const periodogramMaxFreqs = 4000

// linearDetrend fits ys ≈ a + Σ_d b_d x_d (least squares over rows) and returns R² and the residuals (R² = 0 and ys
// itself when the fit is not determined: fewer rows than coefficients, collinear columns, constant targets).
func linearDetrend(x *mat.Dense, rows []int, ys []float64) (float64, []float64) {
	_, d := x.Dims()
	n := len(rows)
	ss := 0.0
	for _, v := range ys {
		ss += v * v
	}
	if n <= d+1 || ss == 0 {
		return 0, ys
	}
	a := mat.NewDense(n, d+1, nil)
	for i, r := range rows {
		a.Set(i, 0, 1)
		for k := 0; k < d; k++ {
			a.Set(i, k+1, x.At(r, k))
		}
	}
	var beta mat.VecDense
	if err := beta.SolveVec(a, mat.NewVecDense(n, slices.Clone(ys))); err != nil {
		return 0, ys
	}
	var fit mat.VecDense
	fit.MulVec(a, &beta)
	res := make([]float64, n)
	rs := 0.0
	for i, v := range ys {
		res[i] = v - fit.AtVec(i)
		rs += res[i] * res[i]
	}
	r2 := 1 - rs/ss
	if !(r2 >= 0 && r2 <= 1) {
		return 0, ys
	}
	return r2, res
}

// spectralPeak is a local maximum of a periodogram: its frequency, power and spectral standard deviation.
type spectralPeak struct{ freq, power, sd float64 }

// periodogramPeaks returns the local maxima of the Lomb–Scargle periodogram of ys against xs on the
// grid f = j·Δf, Δf = 1/(4T) (T the range of xs: 4× oversampled) up to the Nyquist frequency 1/(2·median spacing
// of the sorted distinct xs) (at most periodogramMaxFreqs frequencies), each with its half width at half maximum
// as a spectral standard deviation; largest first, without the side lobes of stronger ones (within 3/T); at least
// one (a flat or degenerate spectrum gives one peak at the lowest frequency).
func periodogramPeaks(xs, ys []float64) []spectralPeak {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	span := sorted[len(sorted)-1] - sorted[0]
	var gaps []float64
	for i := 1; i < len(sorted); i++ {
		if g := sorted[i] - sorted[i-1]; g > 0 {
			gaps = append(gaps, g)
		}
	}
	if span <= 0 || len(gaps) == 0 { // one distinct input value: no spectrum
		return []spectralPeak{{freq: 0, power: 1, sd: 1}}
	}
	slices.Sort(gaps)
	df := 1 / (4 * span)
	fmax := 1 / (2 * gaps[len(gaps)/2])
	nf := min(int(fmax/df), periodogramMaxFreqs)
	if nf < 2 {
		nf = 2
	}
	pw := make([]float64, nf+1) // pw[j]: power at j·df; pw[0] (f = 0) stays 0 for centred targets
	for j := 1; j <= nf; j++ {
		pw[j] = lombScargle(xs, ys, 2*math.Pi*float64(j)*df)
	}
	var peaks []spectralPeak
	for j := 1; j <= nf; j++ {
		if pw[j] <= 0 || pw[j] < pw[j-1] || j < nf && pw[j] < pw[j+1] {
			continue
		}
		// half width at half maximum, interpolated linearly on each side
		half := pw[j] / 2
		lo, hi := float64(j), float64(j)
		for i := j; i > 0; i-- {
			if pw[i-1] < half {
				lo = float64(i) - (pw[i]-half)/(pw[i]-pw[i-1])
				break
			}
			lo = float64(i - 1)
		}
		for i := j; i < nf; i++ {
			if pw[i+1] < half {
				hi = float64(i) + (pw[i]-half)/(pw[i]-pw[i+1])
				break
			}
			hi = float64(i + 1)
		}
		hwhm := math.Max((hi-lo)/2, 1) * df
		peaks = append(peaks, spectralPeak{freq: float64(j) * df, power: pw[j], sd: hwhm / math.Sqrt(2*math.Ln2)})
	}
	if len(peaks) == 0 {
		return []spectralPeak{{freq: df, power: 0, sd: df}}
	}
	sort.SliceStable(peaks, func(a, b int) bool { return peaks[a].power > peaks[b].power })
	// A stronger peak's side lobes (spectral leakage, at ±1.5/T, ±2.5/T, ...) are not peaks of their own.
	kept := peaks[:0]
	for _, p := range peaks {
		if !slices.ContainsFunc(kept, func(k spectralPeak) bool { return math.Abs(p.freq-k.freq) <= 12*df }) {
			kept = append(kept, p)
		}
	}
	return kept
}

// lombScargle returns the Lomb–Scargle power (Scargle 1982, eq. 10, without the 1/(2σ²) normalisation) of the
// centred ys at angular frequency w: with tan(2wt₀) = Σ sin 2wx / Σ cos 2wx,
// ½[(Σ y cos w(x−t₀))²/Σ cos² w(x−t₀) + (Σ y sin w(x−t₀))²/Σ sin² w(x−t₀)].
func lombScargle(xs, ys []float64, w float64) float64 {
	s2, c2 := 0.0, 0.0
	for _, x := range xs {
		s, c := math.Sincos(2 * w * x)
		s2 += s
		c2 += c
	}
	t0 := math.Atan2(s2, c2) / (2 * w)
	yc, ys2, cc, ss := 0.0, 0.0, 0.0, 0.0
	for i, x := range xs {
		s, c := math.Sincos(w * (x - t0))
		yc += ys[i] * c
		ys2 += ys[i] * s
		cc += c * c
		ss += s * s
	}
	p := 0.0
	if cc > 0 {
		p += yc * yc / cc
	}
	if ss > 0 {
		p += ys2 * ys2 / ss
	}
	return p / 2
}

// periodogramMaxRows bounds the rows a periodogram reads (a random subset beyond).
const periodogramMaxRows = 4000

// periodogramTargets returns the rows of x and y a periodogram reads (all of them up to periodogramMaxRows, in
// order; beyond, a random subset drawn from rng, sorted; nil rng: the first rows) and y's column 0 on them,
// standardised by its mean and variance vy over them (all zero when vy is 0; vy is +Inf when it overflows).
func periodogramTargets(x, y *mat.Dense, rng *rand.Rand) (rows []int, ys []float64, vy float64) {
	n, _ := x.Dims()
	rows = make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	if n > periodogramMaxRows {
		if rng != nil {
			rng.Shuffle(n, func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		}
		rows = rows[:periodogramMaxRows]
		slices.Sort(rows)
	}
	ys = make([]float64, len(rows))
	mean := 0.0
	for i, r := range rows {
		ys[i] = y.At(r, 0)
		mean += ys[i]
	}
	mean /= float64(len(ys))
	for _, v := range ys {
		vy += (v - mean) * (v - mean)
	}
	vy /= float64(len(ys))
	if math.IsInf(vy, 0) {
		return rows, ys, vy
	}
	for i := range ys {
		if vy > 0 {
			ys[i] = (ys[i] - mean) / math.Sqrt(vy)
		} else {
			ys[i] = 0
		}
	}
	return rows, ys, vy
}
