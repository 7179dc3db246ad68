package gp

import (
	"fmt"

	"github.com/gpzoo/gpzoo/graph"
)

// GaussianQ is the variational distribution q(u) = Π_p N(u_p | m_p, S_p) shared by every layer family: a mean
// Mu [M,P] and, per output p, a lower-triangular factor L_p of S_p = L_p L_pᵀ ([M,M], LowerTriangular
// transform) or, with Diag, a positive diagonal [M] (mean-field). Whether u is whitened is the layer's business.
type GaussianQ struct {
	Mu   *graph.Param
	Sqrt []*graph.Param // one per output: [M,M] lower triangular, or [M] positive when Diag
	Diag bool
	m, p int
}

// QConfig configures NewGaussianQ. Zero values mean defaults.
type QConfig struct {
	// Name prefixes the parameters' names (default "q").
	Name string
	// Diag makes each S_p diagonal.
	Diag bool
	// SqrtScale is the initial factor: L_p = SqrtScale·I (default 1: q equals the whitened prior).
	SqrtScale float64
	// Mean is the initial Mu (row-major [M,P]); nil means zeros.
	Mean []float64
}

// NewGaussianQ returns q(u) for M inducing points and P outputs.
func NewGaussianQ(m, p int, c QConfig) (*GaussianQ, error) {
	if m <= 0 || p <= 0 {
		return nil, configErr("GaussianQ: M and P must be positive, got %d and %d", m, p)
	}
	name := c.Name
	if name == "" {
		name = "q"
	}
	mean := c.Mean
	if mean == nil {
		mean = make([]float64, m*p)
	}
	q := &GaussianQ{Diag: c.Diag, m: m, p: p}
	var err error
	if q.Mu, err = graph.NewParam(name+".mu", mean, graph.Identity{}, m, p); err != nil {
		return nil, err
	}
	scale := orDefault(c.SqrtScale, 1)
	for k := 0; k < p; k++ {
		var sp *graph.Param
		if c.Diag {
			d := make([]float64, m)
			for i := range d {
				d[i] = scale
			}
			sp, err = graph.NewParam(fmt.Sprintf("%s.sqrt%d", name, k), d, graph.Positive{}, m)
		} else {
			l := make([]float64, m*m)
			for i := 0; i < m; i++ {
				l[i*m+i] = scale
			}
			sp, err = graph.NewParam(fmt.Sprintf("%s.sqrt%d", name, k), l, graph.LowerTriangular{}, m, m)
		}
		if err != nil {
			return nil, err
		}
		q.Sqrt = append(q.Sqrt, sp)
	}
	return q, nil
}

// M returns the number of inducing points; P the number of outputs.
func (q *GaussianQ) M() int { return q.m }

// P returns the number of outputs.
func (q *GaussianQ) P() int { return q.p }

// MeanNode returns Mu [M,P] in g.
func (q *GaussianQ) MeanNode(g *graph.Graph) *graph.Node { return g.Param(q.Mu) }

// SqrtNode returns output p's factor L_p [M,M] (lower triangular) in g.
func (q *GaussianQ) SqrtNode(g *graph.Graph, p int) *graph.Node {
	s := g.Param(q.Sqrt[p])
	if q.Diag {
		return g.AddDiag(g.Zeros(q.Sqrt[p].Name()+".zeros", q.m, q.m), s)
	}
	return s
}

// Params returns Mu and the factors.
func (q *GaussianQ) Params() []*graph.Param { return append([]*graph.Param{q.Mu}, q.Sqrt...) }

// MeanValue returns a copy of Mu's value [M,P] (row-major).
func (q *GaussianQ) MeanValue() []float64 { return q.Mu.Value() }

// SqrtValue returns output p's factor as a dense row-major [M,M] lower-triangular matrix.
func (q *GaussianQ) SqrtValue(p int) []float64 {
	v := q.Sqrt[p].Value()
	if !q.Diag {
		return v
	}
	l := make([]float64, q.m*q.m)
	for i, d := range v {
		l[i*q.m+i] = d
	}
	return l
}

// SetSqrt sets output p's factor from a dense lower-triangular [M,M] value (its diagonal only when Diag).
func (q *GaussianQ) SetSqrt(p int, l []float64) error {
	if len(l) != q.m*q.m {
		return configErr("GaussianQ.SetSqrt: %d values, want %d", len(l), q.m*q.m)
	}
	if !q.Diag {
		return q.Sqrt[p].Set(l)
	}
	d := make([]float64, q.m)
	for i := range d {
		d[i] = l[i*q.m+i]
	}
	return q.Sqrt[p].Set(d)
}
