package ops

import (
	"fmt"
	"io"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Monte-Carlo variational expectation of the softmax (multinomial-logit) likelihood p(y=k | f) = softmax(f)_k.
// With the reparameterisation f_{s,n} = μ_n + √v_n ⊙ ε_{s,n}, ε ~ N(0, I):
//
//	VE_n = (1/S) Σ_s [ f_{s,n,y_n} − logsumexp_k f_{s,n,k} ],
//	∂VE_n/∂f_{s,n,k} = (δ_{k,y_n} − softmax(f_{s,n})_k)/S,
//	∂VE_n/∂μ_{n,k} = Σ_s ∂VE_n/∂f_{s,n,k},   ∂VE_n/∂v_{n,k} = Σ_s ∂VE_n/∂f_{s,n,k} · ε_{s,n,k}/(2√v_{n,k}).
//
// The log-sum-exp keeps the row maximum outside the logarithm, so no exponential overflows.

// softmaxMCK is the kernel of SoftmaxMCVE: inputs mu [N,K], v [N,K], y [N,1] (or [N]), eps [S·N,K]; output [N].
type softmaxMCK struct{}

func (softmaxMCK) name() string           { return "SoftmaxMCVE" }
func (softmaxMCK) params(io.Writer)       {}
func (softmaxMCK) arity() int             { return 4 }
func (softmaxMCK) diff() []bool           { return []bool{true, true, false, false} }
func (k softmaxMCK) samples(in []arg) int { return in[3].rows() / in[0].rows() }

func (k softmaxMCK) outShape(in []tensor.Shape) (tensor.Shape, error) {
	s, err := classifyShape(k.name(), in[0], in[1], in[2])
	if err != nil {
		return nil, err
	}
	n, c := in[0][0], in[0][1]
	e := in[3]
	if len(e) != 2 || e[1] != c || e[0] < n || e[0]%n != 0 {
		return nil, &ShapeError{Op: k.name(), Want: fmt.Sprintf("noise [S·%d,%d] with S ≥ 1", n, c), Got: fmt.Sprint(e)}
	}
	return s, nil
}

// sample writes f = μ + √v ⊙ ε of sample s, row r into f and returns log softmax(f)_y = f_y − logsumexp(f); when
// prob is non-nil it also writes softmax(f) into it.
func (softmaxMCK) sample(mu, sd, eps, f, prob []float64, y int) float64 {
	m := math.Inf(-1)
	for j := range f {
		f[j] = mu[j] + sd[j]*eps[j]
		if f[j] > m {
			m = f[j]
		}
	}
	sum := 0.0
	for j := range f {
		e := math.Exp(f[j] - m)
		sum += e
		if prob != nil {
			prob[j] = e
		}
	}
	for j := range prob {
		prob[j] /= sum
	}
	return f[y] - m - math.Log(sum)
}

// rowPrep checks row r's label and values and writes √v into sd.
func (k softmaxMCK) rowPrep(r int, in []arg, sd []float64) (int, error) {
	mu, v, y := in[0], in[1], in[2]
	c := mu.cols()
	lab, err := label(k.name(), r, y.data[r], c)
	if err != nil {
		return 0, err
	}
	row, vrow := mu.data[r*c:(r+1)*c], v.data[r*c:(r+1)*c]
	if err := checkRowFinite(k.name(), r, row, vrow); err != nil {
		return 0, err
	}
	for j, vj := range vrow {
		sd[j] = math.Sqrt(math.Max(vj, 0))
	}
	return lab, nil
}

func (k softmaxMCK) forward(in []arg, out []float64) error {
	mu, eps := in[0], in[3]
	n, c := mu.rows(), mu.cols()
	s := k.samples(in)
	sd, f := make([]float64, c), make([]float64, c)
	for r := 0; r < n; r++ {
		lab, err := k.rowPrep(r, in, sd)
		if err != nil {
			return err
		}
		acc := 0.0
		for t := 0; t < s; t++ {
			e := eps.data[(t*n+r)*c : (t*n+r+1)*c]
			acc += k.sample(mu.data[r*c:(r+1)*c], sd, e, f, nil, lab)
		}
		out[r] = acc / float64(s)
	}
	return nil
}

func (k softmaxMCK) backward(wrt int, in []arg, _ arg, g arg, dst []float64) error {
	if wrt > 1 {
		return fmt.Errorf("ops: %s: labels and noise are not differentiable", k.name())
	}
	mu, v, eps := in[0], in[1], in[3]
	n, c := mu.rows(), mu.cols()
	s := k.samples(in)
	sd, f, p := make([]float64, c), make([]float64, c), make([]float64, c)
	for r := 0; r < n; r++ {
		lab, err := k.rowPrep(r, in, sd)
		if err != nil {
			return err
		}
		d := dst[r*c : (r+1)*c]
		clear(d)
		scale := g.data[r] / float64(s)
		for t := 0; t < s; t++ {
			e := eps.data[(t*n+r)*c : (t*n+r+1)*c]
			k.sample(mu.data[r*c:(r+1)*c], sd, e, f, p, lab)
			for j := range d {
				df := -p[j]
				if j == lab {
					df += 1
				}
				if wrt == 1 {
					df *= e[j]
				}
				d[j] += scale * df
			}
		}
		if wrt == 1 {
			for j := range d {
				// ∂√v/∂v = 1/(2√v), evaluated at max(v, SqrtGradClamp) so it is finite at v = 0 (as Sqrt does);
				// 0 where v < 0 was clamped to 0.
				if vj := v.data[r*c+j]; vj < 0 {
					d[j] = 0
				} else {
					d[j] *= 0.5 / math.Sqrt(math.Max(vj, SqrtGradClamp))
				}
			}
		}
	}
	return nil
}

// SoftmaxMCVE returns the Monte-Carlo variational expectations (1/S) Σ_s log softmax(μ_n + √v_n ⊙ ε_{s,n})_{y_n}
// [N] for latent means mu [N,K], variances v [N,K] (K ≥ 2; a negative variance, from round-off, counts as 0), labels y [N,1] (integers 0..K−1 stored as
// float64) and standard-normal noise eps [S·N,K], whose row s·N + n is sample s of data row n (draw it with
// StandardNormal). Gradients (reparameterisation) flow to mu and v; y and eps are not differentiated. At run
// time a bad label is an ErrLabel error, a non-finite mean or variance a NonFiniteError.
func SoftmaxMCVE(mu, v, y, eps *G.Node) (*G.Node, error) {
	return apply(softmaxMCK{}, mu, v, y, eps)
}
