package gp

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// DataInitializer is a kernel that sets its initial hyperparameters from the training data (the spectral
// mixture, from the targets' periodogram). Training code calls it through InitKernelFromData after building a
// kernel and before training.
type DataInitializer interface {
	// InitFromData sets the initial hyperparameters from the training inputs x [N,D] and targets y [N,P];
	// rng, when the method draws at all, is the only source of randomness.
	InitFromData(x, y *mat.Dense, rng *rand.Rand) error
}

// InitKernelFromData calls InitFromData on k and on every part of its sums and products (in order) that
// implements DataInitializer (stationary kernels do: only kinds that start from the data act), and on the kernel inside a kernel on chosen input columns (Kernel() and Dims(), as
// Active has) with those columns of x; other kernels are left as they are (and rng is not drawn from for them).
func InitKernelFromData(k Kernel, x, y *mat.Dense, rng *rand.Rand) error {
	var parts []Kernel
	switch c := k.(type) {
	case *Sum:
		parts = c.parts
	case *Product:
		parts = c.parts
	case DataInitializer:
		return c.InitFromData(x, y, rng)
	case interface {
		Kernel() Kernel
		Dims() []int
	}:
		if x == nil {
			return InitKernelFromData(c.Kernel(), x, y, rng)
		}
		n, d := x.Dims()
		dims := c.Dims()
		sub := mat.NewDense(max(n, 1), max(len(dims), 1), nil)
		for j, col := range dims {
			if col < 0 || col >= d {
				return configErr("InitKernelFromData: column %d of inputs with %d columns", col, d)
			}
			for i := 0; i < n; i++ {
				sub.Set(i, j, x.At(i, col))
			}
		}
		return InitKernelFromData(c.Kernel(), sub, y, rng)
	}
	for _, p := range parts {
		if err := InitKernelFromData(p, x, y, rng); err != nil {
			return err
		}
	}
	return nil
}

// InitFromData sets a stationary kernel's initial hyperparameters from the data when its kind starts from it (the
// periodic kernel's period, from the targets' periodogram); other kinds are left as they are and draw nothing.
func (k *Stationary) InitFromData(x, y *mat.Dense, rng *rand.Rand) error {
	if k.dataInit == nil {
		return nil
	}
	return k.dataInit(k, x, y, rng)
}
