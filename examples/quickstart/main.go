// Command quickstart fits an exact GP to noisy samples of sin(x) by L-BFGS and predicts at one point, printing
// the prediction with its 2σ band beside the true value.
//
//	go run ./examples/quickstart [-iters N]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

func main() {
	iters := flag.Int("iters", 100, "L-BFGS iterations")
	flag.Parse()
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := mat.NewDense(50, 1, nil), mat.NewDense(50, 1, nil)
	for i := 0; i < 50; i++ {
		v := 6 * rng.Float64()
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(v)+0.1*rng.NormFloat64())
	}
	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 1})
	if err != nil {
		log.Fatal(err)
	}
	model, err := gp.NewGPR(gp.GPRConfig{Kernel: kern, X: x, Y: y}) // the exact GP predicts from its data
	if err != nil {
		log.Fatal(err)
	}
	if _, err := train.TrainLBFGS(model, x, y, train.LBFGSConfig{Iters: *iters}); err != nil {
		log.Fatal(err)
	}
	var p gp.Predictor = model // every model family predicts through this interface
	pred, err := p.Predict(mat.NewDense(1, 1, []float64{1.5}), gp.PredictOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("f(1.5) ≈ %.3f ± %.3f (sin 1.5 = %.3f)\n", pred.FMean.At(0, 0), 2*math.Sqrt(pred.FVar.At(0, 0)), math.Sin(1.5))
}
