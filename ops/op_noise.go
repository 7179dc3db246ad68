package ops

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Reparameterisation noise. gorgonia's own random ops seed a fresh generator from the clock; gpzoo draws every
// random number from a *rand.Rand the caller injects, so a run is reproducible from its seed.

// noiseSerial numbers every StandardNormal node ever built; it enters the hash so that two noise nodes with the
// same generator, shape and anchor are still two nodes (gorgonia merges nodes with equal hashes and children).
var noiseSerial atomic.Uint64

// noiseK draws a fresh N(0, 1) sample of its shape from rng at every forward pass. Its only operand is an anchor
// that places the op in the graph; it is not differentiated.
type noiseK struct {
	rng    *rand.Rand
	shape  tensor.Shape
	serial uint64
}

func (k noiseK) name() string { return "StandardNormal" }
func (k noiseK) params(w io.Writer) {
	fmt.Fprintf(w, "rng=%p,shape=%v,serial=%d", k.rng, []int(k.shape), k.serial)
}
func (noiseK) arity() int   { return 1 }
func (noiseK) diff() []bool { return []bool{false} }
func (k noiseK) outShape([]tensor.Shape) (tensor.Shape, error) {
	return k.shape.Clone(), nil
}

func (k noiseK) forward(_ []arg, out []float64) error {
	for i := range out {
		out[i] = k.rng.NormFloat64()
	}
	return nil
}

func (k noiseK) backward(int, []arg, arg, arg, []float64) error {
	return errors.New("ops: StandardNormal: noise is not differentiable") // unreachable: diff() is false
}

// StandardNormal returns a node of the given shape (empty: a scalar) whose value is redrawn from N(0, 1) with
// rng at every run of the graph: the reparameterisation noise of deep GPs and Monte-Carlo likelihoods.
//
// like is an anchor operand of any shape that places the op in like's graph; its value is ignored and it is not
// differentiated (no gradient flows through the noise). Every call builds a distinct node, even for the same rng
// and shape (the hash holds rng's address, the shape and a serial number). The draws are deterministic given
// rng's seed, because graph's executor runs the ops drawing from one generator in a fixed order (ops.SharedState); rng must not be used concurrently elsewhere
// while the graph runs.
func StandardNormal(like *G.Node, rng *rand.Rand, shape ...int) (*G.Node, error) {
	if rng == nil {
		return nil, errors.New("ops: StandardNormal: nil *rand.Rand")
	}
	for _, s := range shape {
		if s <= 0 {
			return nil, &ShapeError{Op: "StandardNormal", Want: "positive dimensions", Got: fmt.Sprint(shape)}
		}
	}
	s := tensor.Shape(append([]int(nil), shape...))
	if len(shape) == 0 {
		s = tensor.ScalarShape()
	}
	return apply(noiseK{rng: rng, shape: s, serial: noiseSerial.Add(1)}, like)
}

func (k noiseK) source() *rand.Rand { return k.rng }
