package modelfile

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/approx"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/ops"
	"gonum.org/v1/gonum/mat"
)

// FuzzLoad feeds arbitrary bytes to Load: it must never panic, and whatever it accepts must save again.
func FuzzLoad(f *testing.F) {
	valid := encodeFile(f, formatTestFile(f, 3))
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid[:headerLen])
	flipped := bytes.Clone(valid)
	flipped[headerLen+10] ^= 0x20
	f.Add(flipped)
	future := bytes.Clone(valid)
	binary.LittleEndian.PutUint32(future[len(magic):], FormatVersion+1)
	f.Add(future)
	huge := bytes.Clone(valid)
	binary.LittleEndian.PutUint64(huge[len(magic)+4:], 1<<60)
	f.Add(huge)
	f.Add([]byte{})
	f.Add([]byte("not a model file"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLoad(t, data)
	})
}

// FuzzLoadPayload fuzzes the payload behind a valid header and checksum, so that the JSON decoding, the
// rebuilding of the model and the validation are reached (random bytes almost never pass the checksum).
func FuzzLoadPayload(f *testing.F) {
	valid := encodeFile(f, formatTestFile(f, 3))
	f.Add(bytes.Clone(payloadOf(valid)))
	k, err := gptest.StationaryKernel(f, "matern52", gp.KernelConfig{InputDim: 2, Lengthscales: []float64{0.5}})
	if err != nil {
		f.Fatal(err)
	}
	m, err := gp.NewGPR(gp.GPRConfig{Kernel: k})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Clone(payloadOf(encodeFile(f, &File{Model: m}))))
	// An exact GP with a non-Gaussian likelihood (gp/approx): its Spec config holds the approximation's options.
	lik, err := likelihoods.NewBernoulli(likelihoods.BernoulliConfig{})
	if err != nil {
		f.Fatal(err)
	}
	am, err := approx.New(approx.Config{Kernel: k, Likelihood: lik, Inference: approx.EP, EP: ops.EPOptions{Damping: 0.7, QuadPoints: 9},
		X: mat.NewDense(3, 2, []float64{0, 1, 1, 0, 2, 2}), Y: mat.NewDense(3, 1, []float64{0, 1, 1})})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Clone(payloadOf(encodeFile(f, &File{Model: am}))))
	f.Add([]byte(`{"spec":{"kind":"model/approx-gp","config":{"inference":"laplace","laplace_max_iter":-3},"children":[{"kind":"kernel/white","config":{"name":"w","input_dim":1}},{"kind":"likelihood/poisson","config":{"bin_size":1,"quad_points":20}}]},"params":[]}`))
	f.Add([]byte(`{"spec":{"kind":"model/gpr","children":[{"kind":"kernel/white","config":{"name":"w","input_dim":1}}]},"params":[]}`))
	f.Add([]byte(`{"spec":{"kind":"kernel/sum"},"params":null}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		checkLoad(t, rewrapPayload(payload))
	})
}

// checkLoad loads data; a file that loads must save again.
func checkLoad(t *testing.T, data []byte) {
	got, err := Load(bytes.NewReader(data), gp.BuildOptions{})
	if err != nil {
		if got != nil {
			t.Fatalf("Load returned a file and the error %v", err)
		}
		return
	}
	if got.Model == nil {
		t.Fatal("Load succeeded without a model")
	}
	var buf bytes.Buffer
	if err := Save(&buf, got); err != nil {
		t.Fatalf("a loaded file does not save again: %v", err)
	}
}
