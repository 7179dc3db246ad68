// Command robustmax trains a three-class sparse variational GP classifier with the robust-max likelihood
// (Hernández-Lobato et al. 2011: the label is the argmax of three latent GPs, flipped with probability ε) on a
// synthetic problem: three overlapping Gaussian blobs in the plane. It prints the test accuracy, the mean test
// log predictive density and a calibration table: the test points binned by the predicted class's probability,
// with the accuracy in each bin (a calibrated classifier's accuracy matches its confidence) and the expected
// calibration error.
//
//	go run ./examples/robustmax [-iters N]
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/gp/layers"
	"github.com/gpzoo/gpzoo/gp/likelihoods"
	"github.com/gpzoo/gpzoo/gp/models"
	"github.com/gpzoo/gpzoo/train"
	"gonum.org/v1/gonum/mat"
)

// classes is K; centres are the blobs' centres (unit-variance blobs, overlapping enough that some points are
// ambiguous and calibration matters).
const classes = 3

var centres = [classes][2]float64{{0, 1.5}, {-1.3, -0.75}, {1.3, -0.75}}

// blobs draws n labelled points, the class uniform and the point from its blob.
func blobs(rng *rand.Rand, n int) (x, y *mat.Dense) {
	x, y = mat.NewDense(n, 2, nil), mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		k := rng.IntN(classes)
		x.Set(i, 0, centres[k][0]+rng.NormFloat64())
		x.Set(i, 1, centres[k][1]+rng.NormFloat64())
		y.Set(i, 0, float64(k))
	}
	return x, y
}

// bins is the number of confidence bins of the calibration table, over [1/K, 1].
const bins = 5

func main() {
	iters := flag.Int("iters", 1000, "training steps")
	flag.Parse()
	rng := rand.New(rand.NewPCG(3, 1))
	x, y := blobs(rng, 1500)
	xTest, yTest := blobs(rng, 1000)

	kern, err := gp.NewSquaredExp(gp.KernelConfig{InputDim: 2})
	if err != nil {
		log.Fatal(err)
	}
	z, err := gp.KMeans(x, 30, 25, rng)
	if err != nil {
		log.Fatal(err)
	}
	// One layer with three outputs (one latent GP per class) sharing the kernel and the inducing inputs.
	layer, err := layers.NewSVGP(layers.SVGPConfig{Kernel: kern, Z: z, OutputDim: classes})
	if err != nil {
		log.Fatal(err)
	}
	lik, err := likelihoods.NewRobustMax(likelihoods.RobustMaxConfig{NumClasses: classes}) // labels 0..K−1
	if err != nil {
		log.Fatal(err)
	}
	model, err := models.NewSVGP(models.SVGPConfig{Layer: layer, Likelihood: lik, NumData: 1500})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("training a robust-max SVGP classifier (%d classes, M=30) for %d steps\n", classes, *iters)
	if _, err := train.Train(model, x, y, rng, train.Config{Iters: *iters, BatchSize: 250, Optimizer: &train.Adam{LR: 0.01}}); err != nil {
		log.Fatal(err)
	}

	pred, err := model.Predict(xTest, gp.PredictOptions{})
	if err != nil {
		log.Fatal(err)
	}
	probs := pred.Probs // [N,K] class probabilities
	lds, err := model.LogDensity(xTest, yTest, gp.PredictOptions{})
	if err != nil {
		log.Fatal(err)
	}
	n, _ := probs.Dims()
	var count, correct [bins]int
	var confSum [bins]float64
	right, ll := 0, 0.0
	for i := 0; i < n; i++ {
		pred, conf := 0, -1.0
		for k := 0; k < classes; k++ {
			if p := probs.At(i, k); p > conf {
				pred, conf = k, p
			}
		}
		b := min(bins-1, int((conf-1.0/classes)/(1-1.0/classes)*bins))
		b = max(b, 0)
		count[b]++
		confSum[b] += conf
		if pred == int(yTest.At(i, 0)) {
			right++
			correct[b]++
		}
		ll += lds[i]
	}
	fmt.Printf("test accuracy %.3f, test log predictive density %.3f per point (%d points)\n", float64(right)/float64(n), ll/float64(n), n)
	fmt.Println("calibration: points binned by the predicted class's probability")
	fmt.Println("  confidence      points  mean confidence  accuracy")
	ece := 0.0
	for b := 0; b < bins; b++ {
		lo := 1.0/classes + float64(b)*(1-1.0/classes)/bins
		hi := lo + (1-1.0/classes)/bins
		if count[b] == 0 {
			fmt.Printf("  [%.2f, %.2f]  %6d  %15s  %8s\n", lo, hi, 0, "-", "-")
			continue
		}
		mc, acc := confSum[b]/float64(count[b]), float64(correct[b])/float64(count[b])
		ece += float64(count[b]) / float64(n) * math.Abs(acc-mc)
		fmt.Printf("  [%.2f, %.2f]  %6d  %15.3f  %8.3f\n", lo, hi, count[b], mc, acc)
	}
	fmt.Printf("expected calibration error %.3f (0 is perfectly calibrated)\n", ece)
	fmt.Printf("(robust-max gives the argmax class 1−ε whatever the margin, so confident bins tend to overstate accuracy)\n")
}
