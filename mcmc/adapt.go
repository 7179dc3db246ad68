package mcmc

import "math"

// dualAveraging adapts log ε so that the mean acceptance statistic approaches delta: Nesterov's dual averaging as
// Hoffman & Gelman 2014 (§3.2, Algorithm 5) and Stan use it, with shrinkage point mu = log(10 ε₀), gamma 0.05,
// t0 10 and kappa 0.75.
type dualAveraging struct {
	mu, delta, gamma, kappa, t0 float64
	counter                     float64
	sBar, xBar                  float64
}

func (a *dualAveraging) restart() { a.counter, a.sBar, a.xBar = 0, 0, 0 }

// learn returns the next step size after an iteration with acceptance statistic accept.
func (a *dualAveraging) learn(accept float64) float64 {
	a.counter++
	accept = math.Min(1, accept)
	eta := 1 / (a.counter + a.t0)
	a.sBar = (1-eta)*a.sBar + eta*(a.delta-accept)
	x := a.mu - a.sBar*math.Sqrt(a.counter)/a.gamma
	xEta := math.Pow(a.counter, -a.kappa)
	a.xBar = (1-xEta)*a.xBar + xEta*x
	return math.Exp(x)
}

// final returns the step size of the sampling phase: exp of the averaged iterate.
func (a *dualAveraging) final() float64 { return math.Exp(a.xBar) }

// windows schedules the metric's adaptation as Stan does: no estimation during an initial buffer, then slow
// windows of doubling length (the last one stretched to the terminal buffer), then a terminal buffer; with fewer
// warmup iterations than the three default lengths need, 15% / 75% / 10% of the warmup; none below 20.
type windows struct {
	warmup, initBuf, termBuf, baseWin int
	counter, size, next               int
	enabled                           bool
}

func newWindows(warmup, initBuf, termBuf, baseWin int) *windows {
	w := &windows{warmup: warmup, initBuf: initBuf, termBuf: termBuf, baseWin: baseWin, enabled: warmup >= 20}
	if w.enabled && initBuf+baseWin+termBuf > warmup {
		w.initBuf = int(0.15 * float64(warmup))
		w.termBuf = int(0.1 * float64(warmup))
		w.baseWin = warmup - (w.initBuf + w.termBuf)
	}
	w.counter, w.size = 0, w.baseWin
	w.next = w.initBuf + w.size - 1
	return w
}

// inWindow reports whether the current iteration's draw feeds the variance estimate.
func (w *windows) inWindow() bool {
	return w.enabled && w.counter >= w.initBuf && w.counter < w.warmup-w.termBuf && w.counter != w.warmup
}

// endOfWindow reports whether the current iteration closes a slow window.
func (w *windows) endOfWindow() bool {
	return w.enabled && w.counter == w.next && w.counter != w.warmup
}

// computeNext lays out the next slow window: twice as long, stretched to the terminal buffer when the one after
// would not fit.
func (w *windows) computeNext() {
	if w.next == w.warmup-w.termBuf-1 {
		return
	}
	w.size *= 2
	w.next = w.counter + w.size
	if w.next != w.warmup-w.termBuf-1 {
		if boundary := w.next + 2*w.size; boundary >= w.warmup-w.termBuf {
			w.next = w.warmup - w.termBuf - 1
		}
	}
}

// welford accumulates the per-coordinate mean and variance of draws.
type welford struct {
	n     float64
	mean  []float64
	m2    []float64
	delta []float64
}

func newWelford(d int) *welford {
	return &welford{mean: make([]float64, d), m2: make([]float64, d), delta: make([]float64, d)}
}

func (e *welford) restart() {
	e.n = 0
	clear(e.mean)
	clear(e.m2)
}

func (e *welford) add(q []float64) {
	e.n++
	for i, x := range q {
		e.delta[i] = x - e.mean[i]
		e.mean[i] += e.delta[i] / e.n
		e.m2[i] += (x - e.mean[i]) * e.delta[i]
	}
}

// metricAdapter learns the diagonal inverse metric from the draws of the slow windows.
type metricAdapter struct {
	w   *windows
	est *welford
}

// learn feeds the draw q of the current warmup iteration and, at the end of a slow window, writes the regularised
// variance estimate into invM and reports true.
func (a *metricAdapter) learn(invM, q []float64) bool {
	if a.w.inWindow() {
		a.est.add(q)
	}
	if a.w.endOfWindow() {
		a.w.computeNext()
		n := a.est.n
		if n > 1 {
			for i := range invM {
				v := a.est.m2[i] / (n - 1)
				invM[i] = (n/(n+5))*v + 1e-3*(5/(n+5))
			}
		}
		a.est.restart()
		a.w.counter++
		return true
	}
	a.w.counter++
	return false
}
