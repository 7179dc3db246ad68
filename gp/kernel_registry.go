package gp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// KernelFamily is a kernel users choose by name: `gpzoo train --kernel NAME` (or a leaf of a kernel expression,
// gp/grammar) and anything else that lists kernels read the families registered with RegisterKernel, so a
// registered kernel is offered everywhere at once.
type KernelFamily struct {
	// Name is the name users give (lower case, no spaces or commas, letters and digits), e.g. "matern52".
	Name string
	// Kind is the Spec kind of the kernels New returns, registered with RegisterKind (first: RegisterKernel panics
	// otherwise), so that model files rebuild them.
	Kind string
	// Doc is one line for --help: the formula and its hyperparameters.
	Doc string
	// New returns a fresh kernel with its initial hyperparameters.
	New func(o KernelOptions) (Kernel, error)
	// Sized, when set, makes the family's kernels come in sizes (the spectral mixture's number of components): the
	// name followed by a positive integer n, e.g. "sm7", is the family's kernel of size n (LookupKernel resolves
	// it; Sized returns an error wrapping ErrConfig for an n it does not take). New is the default size.
	Sized func(n int, o KernelOptions) (Kernel, error)
}

// KernelOptions are what a caller knows when it builds a kernel of a family.
type KernelOptions struct {
	// InputDim is D (> 0).
	InputDim int
	// ARD: one hyperparameter per input dimension where the family has a choice (lengthscales, the linear
	// variances); otherwise one shared value.
	ARD bool
	// Name prefixes the hyperparameters' names, so that the parts of a composite kernel have unique Param names
	// (empty: the family's default).
	Name string
	// Inputs are the training inputs the kernel will see, row-major [N, InputDim] (in the units it will see them,
	// i.e. after any standardisation), when the caller knows them; nil otherwise. Families that size or
	// initialise themselves from the data read them (coregion: its number of tasks).
	Inputs []float64
}

var (
	kernelsMu sync.RWMutex
	kernelFam = map[string]KernelFamily{}
)

// RegisterKernel registers f under f.Name. Packages call it from init, after registering f.Kind with
// RegisterKind. It panics (a programming error) for an empty name, a name that is not lower-case letters and
// digits, a name registered twice, a nil New, or a Kind RegisterKind does not know.
func RegisterKernel(f KernelFamily) {
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	if f.Name == "" || f.New == nil {
		panic("gp: RegisterKernel: empty name or nil New")
	}
	for _, r := range f.Name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			panic("gp: RegisterKernel: name " + f.Name + " is not lower-case letters and digits")
		}
	}
	if _, dup := kernelFam[f.Name]; dup {
		panic("gp: RegisterKernel: kernel " + f.Name + " registered twice")
	}
	kindsMu.RLock()
	_, known := kinds[f.Kind]
	kindsMu.RUnlock()
	if !known {
		panic("gp: RegisterKernel: " + f.Name + "'s kind " + f.Kind + " is not registered (call RegisterKind first)")
	}
	kernelFam[f.Name] = f
}

// KernelFamilies returns the registered kernel families, sorted by name.
func KernelFamilies() []KernelFamily {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	out := make([]KernelFamily, 0, len(kernelFam))
	for _, f := range kernelFam {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupKernel returns the family registered under name, matched case-insensitively.
// A name that is a sized family's name followed by a positive integer n without leading zeros (KernelFamily.Sized)
// returns that family under this name, its New building the kernel of size n.
func LookupKernel(name string) (KernelFamily, bool) {
	name = strings.ToLower(name)
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	if f, ok := kernelFam[name]; ok {
		return f, true
	}
	digits := strings.TrimRightFunc(name, func(r rune) bool { return r >= '0' && r <= '9' })
	f, ok := kernelFam[digits]
	size := name[len(digits):]
	if !ok || f.Sized == nil || size == "" || size[0] == '0' || len(size) > 6 {
		return KernelFamily{}, false
	}
	n, err := strconv.Atoi(size)
	if err != nil {
		return KernelFamily{}, false
	}
	sized := f.Sized
	f.Name, f.Doc, f.Sized = name, fmt.Sprintf("%s with size %d", f.Name, n), nil
	f.New = func(o KernelOptions) (Kernel, error) { return sized(n, o) }
	return f, true
}

// simpleKernelSpec is the Config of kernels with no hyperparameter but a variance (White, Constant): the name
// prefix of the Params and D. It lives here, not in a kernel's file, so that each kernel file can be deleted alone.
type simpleKernelSpec struct {
	Name     string `json:"name"`
	InputDim int    `json:"input_dim"`
}

// stationarySpec is the Config of the stationary kernels: the name prefix of the Params, D, and whether the
// kernel is isotropic (one length-scale shared by the D dimensions) rather than ARD.
type stationarySpec struct {
	Name      string `json:"name"`
	InputDim  int    `json:"input_dim"`
	Isotropic bool   `json:"isotropic,omitempty"`
}

// RegisterStationaryKind registers the Spec kind of a kernel built by NewStationaryKernel (Config: name,
// input_dim, isotropic) with the constructor build, and the family f (f.Kind = kind; f.New defaults to build
// with one length-scale per dimension when ARD, else a shared one). Call it from init.
func RegisterStationaryKind(kind string, build func(KernelConfig) (*Stationary, error), f KernelFamily) {
	RegisterKind(kind, func(raw json.RawMessage, children []any, _ BuildOptions) (any, error) {
		var c stationarySpec
		if err := decodeLeaf(kind, raw, children, &c); err != nil {
			return nil, err
		}
		if err := CheckSpecDims(kind, c.InputDim); err != nil {
			return nil, err
		}
		kc := KernelConfig{Name: c.Name, InputDim: c.InputDim}
		if c.Isotropic {
			kc.Lengthscales = []float64{DefaultLengthscale}
		}
		k, err := build(kc)
		if err != nil {
			return nil, err
		}
		if k.iso != c.Isotropic {
			return nil, configErr("%s: isotropic needs InputDim > 1, got %d", kind, c.InputDim)
		}
		return k, nil
	})
	f.Kind = kind
	if f.New == nil {
		f.New = func(o KernelOptions) (Kernel, error) {
			kc := KernelConfig{Name: o.Name, InputDim: o.InputDim}
			if !o.ARD {
				kc.Lengthscales = []float64{DefaultLengthscale}
			}
			return build(kc)
		}
	}
	RegisterKernel(f)
}

// Spec describes the kernel: its family's kind, the Params' name prefix, D and isotropic vs ARD.
func (k *Stationary) Spec() (Spec, error) {
	if k.kind == "" {
		return Spec{}, configErr("spec: the %v kernel has no Spec kind", k.cov.Name())
	}
	name, err := paramPrefix(k.Variance, ".variance")
	if err != nil {
		return Spec{}, err
	}
	return NewSpec(k.kind, stationarySpec{Name: name, InputDim: k.dim, Isotropic: k.iso})
}
