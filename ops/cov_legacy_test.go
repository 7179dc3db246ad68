package ops

// The formulation of ops.Stationary before its fused backward pass (gpzoo cd4770c), kept as the reference the
// equivalence tests compare the fused op with: r² by one Gemm of the expansion with near pairs recomputed, each
// gradient on its own (W, row and column sums, one Gemm), near pairs added per chunk.

type legacyPair struct {
	n, m, d   int
	a, at, bt []float64
	na, nb    []float64
	inv       []float64
}

func legacyNewPair(x1, x2 CovInput, ell []float64, rowMajor bool) *legacyPair {
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p := &legacyPair{n: n, m: m, d: d, at: covScratch(n * d), bt: covScratch(m * d), na: covScratch(n), nb: covScratch(m),
		inv: covScratch(d)}
	centre := covZeros(d)
	defer covRelease(centre)
	for i := 0; i < n*d; i += d {
		for k, v := range x1.Data[i : i+d] {
			centre[k] += v
		}
	}
	for k := range centre {
		centre[k] /= float64(n)
		p.inv[k] = 1
		if ell != nil {
			p.inv[k] = 1 / ell[k]
		}
	}
	if rowMajor {
		p.a = covScratch(n * d)
	}
	for i := 0; i < n; i++ {
		for k, v := range x1.Data[i*d : (i+1)*d] {
			v = (v - centre[k]) * p.inv[k]
			p.at[k*n+i] = v
			if rowMajor {
				p.a[i*d+k] = v
			}
		}
	}
	for j := 0; j < m; j++ {
		for k, v := range x2.Data[j*d : (j+1)*d] {
			p.bt[k*m+j] = (v - centre[k]) * p.inv[k]
		}
	}
	covColNorms(p.at, d, n, p.na)
	covColNorms(p.bt, d, m, p.nb)
	return p
}

func (p *legacyPair) release() { covRelease(p.a, p.at, p.bt, p.na, p.nb, p.inv) }

func (p *legacyPair) sqdist(r2 []float64, then func(chunk, lo, hi int)) {
	n, m, d := p.n, p.m, p.d
	covGemm(false, false, -2, p.a, n, d, p.bt, d, m, r2)
	covForRows(covChunks(n, m), n, func(c, lo, hi int) {
		for i := lo; i < hi; i++ {
			row, nai := r2[i*m:(i+1)*m], p.na[i]
			for j, v := range row {
				s := nai + p.nb[j]
				v += s
				if v < covNearRel*s {
					v = p.exactSq(i, j)
				}
				if v < 0 {
					v = 0
				}
				row[j] = v
			}
		}
		if then != nil {
			then(c, lo, hi)
		}
	})
}

func (p *legacyPair) exactSq(i, j int) float64 {
	s := 0.0
	for k := 0; k < p.d; k++ {
		t := p.at[k*p.n+i] - p.bt[k*p.m+j]
		s += t * t
	}
	return s
}

func (p *legacyPair) near(i, j int, r2 float64) bool { return r2 < covNearRel*(p.na[i]+p.nb[j]) }

func (p *legacyPair) weighted(w, dA, dB, sq []float64) {
	n, m, d := p.n, p.m, p.d
	rs, cs := covScratch(n), covScratch(m)
	defer covRelease(rs, cs)
	clear(cs)
	for i := 0; i < n; i++ {
		s := 0.0
		for j, v := range w[i*m : (i+1)*m] {
			s += v
			cs[j] += v
		}
		rs[i] = s
	}
	if dA != nil || sq != nil {
		wbt := covScratch(d * n)
		defer covRelease(wbt)
		covGemm(false, true, 1, p.bt, d, m, w, n, m, wbt)
		for k := 0; k < d; k++ {
			ak, wk := p.at[k*n:(k+1)*n], wbt[k*n:(k+1)*n]
			if dA != nil {
				for i, av := range ak {
					dA[i*d+k] = rs[i]*av - wk[i]
				}
			}
			if sq != nil {
				s := 0.0
				for i, av := range ak {
					s += av * (rs[i]*av - 2*wk[i])
				}
				for j, bv := range p.bt[k*m : (k+1)*m] {
					s += cs[j] * bv * bv
				}
				sq[k] = s
			}
		}
	}
	if dB != nil {
		wat := covScratch(d * m)
		defer covRelease(wat)
		covGemm(false, false, 1, p.at, d, n, w, n, m, wat)
		for k := 0; k < d; k++ {
			for j, bv := range p.bt[k*m : (k+1)*m] {
				dB[j*d+k] = cs[j]*bv - wat[k*m+j]
			}
		}
	}
}

