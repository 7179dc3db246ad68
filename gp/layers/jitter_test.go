package layers_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/gp/layers"
	"gonum.org/v1/gonum/mat"
)

// TestSVGPJitterPolicies: a new SVGP layer (and the HYBRID and ORTH layers built on one) factorises Kuu as is
// (gp.JitterOnFailure) and its Spec says so; a fixed jitter writes the Config of earlier versions, without a
// policy field; a Config without the field (every model file before issue 31) rebuilds a fixed jitter, and
// inconsistent or unknown policies are refused.
func TestSVGPJitterPolicies(t *testing.T) {
	t.Parallel()
	const d = 2
	rng := rand.New(rand.NewPCG(31, 31))
	z := mat.NewDense(3, d, gptest.RandomMatrix(rng, 3, d, -2, 2))
	x := mat.NewDense(7, d, gptest.RandomMatrix(rng, 7, d, -2, 2))
	for _, c := range []struct {
		jitter float64
		config string
	}{
		{0, `{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0,"jitter_policy":"on-failure"}`},
		{layers.DefaultJitter, `{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0.000001}`},
	} {
		l, err := layers.NewSVGP(layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: z, Jitter: c.jitter})
		if err != nil {
			t.Fatal(err)
		}
		if l.Jitter() != c.jitter {
			t.Errorf("jitter %v: layer's %v", c.jitter, l.Jitter())
		}
		s, err := l.Spec()
		if err != nil {
			t.Fatal(err)
		}
		if string(s.Config) != c.config {
			t.Errorf("jitter %v: Config %s, want %s", c.jitter, s.Config, c.config)
		}
		back := gptest.CheckSpecRoundTrip(t, l, gp.BuildOptions{}).(*layers.SVGP)
		if back.Jitter() != c.jitter {
			t.Errorf("jitter %v: rebuilt with %v", c.jitter, back.Jitter())
		}
		if a, b := spOutputs(t, l, x, true), spOutputs(t, back, x, true); !reflect.DeepEqual(a, b) {
			t.Errorf("jitter %v: outputs differ after the round trip: %v, %v", c.jitter, a, b)
		}
		hy, err := layers.NewHybrid(layers.HybridConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: z, Jitter: c.jitter}})
		if err != nil {
			t.Fatal(err)
		}
		or, err := layers.NewOrth(layers.OrthConfig{SVGPConfig: layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: z, Jitter: c.jitter}})
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range map[string]gp.Describer{"hybrid": hy, "orth": or} {
			s, err := w.Spec()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(c.config, `"name":"svgp"`, `"name":"`+name+`"`, 1)
			if len(s.Children) != 1 || string(s.Children[0].Config) != want {
				t.Errorf("%s, jitter %v: β layer's Spec %+v, want Config %s", name, c.jitter, s.Children, want)
			}
		}
	}
	k, err := spKernel(t, "", d).(gp.Describer).Spec()
	if err != nil {
		t.Fatal(err)
	}
	build := func(config string) (any, error) {
		return gp.BuildSpec(gp.Spec{Kind: layers.KindSVGP, Config: json.RawMessage(config), Children: []gp.Spec{k}}, gp.BuildOptions{})
	}
	for config, want := range map[string]float64{
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6}`:                           1e-6,
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6,"jitter_policy":"fixed"}`:   1e-6,
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0,"jitter_policy":"on-failure"}`: 0,
	} {
		v, err := build(config)
		if err != nil {
			t.Errorf("%s: %v", config, err)
			continue
		}
		if got := v.(*layers.SVGP).Jitter(); got != want {
			t.Errorf("%s: jitter %v, want %v", config, got, want)
		}
	}
	for _, config := range []string{
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0}`,
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6,"jitter_policy":"on-failure"}`,
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":0,"jitter_policy":"fixed"}`,
		`{"name":"svgp","num_inducing":3,"input_dim":2,"output_dim":1,"jitter":1e-6,"jitter_policy":"always"}`,
	} {
		if v, err := build(config); !errors.Is(err, layers.ErrConfig) || !errors.Is(err, gp.ErrConfig) {
			t.Errorf("%s: built %T, error %v (want layers.ErrConfig and gp.ErrConfig)", config, v, err)
		}
	}
	for _, j := range []float64{-1e-6, math.NaN(), math.Inf(1)} {
		if _, err := layers.NewSVGP(layers.SVGPConfig{Kernel: spKernel(t, "", d), Z: z, Jitter: j}); !errors.Is(err, layers.ErrConfig) {
			t.Errorf("jitter %v: error %v, want layers.ErrConfig", j, err)
		}
	}
}
