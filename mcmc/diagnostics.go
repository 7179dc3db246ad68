package mcmc

import (
	"math"
	"slices"
	"sort"
)

// The convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021 (Bayesian Analysis 16(2),
// "Rank-normalization, folding, and localization: an improved R̂ for assessing convergence of MCMC"), for one
// scalar quantity given as its draws per chain (chains[c][i], every chain of the same length ≥ 4). Chains are split
// in halves (an odd chain loses its middle draw), so that a trend within a chain shows as between-chain
// variance. A quantity constant over every draw has no defined R̂ or ESS: NaN.

// Summary holds a quantity's posterior summary and diagnostics.
type Summary struct {
	Mean, SD, Q5, Median, Q95 float64
	// MCSEMean and MCSESD are the Monte-Carlo standard errors of Mean and SD (from ESSMean and from the ESS of the
	// squared deviations).
	MCSEMean, MCSESD float64
	// Rhat is the larger of the split R̂ of the rank-normalised draws and of the rank-normalised folded draws
	// |x − median| (Vehtari et al. 2021, §4.2): below 1.01 for chains that mix.
	Rhat float64
	// ESSBulk is the effective sample size of the rank-normalised split chains (§4.3); ESSTail the smaller of
	// those of the indicators of the 5% and 95% quantiles; ESSMean that of the draws as they are (for MCSEMean).
	ESSBulk, ESSTail, ESSMean float64
}

// Summarize returns the summary of the draws chains[c][i].
func Summarize(chains [][]float64) Summary {
	all := pooled(chains)
	mean := meanOf(all)
	sd := math.Sqrt(varianceOf(all, mean))
	sorted := slices.Sorted(slices.Values(all))
	s := Summary{Mean: mean, SD: sd, Q5: quantile(sorted, 0.05), Median: quantile(sorted, 0.5), Q95: quantile(sorted, 0.95),
		Rhat: Rhat(chains), ESSBulk: ESSBulk(chains), ESSTail: ESSTail(chains), ESSMean: ESS(chains)}
	s.MCSEMean = sd / math.Sqrt(s.ESSMean)
	s.MCSESD = mcseSD(chains, mean)
	return s
}

// mcseSD is the Monte-Carlo standard error of the standard deviation by the delta method (the posterior R
// package's mcse_sd): with d = (x − mean)², Var(SD) ≈ Var(d) / (ESS(d) · 4 E[d]).
func mcseSD(chains [][]float64, mean float64) float64 {
	sq := make([][]float64, len(chains))
	for c, ch := range chains {
		sq[c] = make([]float64, len(ch))
		for i, x := range ch {
			sq[c][i] = (x - mean) * (x - mean)
		}
	}
	all := pooled(sq)
	ev := meanOf(all)
	varVar := varianceOf(all, ev) / ESS(sq)
	return math.Sqrt(varVar / ev / 4)
}

// Rhat returns the rank-normalised split R̂: the larger of those of the draws and of the folded draws.
func Rhat(chains [][]float64) float64 {
	split := splitChains(chains)
	med := quantile(slices.Sorted(slices.Values(pooled(chains))), 0.5)
	folded := make([][]float64, len(split))
	for c, ch := range split {
		folded[c] = make([]float64, len(ch))
		for i, x := range ch {
			folded[c][i] = math.Abs(x - med)
		}
	}
	return math.Max(basicRhat(rankNormalize(split)), basicRhat(rankNormalize(folded)))
}

// ESSBulk returns the effective sample size of the rank-normalised split chains.
func ESSBulk(chains [][]float64) float64 { return essOf(rankNormalize(splitChains(chains))) }

// ESS returns the effective sample size of the split chains as they are (Vehtari et al.'s ess_mean: for the
// Monte-Carlo standard error of the mean).
func ESS(chains [][]float64) float64 { return essOf(splitChains(chains)) }

// ESSTail returns the smaller effective sample size of the indicators I(x ≤ q) of the 5% and 95% quantiles q.
func ESSTail(chains [][]float64) float64 {
	sorted := slices.Sorted(slices.Values(pooled(chains)))
	split := splitChains(chains)
	ess := math.Inf(1)
	for _, p := range []float64{0.05, 0.95} {
		q := quantile(sorted, p)
		ind := make([][]float64, len(split))
		for c, ch := range split {
			ind[c] = make([]float64, len(ch))
			for i, x := range ch {
				if x <= q {
					ind[c][i] = 1
				}
			}
		}
		ess = math.Min(ess, essOf(ind))
	}
	return ess
}

// splitChains returns the halves of every chain (the middle draw of an odd chain dropped).
func splitChains(chains [][]float64) [][]float64 {
	out := make([][]float64, 0, 2*len(chains))
	for _, ch := range chains {
		h := len(ch) / 2
		out = append(out, ch[:h], ch[len(ch)-h:])
	}
	return out
}