func legacyNearGrad(wrt int, p *legacyPair, i, j int, wij float64, extra []float64) {
	d := p.d
	for k := 0; k < d; k++ {
		t := p.at[k*p.n+i] - p.bt[k*p.m+j]
		switch wrt {
		case covWrtX1:
			extra[i*d+k] += 2 * wij * t * p.inv[k]
		case covWrtX2:
			extra[j*d+k] -= 2 * wij * t * p.inv[k]
		default:
			extra[k] -= 2 * wij * t * t * p.inv[k]
		}
	}
}

func legacyExtra(h []CovInput) []float64 {
	var e []float64
	for _, x := range h[2:] {
		e = append(e, x.Scalar())
	}
	return e
}

// legacyMatrix is the former Stationary.Matrix.
func legacyMatrix(s *Stationary, x1, x2 CovInput, h []CovInput, s2 float64, out []float64) {
	p := legacyNewPair(x1, x2, h[1].Data, true)
	defer p.release()
	m, extra := x2.Rows(), legacyExtra(h)
	p.sqdist(out, func(_, lo, hi int) { s.Profile(s2, extra, out[lo*m:hi*m]) })
}

// legacyMatrixGrad is the former Stationary.MatrixGrad.
func legacyMatrixGrad(s *Stationary, wrt int, x1, x2 CovInput, h []CovInput, k, g []float64, dst []float64) {
	s2, extra := h[0].Scalar(), legacyExtra(h)
	if wrt == covWrtH0 {
		dst[0] = covVarianceGrad(g, k, s2, func(u []float64) { legacyMatrix(s, x1, x2, h, 1, u) })
		return
	}
	n, m, d := x1.Rows(), x2.Rows(), x1.Cols()
	p := legacyNewPair(x1, x2, h[1].Data, true)
	w := covScratch(n * m)
	defer func() { p.release(); covRelease(w) }()
	chunks := covChunks(n, m)
	if wrt >= covWrtH0+2 {
		j := wrt - covWrtH0 - 2
		part := make([]float64, chunks)
		p.sqdist(w, func(c, lo, hi int) {
			part[c] = s.ExtraGrad(j, extra, w[lo*m:hi*m], k[lo*m:hi*m], g[lo*m:hi*m])
		})
		dst[0] = 0
		for _, v := range part {
			dst[0] += v
		}
		return
	}
	extras := make([][]float64, chunks)
	if !s.NeedR2 {
		s.Slope(extra, nil, k, g, w)
	} else {
		p.sqdist(w, func(c, lo, hi int) {
			tmp := make([]float64, m)
			for i := lo; i < hi; i++ {
				row := w[i*m : (i+1)*m]
				s.Slope(extra, row, k[i*m:(i+1)*m], g[i*m:(i+1)*m], tmp)
				for j, r2 := range row {
					if !p.near(i, j, r2) {
						row[j] = tmp[j]
						continue
					}
					row[j] = 0
					if tmp[j] != 0 {
						if extras[c] == nil {
							extras[c] = make([]float64, len(dst))
						}
						legacyNearGrad(wrt, p, i, j, tmp[j], extras[c])
					}
				}
			}
		})
	}
	switch wrt {
	case covWrtX1, covWrtX2:
		if wrt == covWrtX1 {
			p.weighted(w, dst, nil, nil)
		} else {
			p.weighted(w, nil, dst, nil)
		}
		for i := range dst {
			dst[i] *= 2 * p.inv[i%d]
		}
	case covWrtH0 + 1:
		p.weighted(w, nil, nil, dst)
		for i := range dst {
			dst[i] *= -2 * p.inv[i]
		}
	}
	for _, e := range extras {
		for i, v := range e {
			dst[i] += v
		}
	}
}
