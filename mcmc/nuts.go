package mcmc

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// point is a state of the Hamiltonian system: position q, momentum p, log π(q) and its gradient.
type point struct {
	q, p, grad []float64
	logp       float64
}

func newPoint(d int) point {
	return point{q: make([]float64, d), p: make([]float64, d), grad: make([]float64, d)}
}

// set copies o into z (same dimension).
func (z *point) set(o *point) {
	copy(z.q, o.q)
	copy(z.p, o.p)
	copy(z.grad, o.grad)
	z.logp = o.logp
}

// hamiltonian integrates the dynamics of H(q, p) = −log π(q) + ½ pᵀM⁻¹p for a diagonal inverse metric M⁻¹.
type hamiltonian struct {
	d     Density
	invM  []float64 // the diagonal of M⁻¹
	evals int       // gradient evaluations
}

// energy returns H(z) (+Inf where log π is not finite).
func (h *hamiltonian) energy(z *point) float64 {
	if math.IsNaN(z.logp) || math.IsInf(z.logp, 0) {
		return math.Inf(1)
	}
	k := 0.0
	for i, p := range z.p {
		k += h.invM[i] * p * p
	}
	return -z.logp + 0.5*k
}

// eval sets z.logp and z.grad at z.q; a non-finite log density or gradient becomes −Inf.
func (h *hamiltonian) eval(z *point) error {
	h.evals++
	lp, err := h.d.LogDensity(z.q, z.grad)
	if err != nil {
		return err
	}
	for _, g := range z.grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			lp = math.Inf(-1)
			break
		}
	}
	if math.IsNaN(lp) {
		lp = math.Inf(-1)
	}
	z.logp = lp
	return nil
}

// leapfrog moves z by one step of size eps (negative: backward in time): half a momentum step, a full position
// step, half a momentum step (the velocity Verlet integrator, symplectic and reversible).
func (h *hamiltonian) leapfrog(z *point, eps float64) error {
	for i := range z.p {
		z.p[i] += 0.5 * eps * z.grad[i]
	}
	for i := range z.q {
		z.q[i] += eps * h.invM[i] * z.p[i]
	}
	if err := h.eval(z); err != nil {
		return err
	}
	if math.IsInf(z.logp, -1) { // the gradient there is meaningless: the state is discarded as divergent
		return nil
	}
	for i := range z.p {
		z.p[i] += 0.5 * eps * z.grad[i]
	}
	return nil
}

// sampleMomentum draws p ~ N(0, M).
func (h *hamiltonian) sampleMomentum(z *point, rng *rand.Rand) {
	for i := range z.p {
		z.p[i] = rng.NormFloat64() / math.Sqrt(h.invM[i])
	}
}

// sharp writes M⁻¹p into dst.
func (h *hamiltonian) sharp(dst, p []float64) {
	for i := range p {
		dst[i] = h.invM[i] * p[i]
	}
}

// Transition is what one NUTS iteration did (Stan's sampler diagnostics).
type Transition struct {
	// AcceptStat is the mean Metropolis acceptance probability over the trajectory's states (the statistic the
	// step-size adaptation targets).
	AcceptStat float64
	// StepSize is the step size of the iteration.
	StepSize float64
	// TreeDepth is the depth of the final trajectory (2^TreeDepth − 1 leapfrog steps when it completed).
	TreeDepth int
	// Leapfrogs is the number of leapfrog steps (gradient evaluations) taken.
	Leapfrogs int
	// Divergent is set when the energy error of a state exceeded MaxDeltaH (or the density vanished there): the
	// integrator left the typical set, and the trajectory was cut short.
	Divergent bool
	// Energy is the Hamiltonian at the draw.
	Energy float64
	// LogDensity is log π at the draw.
	LogDensity float64
}

// nuts is one chain's No-U-Turn sampler: Stan's base_nuts transition (multinomial sampling, biased progressive
// sampling at the top level, the generalised no-U-turn criterion with the extra checks across subtrees).
type nuts struct {
	h         *hamiltonian
	rng       *rand.Rand
	eps       float64
	maxDepth  int
	maxDeltaH float64
	z         point // the integrator's current state

	nLeapfrog    int
	sumMetroProb float64
	divergent    bool
	err          error
}

func newNUTS(d Density, rng *rand.Rand, o Options) *nuts {
	n := d.Dim()
	invM := make([]float64, n)
	for i := range invM {
		invM[i] = 1
	}
	return &nuts{h: &hamiltonian{d: d, invM: invM}, rng: rng, eps: o.StepSize, maxDepth: o.MaxDepth, maxDeltaH: o.MaxDeltaH, z: newPoint(n)}
}

func (s *nuts) dim() int { return len(s.z.q) }

