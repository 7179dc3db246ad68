package modelfile_test

import (
	"bytes"
	"crypto/sha256"
	le "encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/datasets"
	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/modelfile"
	"github.com/gpzoo/gpzoo/graph"
	"github.com/gpzoo/gpzoo/train"
)

// TestPriorsRoundTripBitForBit: for every model family (GPR, SGPR, SVGP with every likelihood and layer, deep
// GPs), a model whose every elementwise Param carries a prior (gamma on the positive ones, normal on the others)
// trains a few MAP steps, is saved as a version-2 file and loads with the same priors on the same Params and the
// same raw bits; the file written from the loaded model reads back and writes again to the same bytes. The same model without priors is written as version 1.
func TestPriorsRoundTripBitForBit(t *testing.T) {
	t.Parallel()
	pos, err := gp.NewGammaPrior(2, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	nor, err := gp.NewNormalPrior(0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range famCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			needWhite(t, c.name)
			ds, _ := famData(c.task, uint64(i+1))
			std, err := datasets.FitStandardizer(ds, c.task == regression)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := std.Apply(ds)
			if err != nil {
				t.Fatal(err)
			}
			m := c.build(t, tr.X, tr.Y)
			if c.needData {
				if err := m.(gp.DataHolder).SetTrainingData(tr.X, tr.Y); err != nil {
					t.Fatal(err)
				}
			}
			plain := saveBytes(t, &modelfile.File{Model: m, Standardizer: std})
			if v := le.LittleEndian.Uint32(plain[8:]); v != 1 {
				t.Errorf("a model without priors is written as version %d, want 1", v)
			}
			n := 0
			for _, p := range m.Params() {
				switch p.Transform().(type) {
				case graph.Positive:
					err = p.SetPrior(pos)
				case graph.Identity:
					err = p.SetPrior(nor)
				default:
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n == 0 {
				t.Fatal("no Param took a prior")
			}
			if _, err := train.Train(m, tr.X, tr.Y, rand.New(rand.NewPCG(6, 6)), train.Config{Iters: famSteps, Optimizer: &train.Adam{LR: 0.05}}); err != nil {
				t.Fatal(err)
			}
			f := &modelfile.File{Model: m, Standardizer: std, Meta: map[string]string{"family": c.name}}
			first := saveBytes(t, f)
			if v := le.LittleEndian.Uint32(first[8:]); v != 2 {
				t.Errorf("a model with priors is written as version %d, want 2", v)
			}
			if !strings.Contains(string(first), `"priors"`) {
				t.Error("the payload has no priors")
			}
			g, err := modelfile.Load(bytes.NewReader(first), gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			for j, p := range m.Params() {
				q := g.Model.Params()[j]
				if (p.Prior() == nil) != (q.Prior() == nil) || p.Prior() != nil && p.Prior().Name() != q.Prior().Name() {
					t.Errorf("Param %s: prior %v loaded as %v", p.Name(), p.Prior(), q.Prior())
				}
			}
			if got, want := rawCopy(g.Model), rawCopy(m); !equalBits(got, want) {
				t.Error("the loaded Params' raw values differ")
			}
			// Load adds the writer's version to Meta ("created_by"), so the file written from a loaded model is the
			// one that must read back and write again to the same bytes.
			second := saveBytes(t, g)
			h, err := modelfile.Load(bytes.NewReader(second), gp.BuildOptions{Rand: rand.New(rand.NewPCG(7, 7))})
			if err != nil {
				t.Fatal(err)
			}
			if third := saveBytes(t, h); !bytes.Equal(third, second) {
				t.Errorf("a loaded file saved again gives other bytes (%d vs %d)", len(third), len(second))
			}
		})
	}
}

func equalBits(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(bitsOf(a[i]), bitsOf(b[i])) {
			return false
		}
	}
	return true
}

// TestPriorsInVersion1AreCorrupt: priors can only come from a version-2 file.
func TestPriorsInVersion1AreCorrupt(t *testing.T) {
	t.Parallel()
	m := famCases()[0].build(t, nil, nil)
	pr, err := gp.NewLogNormalPrior(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Params()[0].SetPrior(pr); err != nil {
		t.Fatal(err)
	}
	b := saveBytes(t, &modelfile.File{Model: m})
	payload := b[20 : len(b)-32]
	if _, err := modelfile.Load(bytes.NewReader(rewrapVersion(payload, 1)), gp.BuildOptions{}); !errors.Is(err, modelfile.ErrCorrupt) {
		t.Errorf("priors in a version-1 file: %v, want ErrCorrupt", err)
	}
	if _, err := modelfile.Load(bytes.NewReader(rewrapVersion(payload, 2)), gp.BuildOptions{}); err != nil {
		t.Errorf("the same payload as version 2: %v", err)
	}
}

func saveBytes(t *testing.T, f *modelfile.File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := modelfile.Save(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rewrapVersion returns a model file of the given format version around payload (valid checksum).
func rewrapVersion(payload []byte, version uint32) []byte {
	out := []byte{0x89, 'G', 'P', 'Z', '\r', '\n', 0x1a, '\n'}
	out = le.LittleEndian.AppendUint32(out, version)
	out = le.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = append(out, payload...)
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}
