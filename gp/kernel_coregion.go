package gp

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/ops"
)

// KindCoregion is the Spec kind of Coregion.
const KindCoregion = "kernel/coregion"

// DefaultTasks is the number of tasks of a coregion kernel built without it (CoregionConfig.Tasks zero, or the
// family without training inputs to count them in).
const DefaultTasks = 2

// Coregion is the coregionalisation kernel over an integer task column t ∈ {0, …, P−1} (GPflow's Coregion;
// Álvarez, Rosasco & Lawrence 2012, "Kernels for vector-valued functions: a review", sec. 4.2, the intrinsic
// coregionalisation model): k(t, t') = B[t, t'] with B = W Wᵀ + diag κ, W [P, R] trainable, κ > 0. Its product
// with a kernel k_x of the other columns, k_x(x, x')·B[t, t'], is the ICM covariance between output t at x and
// output t' at x' (eq. 4.5; B is their Bᵢ).
//
// The task column must hold integers (a non-integer or out-of-range value ends the run with a *CategoryError,
// checked before every forward pass) and must never be standardised: CategoricalInputs reports it, for the
// callers that standardise inputs. The kernel's gradient with respect to its inputs is zero.
type Coregion struct {
	cov   coregionCov
	dim   int
	W     *graph.Param // [P, R]
	Kappa *graph.Param // [P], Positive
}

// CoregionConfig configures NewCoregion. Zero values mean defaults.
type CoregionConfig struct {
	// Name prefixes the Params' names (default "coregion"): "<Name>.W", "<Name>.kappa".
	Name string
	// InputDim is D (default 1); the kernel reads column Column (0-based) only.
	InputDim int
	Column   int
	// Tasks is P (default DefaultTasks), Rank is R (default 1; 1 ≤ R ≤ P).
	Tasks, Rank int
	// W [P·R] row-major and Kappa [P] are the initial values (nil: W_pr = 0.1·cos(π r (p + ½)/P), whose first
	// column is GPflow's 0.1 and whose columns are orthogonal, so that no two start alike; κ = 1).
	W, Kappa []float64
}

// NewCoregion returns a coregion kernel.
func NewCoregion(c CoregionConfig) (*Coregion, error) {
	d := c.InputDim
	if d == 0 {
		d = 1
	}
	p, r := c.Tasks, c.Rank
	if p == 0 {
		p = DefaultTasks
	}
	if r == 0 {
		r = 1
	}
	switch {
	case d < 0:
		return nil, configErr("Coregion kernel: InputDim must be positive, got %d", d)
	case c.Column < 0 || c.Column >= d:
		return nil, configErr("Coregion kernel: task column %d outside [0, %d)", c.Column, d)
	case p < 1 || r < 1 || r > p:
		return nil, configErr("Coregion kernel: want 1 ≤ rank ≤ tasks, got %d tasks, rank %d", p, r)
	}
	if err := CheckSpecDims("Coregion kernel", p, r); err != nil {
		return nil, err
	}
	w, kappa := c.W, c.Kappa
	if w == nil {
		w = make([]float64, p*r)
		for i := range p {
			for j := range r {
				w[i*r+j] = 0.1 * math.Cos(math.Pi*float64(j)*(float64(i)+0.5)/float64(p))
			}
		}
	}
	if kappa == nil {
		kappa = make([]float64, p)
		for i := range kappa {
			kappa[i] = 1
		}
	}
	if len(w) != p*r || len(kappa) != p {
		return nil, configErr("Coregion kernel: %d initial W and %d κ values for %d tasks, rank %d", len(w), len(kappa), p, r)
	}
	name := c.Name
	if name == "" {
		name = "coregion"
	}
	k := &Coregion{cov: coregionCov{p: p, r: r, col: c.Column}, dim: d}
	var err error
	if k.W, err = graph.NewParam(name+".W", w, nil, p, r); err != nil {
		return nil, err
	}
	if k.Kappa, err = graph.NewParam(name+".kappa", kappa, graph.Positive{}, p); err != nil {
		return nil, err
	}
	return k, nil
}

// Tasks returns P, Rank R and Column the task column.
func (k *Coregion) Tasks() int  { return k.cov.p }
func (k *Coregion) Rank() int   { return k.cov.r }
func (k *Coregion) Column() int { return k.cov.col }