func pooled(chains [][]float64) []float64 {
	var all []float64
	for _, ch := range chains {
		all = append(all, ch...)
	}
	return all
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// varianceOf returns the sample variance (n − 1 denominator).
func varianceOf(x []float64, mean float64) float64 {
	s := 0.0
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x)-1)
}

// quantile returns the p-quantile of sorted data by linear interpolation (type 7).
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}

// rankNormalize replaces every draw by Φ⁻¹((r − 3/8)/(S + 1/4)), r its rank among all S draws (ties averaged):
// the normal scores of Vehtari et al. 2021, eq. (14).
func rankNormalize(chains [][]float64) [][]float64 {
	type entry struct {
		v    float64
		c, i int
	}
	var es []entry
	for c, ch := range chains {
		for i, v := range ch {
			es = append(es, entry{v, c, i})
		}
	}
	sort.SliceStable(es, func(a, b int) bool { return es[a].v < es[b].v })
	out := make([][]float64, len(chains))
	for c, ch := range chains {
		out[c] = make([]float64, len(ch))
	}
	s := float64(len(es))
	for a := 0; a < len(es); {
		b := a
		for b+1 < len(es) && es[b+1].v == es[a].v {
			b++
		}
		r := float64(a+b)/2 + 1 // the average 1-based rank of the tie
		z := math.Sqrt2 * math.Erfinv(2*(r-0.375)/(s+0.25)-1)
		for k := a; k <= b; k++ {
			out[es[k].c][es[k].i] = z
		}
		a = b + 1
	}
	return out
}

// basicRhat returns the potential scale reduction √(var⁺/W) of chains (Gelman et al., BDA3 §11.4):
// W the mean within-chain variance, var⁺ = (n−1)/n·W + B/n with B/n the variance of the chain means.
func basicRhat(chains [][]float64) float64 {
	m := len(chains)
	n := len(chains[0])
	means := make([]float64, m)
	w := 0.0
	for c, ch := range chains {
		means[c] = meanOf(ch)
		w += varianceOf(ch, means[c])
	}
	w /= float64(m)
	b := varianceOf(means, meanOf(means)) // B/n
	if w == 0 {
		return math.NaN()
	}
	return math.Sqrt(((float64(n)-1)/float64(n)*w + b) / w)
}

// essOf returns the effective sample size of m chains of n draws each: m·n/τ with τ = −1 + 2Σρ̂_t from Geyer's
// initial monotone sequence of the combined autocorrelations ρ̂_t = 1 − (W − mean_c acov_c(t))/var⁺ (Vehtari et
// al. 2021, eqs. 10–11; Stan's and the posterior package's estimator, with its improved truncation), τ at least
// 1/log₁₀(mn).
func essOf(chains [][]float64) float64 {
	m := len(chains)
	n := len(chains[0])
	if n < 4 {
		return math.NaN()
	}
	means := make([]float64, m)
	centred := make([][]float64, m)
	for c, ch := range chains {
		means[c] = meanOf(ch)
		centred[c] = make([]float64, n)
		for i, x := range ch {
			centred[c][i] = x - means[c]
		}
	}
	// acov(t): the chains' mean biased autocovariance at lag t.
	acov := func(t int) float64 {
		s := 0.0
		for _, x := range centred {
			a := 0.0
			for i := 0; i+t < n; i++ {
				a += x[i] * x[i+t]
			}
			s += a / float64(n)
		}
		return s / float64(m)
	}
	acov0 := acov(0)
	meanVar := acov0 * float64(n) / float64(n-1) // W
	varPlus := meanVar * float64(n-1) / float64(n)
	if m > 1 {
		varPlus += varianceOf(means, meanOf(means))
	}
	if !(varPlus > 0) {
		return math.NaN()
	}
	rho := make([]float64, n)
	rho[0] = 1
	rhoEven, rhoOdd := 1.0, 1-(meanVar-acov(1))/varPlus
	rho[1] = rhoOdd
	t := 1
	for t < n-4 && rhoEven+rhoOdd > 0 { // Geyer's initial positive sequence
		rhoEven = 1 - (meanVar-acov(t+1))/varPlus
		rhoOdd = 1 - (meanVar-acov(t+2))/varPlus
		if rhoEven+rhoOdd >= 0 {
			rho[t+1], rho[t+2] = rhoEven, rhoOdd
		}
		t += 2
	}
	maxT := t
	if rhoEven > 0 { // the improved estimate's extra term
		rho[maxT+1] = rhoEven
	}
	for t = 1; t <= maxT-2; t += 2 { // Geyer's initial monotone sequence
		if rho[t+1]+rho[t+2] > rho[t-1]+rho[t] {
			rho[t+1] = (rho[t-1] + rho[t]) / 2
			rho[t+2] = rho[t+1]
		}
	}
	sum := 0.0
	for _, r := range rho[:maxT] {
		sum += r
	}
	total := float64(m * n)
	tau := -1 + 2*sum + rho[maxT+1]
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau
}
