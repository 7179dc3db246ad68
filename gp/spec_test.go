package gp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/gptest"
	"github.com/gpzoo/gpzoo/graph"
	"gonum.org/v1/gonum/mat"
)

// combinatorSpecs are Spec round-trip cases of kernel kinds that no family registers (gp.Active), added from
// their test files' init.
var combinatorSpecs []specBuild

// specCase is a component with non-default hyperparameters and the kind its Spec must carry.
type specCase struct {
	name string
	kind string
	v    any
}

func specCases(t *testing.T) []specCase {
	t.Helper()
	must := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	kc := func(name string, d int, mod func(*gp.KernelConfig)) gp.KernelConfig {
		c := gp.KernelConfig{Name: name, InputDim: d, Variance: 1.7, Lengthscales: []float64{0.4, 1.3, 2.2}[:d]}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	se := func() gp.Kernel { return must(gp.NewSquaredExp(kc("se", 3, nil))).(gp.Kernel) }
	// part builds family's (or a registered stand-in's) kernel for composites: D = 3, Params prefixed name.
	part := func(family, name string) gp.Kernel {
		return must(kernelTests[family].part(kc, name)).(gp.Kernel)
	}
	var cs []specCase
	for _, n := range kernelTestFamilies() {
		for _, c := range kernelTests[n].spec(kc) {
			cs = append(cs, specCase{c.name, c.kind, must(c.build())})
		}
	}
	for _, c := range combinatorSpecs { // kinds without a family (gp.Active), from their test files
		cs = append(cs, specCase{c.name, c.kind, must(c.build())})
	}
	pl := pickFamilies(t, "periodic", "linear")
	perLin := func() gp.Kernel { return must(gp.NewProduct(part(pl[0], "per"), part(pl[1], "lin"))).(gp.Kernel) }
	mc := pickFamilies(t, "matern32", "constant")
	cs = append(cs, []specCase{
		{"Sum", gp.KindSum, must(gp.NewSum(se(), perLin()))},
		{"Product", gp.KindProduct, must(gp.NewProduct(part(mc[0], "a"), part(mc[0], "b"), part(mc[1], "")))},
		{"ZeroMean", gp.KindZeroMean, must(gp.NewZeroMean(2))},
		{"ConstantMean", gp.KindConstantMean, must(gp.NewConstantMean("cm", []float64{0.25, -1.5}))},
		{"LinearMean", gp.KindLinearMean, must(gp.NewLinearMean("lm", 3, 2, []float64{1, -2, 0.5, 0.25, 3, -0.125}, []float64{0.1, -0.2}))},
		{"IdentityMean", gp.KindIdentityMean, gp.IdentityMean{D: 3}},
		{"ProjectionMean", gp.KindProjectionMean, must(gp.NewProjectionMean(3, 2, []float64{0.1, 1.0 / 3, -math.Pi, 1e-300, math.Copysign(0, -1), 7}))},
	}...)
	for _, withMean := range []bool{false, true} {
		c := gp.GPRConfig{Kernel: must(gp.NewSum(se(), perLin())).(gp.Kernel), NoiseVariance: 0.02, NoiseFloor: 1e-4}
		name := "GPR"
		if withMean {
			c.Mean = must(gp.NewLinearMean("gm", 3, 1, []float64{0.5, -0.25, 1}, []float64{0.75})).(gp.MeanFunction)
			name = "GPR-mean"
		}
		cs = append(cs, specCase{name, gp.KindGPR, must(gp.NewGPR(c))})
	}
	return cs
}

// paramsOf returns the Params of a kernel, mean or model.
func paramsOf(t *testing.T, v any) []*graph.Param {
	t.Helper()
	p, ok := v.(interface{ Params() []*graph.Param })
	if !ok {
		t.Fatalf("%T has no Params", v)
	}
	return p.Params()
}

// rebuild takes v's Spec, round-trips it through JSON and rebuilds it.
func rebuild(t *testing.T, v any) (gp.Spec, any) {
	t.Helper()
	s, err := v.(gp.Describer).Spec()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back gp.Spec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	w, err := gp.BuildSpec(back, gp.BuildOptions{})
	if err != nil {
		t.Fatalf("BuildSpec(%s): %v", b, err)
	}
	return s, w
}

func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	x1 := mat.NewDense(5, 3, nil)
	x2 := mat.NewDense(4, 3, nil)
	for _, x := range []*mat.Dense{x1, x2} {
		r, c := x.Dims()
		for i := range r {
			for j := range c {
				x.Set(i, j, rng.NormFloat64())
			}
		}
	}
	covered := map[string]bool{}
	for _, c := range specCases(t) {
		t.Run(c.name, func(t *testing.T) {
			s, w := rebuild(t, c.v)
			covered[c.kind] = true
			if s.Kind != c.kind {
				t.Fatalf("kind %q, want %q", s.Kind, c.kind)
			}
			if fmt.Sprintf("%T", w) != fmt.Sprintf("%T", c.v) {
				t.Fatalf("rebuilt a %T, want %T", w, c.v)
			}
			// The rebuilt component describes itself the same way.
			s2, err := w.(gp.Describer).Spec()
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := json.Marshal(s)
			j2, _ := json.Marshal(s2)
			if string(j1) != string(j2) {
				t.Fatalf("spec changed by a rebuild:\n%s\n%s", j1, j2)
			}
			ps, qs := paramsOf(t, c.v), paramsOf(t, w)
			if len(ps) != len(qs) {
				t.Fatalf("%d Params rebuilt, want %d", len(qs), len(ps))
			}
			for i, p := range ps {
				q := qs[i]
				if p.Name() != q.Name() || !slices.Equal(p.Shape(), q.Shape()) || p.Transform().String() != q.Transform().String() {
					t.Fatalf("Param %d rebuilt as %v, want %v", i, q, p)
				}
				if err := q.SetRaw(p.Raw()); err != nil {
					t.Fatal(err)
				}
			}
			d := 3
			if k, ok := c.v.(gp.Kernel); ok {
				d = k.InputDim()
			}
			a, b := x1.Slice(0, 5, 0, d).(*mat.Dense), x2.Slice(0, 4, 0, d).(*mat.Dense)
			if k, ok := c.v.(gp.Kernel); ok { // category indices in a coregion kernel's task column
				a, b = withCategories(a, k), withCategories(b, k)
			}
			o1, o2 := outputs(t, c.v, a, b, x1), outputs(t, w, a, b, x1)
			if again := outputs(t, c.v, a, b, x1); !slices.Equal(o1, again) {
				t.Fatalf("%T computes different values on two runs: == would test nothing", c.v)
			}
			if len(o1) == 0 || !slices.Equal(o1, o2) {
				t.Fatalf("rebuilt component computes\n%v\nwant\n%v", o2, o1)
			}
		})
	}
	for _, c := range priorCases(t) { // priors have no Params: the rebuilt prior has the same Name and Spec
		s, w := rebuild(t, c.prior)
		covered[s.Kind] = true
		s2, err := w.(gp.Describer).Spec()
		if err != nil {
			t.Fatal(err)
		}
		j1, _ := json.Marshal(s)
		j2, _ := json.Marshal(s2)
		if p, ok := w.(gp.Prior); !ok || p.Name() != c.prior.Name() || string(j1) != string(j2) {
			t.Errorf("prior %s rebuilt as %v (%s, want %s)", c.prior.Name(), w, j2, j1)
		}
	}
	for _, k := range gp.Kinds() {
		if !covered[k] {
			t.Errorf("registered kind %q is not tested", k)
		}
	}
}