// criterion is the generalised no-U-turn criterion between two trajectory ends with sharp momenta pMinus, pPlus
// and summed momentum rho (Betancourt 2017, §A.4.2).
func criterion(pSharpMinus, pSharpPlus, rho []float64) bool {
	return dot(pSharpPlus, rho) > 0 && dot(pSharpMinus, rho) > 0
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func addTo(dst, a, b []float64) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func logSumExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a > b {
		return a + math.Log1p(math.Exp(b-a))
	}
	return b + math.Log1p(math.Exp(a-b))
}

// transition draws the next state from init (whose logp and grad are current) and reports the iteration.
func (s *nuts) transition(init *point) (point, Transition, error) {
	d := s.dim()
	s.z.set(init)
	s.h.sampleMomentum(&s.z, s.rng)
	H0 := s.h.energy(&s.z)

	zFwd, zBck, zSample, zPropose := newPoint(d), newPoint(d), newPoint(d), newPoint(d)
	for _, z := range []*point{&zFwd, &zBck, &zSample, &zPropose} {
		z.set(&s.z)
	}
	vec := func() []float64 { return make([]float64, d) }
	pFwdFwd, pFwdBck, pBckFwd, pBckBck := vec(), vec(), vec(), vec()
	sFwdFwd, sFwdBck, sBckFwd, sBckBck := vec(), vec(), vec(), vec()
	for _, p := range [][]float64{pFwdFwd, pFwdBck, pBckFwd, pBckBck} {
		copy(p, s.z.p)
	}
	s.h.sharp(sFwdFwd, s.z.p)
	for _, p := range [][]float64{sFwdBck, sBckFwd, sBckBck} {
		copy(p, sFwdFwd)
	}
	rho, rhoFwd, rhoBck, rhoExt := vec(), vec(), vec(), vec()
	copy(rho, s.z.p)

	logSumWeight := 0.0 // log(exp(H0 − H0))
	s.nLeapfrog, s.sumMetroProb, s.divergent, s.err = 0, 0, false, nil
	depth := 0
	for depth < s.maxDepth {
		clear(rhoFwd)
		clear(rhoBck)
		logSumWeightSubtree := math.Inf(-1)
		var valid bool
		if s.rng.Float64() > 0.5 { // extend forward: the old trajectory becomes the backward subtree
			s.z.set(&zFwd)
			copy(rhoBck, rho)
			copy(pBckFwd, pFwdFwd)
			copy(sBckFwd, sFwdFwd)
			valid = s.buildTree(depth, &zPropose, sFwdBck, sFwdFwd, rhoFwd, pFwdBck, pFwdFwd, H0, 1, &logSumWeightSubtree)
			zFwd.set(&s.z)
		} else { // extend backward: the old trajectory becomes the forward subtree
			s.z.set(&zBck)
			copy(rhoFwd, rho)
			copy(pFwdBck, pBckBck)
			copy(sFwdBck, sBckBck)
			valid = s.buildTree(depth, &zPropose, sBckFwd, sBckBck, rhoBck, pBckFwd, pBckBck, H0, -1, &logSumWeightSubtree)
			zBck.set(&s.z)
		}
		if s.err != nil {
			return point{}, Transition{}, s.err
		}
		if !valid {
			break
		}
		depth++
		// Biased progressive sampling: move to the new subtree with probability min(1, w_new/w_old).
		if logSumWeightSubtree > logSumWeight {
			zSample.set(&zPropose)
		} else if s.rng.Float64() < math.Exp(logSumWeightSubtree-logSumWeight) {
			zSample.set(&zPropose)
		}
		logSumWeight = logSumExp(logSumWeight, logSumWeightSubtree)
		addTo(rho, rhoBck, rhoFwd)
		persist := criterion(sBckBck, sFwdFwd, rho)
		addTo(rhoExt, rhoBck, pFwdBck)
		persist = persist && criterion(sBckBck, sFwdBck, rhoExt)
		addTo(rhoExt, rhoFwd, pBckFwd)
		persist = persist && criterion(sBckFwd, sFwdFwd, rhoExt)
		if !persist {
			break
		}
	}
	t := Transition{StepSize: s.eps, TreeDepth: depth, Leapfrogs: s.nLeapfrog, Divergent: s.divergent,
		Energy: s.h.energy(&zSample), LogDensity: zSample.logp}
	if s.nLeapfrog > 0 {
		t.AcceptStat = s.sumMetroProb / float64(s.nLeapfrog)
	}
	return zSample, t, nil
}