// B returns the current coregionalisation matrix W Wᵀ + diag κ [P·P], row-major.
func (k *Coregion) B() []float64 {
	return k.cov.matrixB(k.W.Value(), k.Kappa.Value())
}

// K returns B[t_i, t'_j] [N,M].
func (k *Coregion) K(x1, x2 *graph.Node) *graph.Node {
	g := x1.Graph()
	return g.CovMatrix(k.cov, x1, x2, g.Param(k.W), g.Param(k.Kappa))
}

// KDiag returns B[t_i, t_i] [N].
func (k *Coregion) KDiag(x *graph.Node) *graph.Node {
	g := x.Graph()
	return g.CovDiag(k.cov, x, g.Param(k.W), g.Param(k.Kappa))
}

// InputDim returns D.
func (k *Coregion) InputDim() int { return k.dim }

// Params returns W and κ.
func (k *Coregion) Params() []*graph.Param { return []*graph.Param{k.W, k.Kappa} }

func (k *Coregion) String() string {
	return fmt.Sprintf("Coregion(tasks=%d, rank=%d, column=%d, κ=%.4g)", k.cov.p, k.cov.r, k.cov.col, k.Kappa.Value())
}

// CategoricalInputs reports the task column.
func (k *Coregion) CategoricalInputs() []CategoricalInput {
	return []CategoricalInput{{Column: k.cov.col, Levels: k.cov.p}}
}

// coregionSpec is the Config of Coregion.
type coregionSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
	Column   int    `json:"column"`
	Tasks    int    `json:"tasks"`
	Rank     int    `json:"rank"`
}

// Spec describes the kernel: the Params' name prefix, D, the task column, P and R.
func (k *Coregion) Spec() (Spec, error) {
	name, err := paramPrefix(k.W, ".W")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(KindCoregion, coregionSpec{Name: name, InputDim: k.dim, Column: k.cov.col, Tasks: k.cov.p, Rank: k.cov.r})
}

func init() {
	RegisterKind(KindCoregion, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c coregionSpec
		if err := decodeLeaf(KindCoregion, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(KindCoregion, c.InputDim, c.Tasks, c.Rank); err != nil {
			return nil, err
		}
		return NewCoregion(CoregionConfig{Name: c.Name, InputDim: c.InputDim, Column: c.Column, Tasks: c.Tasks, Rank: c.Rank})
	})
	RegisterKernel(KernelFamily{Name: "coregion", Kind: KindCoregion,
		Doc: "B[t,t′] = (WWᵀ + diag κ)[t,t′] over an integer task column t (the last column unless chosen: coregion[j]); P tasks counted in the training inputs, rank 1; never standardised",
		New: func(o KernelOptions) (Kernel, error) {
			if o.InputDim <= 0 {
				return nil, configErr("Coregion kernel: InputDim must be positive, got %d", o.InputDim)
			}
			return NewCoregion(CoregionConfig{Name: o.Name, InputDim: o.InputDim, Column: o.InputDim - 1, Tasks: countTasks(o, o.InputDim-1)})
		}})
}

// countTasks returns 1 + the largest task index (non-negative integer) in column col of o.Inputs, or DefaultTasks
// if there is none. Other values are skipped: the kernel refuses them when it runs (and callers that validate
// the data first, gp.CheckCategorical, then name the first of them).
func countTasks(o KernelOptions, col int) int {
	d := o.InputDim
	if d <= 0 || len(o.Inputs) < d || len(o.Inputs)%d != 0 {
		return DefaultTasks
	}
	top := -1.0
	for i := col; i < len(o.Inputs); i += d {
		if v := o.Inputs[i]; v >= 0 && v == math.Trunc(v) && v < MaxSpecEntries {
			top = max(top, v)
		}
	}
	if top < 0 {
		return DefaultTasks
	}
	return int(top) + 1
}

// ---------------------------------------------------------------------------------------------------------------
// Coregion: K_ij = B[t_i, t'_j], B = W Wᵀ + diag κ (P×P, formed once per call: P is small).
//
// Backward with S = Σ_ij G_ij e_{t_i} e_{t'_j}ᵀ (G scattered into P×P):
//
//	dW = (S + Sᵀ) W,   dκ_p = S_pp,   dx1 = dx2 = 0 (the task column is discrete).

// coregionCov is the coregion covariance function: hyperparameters W [P,R] and κ [P]; it reads column col.
type coregionCov struct{ p, r, col int }