// withCategories returns a copy of x whose categorical columns (gp.CategoricalInputs(k)) hold valid category
// indices (row i: i mod Levels).
func withCategories(x *mat.Dense, k gp.Kernel) *mat.Dense {
	x = mat.DenseCopyOf(x)
	r, _ := x.Dims()
	for _, c := range gp.CategoricalInputs(k) {
		for i := range r {
			x.Set(i, c.Column, float64(i%c.Levels))
		}
	}
	return x
}

// outputs evaluates a kernel (K(a, b), K(a, a)), a mean function (m(a)) or a GPR (predictions at b after
// conditioning on a and targets from x, and its log marginal likelihood).
func outputs(t *testing.T, v any, a, b, x *mat.Dense) []float64 {
	t.Helper()
	switch v := v.(type) {
	case gp.Kernel:
		kab, err := gp.KernelMatrix(v, a, b)
		if err != nil {
			t.Fatal(err)
		}
		kaa, err := gp.KernelMatrix(v, a, a)
		if err != nil {
			t.Fatal(err)
		}
		return append(slices.Clone(kab.RawMatrix().Data), kaa.RawMatrix().Data...)
	case gp.MeanFunction:
		n, d := a.Dims()
		g := graph.New(graph.Options{})
		prog, err := g.CompileForward(map[string]*graph.Node{"m": v.Mean(g.Const("x", mat.DenseCopyOf(a).RawMatrix().Data, n, d))})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(prog.Output("m"))
	case *gp.GPR:
		n, _ := a.Dims()
		y := mat.NewDense(n, 1, nil)
		for i := range n {
			y.Set(i, 0, math.Sin(3*x.At(i, 0))+x.At(i, 1))
		}
		if err := v.SetTrainingData(a, y); err != nil {
			t.Fatal(err)
		}
		pr, err := v.Predict(b, gp.PredictOptions{ChunkRows: 3})
		if err != nil {
			t.Fatal(err)
		}
		lml, err := v.LogMarginalLikelihoodValue(a, y, graph.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return append(append(slices.Clone(pr.FMean.RawMatrix().Data), pr.FVar.RawMatrix().Data...), lml, v.NoiseVariance())
	}
	t.Fatalf("cannot evaluate a %T", v)
	return nil
}

func TestSpecErrors(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	seSpec, err := se.Spec()
	if err != nil {
		t.Fatal(err)
	}
	zm, err := gp.NewZeroMean(1)
	if err != nil {
		t.Fatal(err)
	}
	meanSpec, err := zm.Spec()
	if err != nil {
		t.Fatal(err)
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	deep := seSpec
	for range 70 {
		deep = gp.Spec{Kind: gp.KindSum, Children: []gp.Spec{deep, seSpec}}
	}
	cases := []struct {
		name string
		s    gp.Spec
		want string
	}{
		{"unknown kind", gp.Spec{Kind: "kernel/nope"}, "unknown component kind"},
		{"empty kind", gp.Spec{}, "unknown component kind"},
		{"unknown field", gp.Spec{Kind: gp.KindSquaredExp, Config: raw(`{"name":"a","input_dim":2,"colour":"red"}`)}, "unknown field"},
		{"bad JSON", gp.Spec{Kind: gp.KindSquaredExp, Config: raw(`{"input_dim":`)}, "config of kernel/se"},
		{"trailing JSON", gp.Spec{Kind: gptest.WhiteKind(), Config: raw(`{"input_dim":2} {}`)}, "trailing data"},
		{"wrong type", gp.Spec{Kind: gp.KindSquaredExp, Config: raw(`{"input_dim":"two"}`)}, "config of kernel/se"},
		{"missing config", gp.Spec{Kind: gp.KindSquaredExp}, "missing config"},
		{"zero dim", gp.Spec{Kind: stationaryKind(), Config: raw(`{"input_dim":0}`)}, "dimension 0 is 0"},
		{"negative dim", gp.Spec{Kind: gp.KindLinear, Config: raw(`{"input_dim":-3}`)}, "want > 0"},
		{"huge dim", gp.Spec{Kind: gp.KindSquaredExp, Config: raw(`{"input_dim":1152921504606846976}`)}, "exceed"},
		{"huge product", gp.Spec{Kind: gp.KindLinearMean, Config: raw(`{"input_dim":4294967296,"output_dim":4294967296}`)}, "exceed"},
		{"iso in 1-D", gp.Spec{Kind: gp.KindPeriodic, Config: raw(`{"input_dim":1,"isotropic":true}`)}, "isotropic needs"},
		{"shared in 1-D", gp.Spec{Kind: gp.KindLinear, Config: raw(`{"input_dim":1,"shared":true}`)}, "shared needs"},
		{"leaf with children", gp.Spec{Kind: gptest.WhiteKind(), Config: raw(`{"input_dim":2}`), Children: []gp.Spec{seSpec}}, "takes no children"},
		{"sum of one", gp.Spec{Kind: gp.KindSum, Children: []gp.Spec{seSpec}}, "at least two"},
		{"sum with config", gp.Spec{Kind: gp.KindSum, Config: raw(`{"x":1}`), Children: []gp.Spec{seSpec, seSpec}}, "unknown field"},
		{"sum of a mean", gp.Spec{Kind: gp.KindSum, Children: []gp.Spec{seSpec, meanSpec}}, "want gp.Kernel"},
		{"product of mixed dims", gp.Spec{Kind: gp.KindProduct, Children: []gp.Spec{seSpec, {Kind: gptest.WhiteKind(), Config: raw(`{"input_dim":3}`)}}}, "InputDim"},
		{"bad child", gp.Spec{Kind: gp.KindSum, Children: []gp.Spec{seSpec, {Kind: "what"}}}, "child 1"},
		{"projection short W", gp.Spec{Kind: gp.KindProjectionMean, Config: raw(`{"input_dim":2,"output_dim":2,"w":[1,2,3]}`)}, "3 weights"},
		{"GPR without kernel", gp.Spec{Kind: gp.KindGPR}, "needs a kernel"},
		{"GPR mean first", gp.Spec{Kind: gp.KindGPR, Children: []gp.Spec{meanSpec, seSpec}}, "want gp.Kernel"},
		{"GPR kernel twice", gp.Spec{Kind: gp.KindGPR, Children: []gp.Spec{seSpec, seSpec}}, "want gp.MeanFunction"},
		{"GPR negative floor", gp.Spec{Kind: gp.KindGPR, Config: raw(`{"noise_floor":-1}`), Children: []gp.Spec{seSpec}}, "noise floor"},
		{"too deep", deep, "nested deeper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := gp.BuildSpec(c.s, gp.BuildOptions{})
			if err == nil {
				t.Fatalf("built %T, want an error containing %q", v, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
	if _, err := gp.BuildSpec(gp.Spec{Kind: "nope"}, gp.BuildOptions{}); !errors.Is(err, gp.ErrUnknownKind) {
		t.Errorf("unknown kind: %v, want ErrUnknownKind", err)
	}
	if _, err := gp.BuildSpec(gp.Spec{Kind: gp.KindSum, Children: []gp.Spec{seSpec, meanSpec}}, gp.BuildOptions{}); !errors.Is(err, gp.ErrConfig) {
		t.Errorf("wrong child: %v, want ErrConfig", err)
	}
}

func TestSpecSharedParamIsAnError(t *testing.T) {
	t.Parallel()
	se, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := gp.NewSum(se, se)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sum.Spec(); err == nil || !strings.Contains(err.Error(), "shared") {
		t.Fatalf("Spec of a sum sharing its parts: %v, want an error naming the shared Param", err)
	}
}

func TestCheckSpecDims(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dims []int
		ok   bool
	}{
		{[]int{1}, true},
		{[]int{gp.MaxSpecEntries}, true},
		{[]int{gp.MaxSpecEntries + 1}, false},
		{[]int{1 << 12, 1 << 13}, true},
		{[]int{1 << 13, 1 << 13}, false},
		{[]int{math.MaxInt, math.MaxInt}, false},
		{[]int{3, 0}, false},
		{[]int{-1}, false},
	} {
		if err := gp.CheckSpecDims("test", c.dims...); (err == nil) != c.ok {
			t.Errorf("CheckSpecDims(%v) = %v, want ok=%v", c.dims, err, c.ok)
		}
	}
}

// stationaryKind returns the Spec kind of a registered stationary kernel other than SE if there is one (Matérn-5/2
// when registered), else SE's.
func stationaryKind() string {
	for _, name := range []string{"matern52", "matern32", "matern12", "rq"} {
		if f, ok := gp.LookupKernel(name); ok {
			return f.Kind
		}
	}
	return gp.KindSquaredExp
}