// buildTree extends the trajectory from s.z by 2^depth leapfrog steps in direction sign, proposing a state of
// the new subtree into zPropose (multinomially, by the states' weights exp(H0 − H)), and reports whether the
// subtree is valid: no divergence and no U-turn within it. It writes the sharp momenta and momenta at the
// subtree's beginning and end, and adds the subtree's momenta to rho.
func (s *nuts) buildTree(depth int, zPropose *point, sBeg, sEnd, rho, pBeg, pEnd []float64, H0, sign float64, logSumWeight *float64) bool {
	if depth == 0 {
		if err := s.h.leapfrog(&s.z, sign*s.eps); err != nil {
			s.err = err
			return false
		}
		s.nLeapfrog++
		h := s.h.energy(&s.z)
		if math.IsNaN(h) {
			h = math.Inf(1)
		}
		if h-H0 > s.maxDeltaH {
			s.divergent = true
		}
		*logSumWeight = logSumExp(*logSumWeight, H0-h)
		if H0-h > 0 {
			s.sumMetroProb++
		} else {
			s.sumMetroProb += math.Exp(H0 - h)
		}
		zPropose.set(&s.z)
		for i, p := range s.z.p {
			rho[i] += p
		}
		s.h.sharp(sBeg, s.z.p)
		copy(sEnd, sBeg)
		copy(pBeg, s.z.p)
		copy(pEnd, s.z.p)
		return !s.divergent
	}
	d := s.dim()
	// The first half.
	logSumWeightInit := math.Inf(-1)
	pInitEnd, sInitEnd, rhoInit := make([]float64, d), make([]float64, d), make([]float64, d)
	if !s.buildTree(depth-1, zPropose, sBeg, sInitEnd, rhoInit, pBeg, pInitEnd, H0, sign, &logSumWeightInit) {
		return false
	}
	// The second half.
	zProposeFinal := newPoint(d)
	zProposeFinal.set(&s.z)
	logSumWeightFinal := math.Inf(-1)
	pFinalBeg, sFinalBeg, rhoFinal := make([]float64, d), make([]float64, d), make([]float64, d)
	if !s.buildTree(depth-1, &zProposeFinal, sFinalBeg, sEnd, rhoFinal, pFinalBeg, pEnd, H0, sign, &logSumWeightFinal) {
		return false
	}
	// Multinomial sampling between the halves (uniform progressive sampling within a subtree).
	logSumWeightSubtree := logSumExp(logSumWeightInit, logSumWeightFinal)
	*logSumWeight = logSumExp(*logSumWeight, logSumWeightSubtree)
	if logSumWeightFinal > logSumWeightSubtree {
		zPropose.set(&zProposeFinal)
	} else if s.rng.Float64() < math.Exp(logSumWeightFinal-logSumWeightSubtree) {
		zPropose.set(&zProposeFinal)
	}
	rhoSubtree := make([]float64, d)
	addTo(rhoSubtree, rhoInit, rhoFinal)
	for i, v := range rhoSubtree {
		rho[i] += v
	}
	persist := criterion(sBeg, sEnd, rhoSubtree)
	rhoExt := make([]float64, d)
	addTo(rhoExt, rhoInit, pFinalBeg)
	persist = persist && criterion(sBeg, sFinalBeg, rhoExt)
	addTo(rhoExt, rhoFinal, pInitEnd)
	persist = persist && criterion(sInitEnd, sEnd, rhoExt)
	return persist
}

// initStepSize is Stan's heuristic for a first step size from z (whose logp and grad are current): double or
// halve ε until the energy change of one leapfrog step from fresh momenta crosses log 0.8.
func (s *nuts) initStepSize(z *point) error {
	if s.eps == 0 || s.eps > 1e7 || math.IsNaN(s.eps) {
		return nil
	}
	d := s.dim()
	w := newPoint(d)
	step := func() (float64, error) {
		w.set(z)
		s.h.sampleMomentum(&w, s.rng)
		H0 := s.h.energy(&w)
		if err := s.h.leapfrog(&w, s.eps); err != nil {
			return 0, err
		}
		h := s.h.energy(&w)
		if math.IsNaN(h) {
			h = math.Inf(1)
		}
		return H0 - h, nil
	}
	dH, err := step()
	if err != nil {
		return err
	}
	direction := -1.0
	if dH > math.Log(0.8) {
		direction = 1
	}
	for {
		dH, err := step()
		if err != nil {
			return err
		}
		if direction == 1 && !(dH > math.Log(0.8)) || direction == -1 && !(dH < math.Log(0.8)) {
			return nil
		}
		if direction == 1 {
			s.eps *= 2
		} else {
			s.eps *= 0.5
		}
		if s.eps > 1e7 {
			return fmt.Errorf("%w: the step size grew beyond 1e7 (is the density improper, flat in some direction?)", ErrStepSize)
		}
		if s.eps == 0 {
			return fmt.Errorf("%w: the step size fell to 0 (is the density or its gradient wrong?)", ErrStepSize)
		}
	}
}
