package datasets

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// SynthConfig configures Synthetic.
type SynthConfig struct {
	// Rows and Inputs are the data set's N and D (both ≥ 1).
	Rows, Inputs int
	// Noise is the standard deviation of the Gaussian noise added to the target (0: DefaultSynthNoise;
	// negative: none).
	Noise float64
	// Seed seeds every draw: the same configuration gives the same data, bit for bit.
	Seed uint64
}

// DefaultSynthNoise is Synthetic's default noise standard deviation (the signal's is about 1).
const DefaultSynthNoise = 0.1

// Synthetic returns a seeded regression data set, a stand-in for a user's table: inputs x_d uniform on
// [−2, 2] and the target y = f(x) + ε with ε ~ N(0, Noise²) and f smooth and nonlinear in every input, of
// decreasing relevance (so ARD length-scales have something to find):
//
//	f(x) = Σ_d sin(1.5 x_d + φ_d)/(1 + d/2) + 0.5 sin(u·x) + 0.3 x_0 x_1
//
// with phases φ_d uniform on [0, 2π) and u_d ~ N(0, 1/D) drawn from the seed (the product term needs D ≥ 2).
// The inputs are named x0 … x{D−1}, the data set "synthetic".
func Synthetic(c SynthConfig) (*Dataset, error) {
	g, err := NewSynthStream(c)
	if err != nil {
		return nil, err
	}
	x, y := mat.NewDense(c.Rows, c.Inputs, nil), mat.NewDense(c.Rows, 1, nil)
	for i := 0; i < c.Rows; i++ {
		y.Set(i, 0, g.Next(x.RawRowView(i)))
	}
	return &Dataset{Name: "synthetic", X: x, Y: y, FeatureNames: g.Names()}, nil
}

// SynthStream generates Synthetic's rows one at a time, in order and bit for bit the same, so that a data set
// of any size is written in constant memory (`gpzoo synth`). It is not safe for concurrent use.
type SynthStream struct {
	rng      *rand.Rand
	noise    float64
	phase, u []float64
}

// NewSynthStream returns the generator of the data set Synthetic(c) returns (c.Rows is checked but not
// enforced: Next goes on drawing). Errors: those of Synthetic.
func NewSynthStream(c SynthConfig) (*SynthStream, error) {
	if c.Rows < 1 || c.Inputs < 1 {
		return nil, fmt.Errorf("datasets: Synthetic: %d rows and %d inputs (want ≥ 1 of each): %w", c.Rows, c.Inputs, ErrInvalid)
	}
	if math.IsNaN(c.Noise) || math.IsInf(c.Noise, 0) {
		return nil, fmt.Errorf("datasets: Synthetic: noise %g: %w", c.Noise, ErrInvalid)
	}
	noise := c.Noise
	switch {
	case noise == 0:
		noise = DefaultSynthNoise
	case noise < 0:
		noise = 0
	}
	d := c.Inputs
	g := &SynthStream{rng: rand.New(rand.NewPCG(c.Seed, 0x5e7)), noise: noise, phase: make([]float64, d), u: make([]float64, d)}
	for j := range g.phase {
		g.phase[j] = 2 * math.Pi * g.rng.Float64()
		g.u[j] = g.rng.NormFloat64() / math.Sqrt(float64(d))
	}
	return g, nil
}

// Names returns the inputs' names, x0 … x{D−1}.
func (g *SynthStream) Names() []string {
	names := make([]string, len(g.phase))
	for j := range names {
		names[j] = "x" + strconv.Itoa(j)
	}
	return names
}

// Next draws the next row's inputs into x (length D) and returns its target.
func (g *SynthStream) Next(x []float64) float64 {
	for j := range x {
		x[j] = 4*g.rng.Float64() - 2
	}
	f, dot := 0.0, 0.0
	for j, v := range x {
		f += math.Sin(1.5*v+g.phase[j]) / (1 + float64(j)/2)
		dot += g.u[j] * v
	}
	f += 0.5 * math.Sin(dot)
	if len(x) >= 2 {
		f += 0.3 * x[0] * x[1]
	}
	return f + g.noise*g.rng.NormFloat64()
}

// WriteTable writes d as a CSV table ReadTable reads back exactly: a header row (the feature names, x0 …
// x{D−1} when d has none, then target, or target1 … targetP for several target columns; "" means "y") and one
// row per point, numbers in the shortest form that round-trips (strconv 'g', -1).
func WriteTable(w io.Writer, d *Dataset, target string) error {
	if err := d.checkShapes(); err != nil {
		return err
	}
	if target == "" {
		target = "y"
	}
	cw := csv.NewWriter(w)
	row := make([]string, 0, d.D()+d.P())
	for j := 0; j < d.D(); j++ {
		name := "x" + strconv.Itoa(j)
		if d.FeatureNames != nil {
			name = d.FeatureNames[j]
		}
		row = append(row, name)
	}
	for k := 0; k < d.P(); k++ {
		if d.P() == 1 {
			row = append(row, target)
		} else {
			row = append(row, target+strconv.Itoa(k+1))
		}
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for i := 0; i < d.N(); i++ {
		row = row[:0]
		for _, v := range d.X.RawRowView(i) {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		for _, v := range d.Y.RawRowView(i) {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
