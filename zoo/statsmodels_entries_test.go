package zoo_test

import (
	"math"
	"testing"

	"github.com/gpzoo/gpzoo/gp"
	"github.com/gpzoo/gpzoo/zoo"
)

// runEntry runs entry name on split k with seed 1 and checks the metrics are finite.
func runEntry(t *testing.T, name string, k int) *zoo.Result {
	t.Helper()
	e, err := zoo.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(zoo.Options{Seed: 1, Split: k})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r.TestRMSE == nil || math.IsNaN(*r.TestRMSE) || math.IsNaN(r.TestLL) || math.IsInf(r.TestLL, 0) {
		t.Fatalf("%s split %d: RMSE %v, LL %v", name, k, r.TestRMSE, r.TestLL)
	}
	t.Logf("%-15s split %d: n %d/%d, test RMSE %.4f, test LL %.4f (%.1f s)", name, k, r.NTrain, r.NTest, *r.TestRMSE, r.TestLL, r.TrainSeconds)
	return r
}

// registeredEntry reports whether entry name exists, and fails the test unless it does exactly when component
// (a kernel or likelihood family) is registered: the entries of a component come and go with it.
func registeredEntry(t *testing.T, name string, registered bool) bool {
	t.Helper()
	_, err := zoo.Lookup(name)
	if (err == nil) != registered {
		t.Errorf("entry %s: lookup error %v, its component registered: %v", name, err, registered)
	}
	return err == nil
}

// TestCO2Entries runs the CO₂ extrapolation entries in full on the embedded record (monthly means of 1968–1991
// train, the 120 months of 1992–2001 test): SE + periodic, its period from the periodogram, explains the training
// months far better than SE alone (it does not collapse to SE), and the spectral mixture, initialised from the
// periodogram, explains them better still and extrapolates the trend and the yearly cycle with a lower test RMSE
// than the SE kernel, which only follows the trend (each entry the best of its restarts by the training
// objective).
func TestCO2Entries(t *testing.T) {
	se, per := runEntry(t, "co2/se", 0), runEntry(t, "co2/se-per", 0)
	if !(per.ELBOPerPoint > se.ELBOPerPoint+1) {
		t.Errorf("SE + periodic training log marginal likelihood %.4f per month, SE %.4f: want SE + periodic's above by more than 1 (the yearly cycle)", per.ELBOPerPoint, se.ELBOPerPoint)
	}
	_, hasSM := gp.LookupKernel("sm10")
	if !registeredEntry(t, "co2/sm", hasSM) {
		return
	}
	sm := runEntry(t, "co2/sm", 0)
	for _, r := range []*zoo.Result{se, per, sm} {
		if r.NTest != 120 || r.NTrain < 250 || r.NTrain > 288 || r.DataSource != "embedded:co2" {
			t.Errorf("%s: %d training months, %d test months from %s; want about 288 (1968–1991), 120 (1992–2001), embedded", r.Entry, r.NTrain, r.NTest, r.DataSource)
		}
	}
	if !(sm.ELBOPerPoint > per.ELBOPerPoint) {
		t.Errorf("spectral mixture training log marginal likelihood %.4f per month, SE + periodic %.4f: want the SM's higher", sm.ELBOPerPoint, per.ELBOPerPoint)
	}
	// Its test LL beats SE's in the pure-Go build, whose bits are the same on every machine (−1.73 against −2.30),
	// and is asserted there. In the openblas build the fit depends on OpenBLAS's kernels: forced to SkylakeX, −1.67
	// (threaded) and −1.75 (one thread); with the generic kernels OpenBLAS picks on a masked CPU, −2.73. Their
	// roundings lead L-BFGS to other fits of about the same training evidence (2.0335–2.0351 per month), the SM
	// overconfident through the early-1990s slowdown in the worst of them: logged only in that build.
	if sm.Build == "purego" && !(sm.TestLL > se.TestLL) {
		t.Errorf("pure-Go build: spectral mixture test LL %.4f, SE %.4f: want the SM's higher", sm.TestLL, se.TestLL)
	}
	t.Logf("test LL (%s build): spectral mixture %.4f, SE %.4f", sm.Build, sm.TestLL, se.TestLL)
	if !(*sm.TestRMSE < 0.75**se.TestRMSE) {
		t.Errorf("spectral mixture test RMSE %.4f, SE %.4f: want the SM's below 3/4 of the SE's", *sm.TestRMSE, *se.TestRMSE)
	}
	e, err := zoo.Lookup("co2/se")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(zoo.Options{Split: 1}); err == nil {
		t.Error("co2 split 1: want an error (only split 0)")
	}
}

// TestEngelEntries runs the Engel entries in full on three splits: the heteroscedastic likelihood, whose noise
// follows income, predicts the held-out households with a higher test log likelihood than the Gaussian one on
// each split.
func TestEngelEntries(t *testing.T) {
	_, hasHet := gp.LookupLikelihood("heteroscedastic")
	if !registeredEntry(t, "engel/svgp-het", hasHet) {
		runEntry(t, "engel/svgp", 0)
		return
	}
	for k := range 3 {
		g, h := runEntry(t, "engel/svgp", k), runEntry(t, "engel/svgp-het", k)
		if g.NTrain+g.NTest != 235 || g.NTest != h.NTest {
			t.Errorf("split %d: %d + %d rows, heteroscedastic %d test rows", k, g.NTrain, g.NTest, h.NTest)
		}
		if !(h.TestLL > g.TestLL) {
			t.Errorf("split %d: heteroscedastic test LL %.4f, Gaussian %.4f: want the heteroscedastic higher", k, h.TestLL, g.TestLL)
		}
	}
}