// Name includes P, R and the column: they change the values.
func (c coregionCov) Name() string { return fmt.Sprintf("Coregion(P=%d,R=%d,col=%d)", c.p, c.r, c.col) }

// Hypers returns W [P,R] and kappa [P].
func (c coregionCov) Hypers() []ops.CovHyper {
	return []ops.CovHyper{{Name: "W", Shape: []int{c.p, c.r}}, {Name: "kappa", Shape: []int{c.p}}}
}

// CheckInputs returns a *CategoryError for a task value that is not an integer in [0, P).
func (c coregionCov) CheckInputs(x ops.CovInput, _ []ops.CovInput) error {
	if x.Cols() <= c.col {
		return &ops.ShapeError{Op: c.Name(), Want: fmt.Sprintf("inputs with more than %d columns", c.col), Got: fmt.Sprint(x.Shape)}
	}
	return CheckCategorical(c.Name(), x.Data[:x.Rows()*x.Cols()], x.Cols(), []CategoricalInput{{Column: c.col, Levels: c.p}})
}

// matrixB returns W Wᵀ + diag κ [P·P].
func (c coregionCov) matrixB(w, kappa []float64) []float64 {
	b := make([]float64, c.p*c.p)
	for i := range c.p {
		for j := range c.p {
			s := 0.0
			for q := range c.r {
				s += w[i*c.r+q] * w[j*c.r+q]
			}
			b[i*c.p+j] = s
		}
		b[i*c.p+i] += kappa[i]
	}
	return b
}

// tasks returns the task indices of x (−1 for an invalid value: CheckInputs has refused it before any pass).
func (c coregionCov) tasks(x ops.CovInput) []int {
	n, d := x.Rows(), x.Cols()
	t := make([]int, n)
	for i := range t {
		t[i] = -1
		if c.col < d {
			if v := x.Data[i*d+c.col]; validCategory(v, c.p) {
				t[i] = int(v)
			}
		}
	}
	return t
}

func (c coregionCov) Matrix(x1, x2 ops.CovInput, h []ops.CovInput, out []float64) {
	b := c.matrixB(h[0].Data, h[1].Data)
	t1, t2 := c.tasks(x1), c.tasks(x2)
	m := len(t2)
	for i, ti := range t1 {
		row := out[i*m : (i+1)*m]
		for j, tj := range t2 {
			if ti < 0 || tj < 0 {
				row[j] = math.NaN()
				continue
			}
			row[j] = b[ti*c.p+tj]
		}
	}
}

// grads writes dW and dκ of S (P×P) into dst for hyperparameter operand which (0: W, 1: κ).
func (c coregionCov) grads(which int, s, w, dst []float64) {
	if which == 1 {
		for i := range c.p {
			dst[i] = s[i*c.p+i]
		}
		return
	}
	for i := range c.p {
		for q := range c.r {
			v := 0.0
			for j := range c.p {
				v += (s[i*c.p+j] + s[j*c.p+i]) * w[j*c.r+q]
			}
			dst[i*c.r+q] = v
		}
	}
}

func (c coregionCov) MatrixGrad(wrt int, x1, x2 ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	if wrt == ops.CovWrtX1 || wrt == ops.CovWrtX2 {
		clear(dst)
		return
	}
	t1, t2 := c.tasks(x1), c.tasks(x2)
	m := len(t2)
	s := make([]float64, c.p*c.p)
	for i, ti := range t1 {
		if ti < 0 {
			continue
		}
		for j, tj := range t2 {
			if tj >= 0 {
				s[ti*c.p+tj] += g[i*m+j]
			}
		}
	}
	c.grads(wrt-ops.CovWrtH0, s, h[0].Data, dst)
}

func (c coregionCov) Diag(x ops.CovInput, h []ops.CovInput, out []float64) {
	b := c.matrixB(h[0].Data, h[1].Data)
	for i, t := range c.tasks(x) {
		if t < 0 {
			out[i] = math.NaN()
			continue
		}
		out[i] = b[t*c.p+t]
	}
}

func (c coregionCov) DiagGrad(wrt int, x ops.CovInput, h []ops.CovInput, _, g []float64, dst []float64) {
	if wrt == 0 {
		clear(dst)
		return
	}
	s := make([]float64, c.p*c.p)
	for i, t := range c.tasks(x) {
		if t >= 0 {
			s[t*c.p+t] += g[i]
		}
	}
	c.grads(wrt-1, s, h[0].Data, dst)
}
