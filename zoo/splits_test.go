package zoo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gpzoo/gpzoo/zoo"
)

func TestParseSplits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec string
		want []int
	}{
		{"0-4", []int{0, 1, 2, 3, 4}},
		{"0,2,5", []int{0, 2, 5}},
		{" 7, 0-2 ", []int{7, 0, 1, 2}},
		{"3", []int{3}},
		{"2-2", []int{2}},
	} {
		got, err := zoo.ParseSplits(c.spec)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSplits(%q) = %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
	for _, bad := range []string{"", " ", "a", "1-", "-1", "3-1", "0,,1", "0-2,1", "1,1", "0-1000", "1.5"} {
		if got, err := zoo.ParseSplits(bad); !errors.Is(err, zoo.ErrBadSplits) {
			t.Errorf("ParseSplits(%q) = %v, %v; want ErrBadSplits", bad, got, err)
		}
	}
	for _, c := range []struct {
		splits []int
		want   string
	}{{[]int{0, 1, 2, 3, 4}, "0-4"}, {[]int{0, 2, 5}, "0,2,5"}, {[]int{0, 1, 2, 7}, "0-2,7"}, {[]int{4, 5}, "4,5"}, {nil, ""}} {
		if got := zoo.FormatSplits(c.splits); got != c.want {
			t.Errorf("FormatSplits(%v) = %q, want %q", c.splits, got, c.want)
		}
		if c.splits != nil {
			back, err := zoo.ParseSplits(zoo.FormatSplits(c.splits))
			if err != nil || !slices.Equal(back, c.splits) {
				t.Errorf("round trip of %v: %v, %v", c.splits, back, err)
			}
		}
	}
}

func TestNewStat(t *testing.T) {
	t.Parallel()
	if zoo.NewStat(nil) != nil {
		t.Error("NewStat(nil) not nil")
	}
	one := zoo.NewStat([]float64{2.5})
	if one.Mean != 2.5 || one.Std != nil || one.N != 1 || one.String() != "2.5 ± —" {
		t.Errorf("one value: %+v %q", one, one)
	}
	// 1, 2, 3, 6: mean 3, squared deviations 4+1+0+9 = 14, sample variance 14/3.
	s := zoo.NewStat([]float64{1, 2, 3, 6})
	if s.Mean != 3 || s.N != 4 || s.Std == nil || math.Abs(*s.Std-math.Sqrt(14.0/3)) > 1e-15 {
		t.Errorf("stat %+v", s)
	}
	if s.String() != "3 ± 2.2" {
		t.Errorf("String() = %q", s)
	}
}

// Two splits of the embedded airfoil set with a tiny budget: one result per split, each equal to the
// corresponding single-split run (same seed), the aggregate their mean and sample std, the JSON readable back.
func TestRunSplitsAirfoil(t *testing.T) {
	t.Parallel()
	e, err := zoo.Lookup("airfoil/svgp")
	if err != nil {
		t.Fatal(err)
	}
	o := zoo.Options{Seed: 4, Iters: 3, Inducing: 5, BatchSize: 64}
	var seen []int
	m, err := zoo.RunSplits(e, o, []int{3, 1}, func(r *zoo.Result) { seen = append(seen, r.Split) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{3, 1}) || !slices.Equal(m.Splits, []int{1, 3}) || !slices.Equal(m.Seeds, []uint64{4}) || len(m.Results) != 2 {
		t.Fatalf("splits run %v, multi-result splits %v seeds %v", seen, m.Splits, m.Seeds)
	}
	o.Split = 3
	single, err := e.Run(o)
	if err != nil {
		t.Fatal(err)
	}
	r1, r3 := m.Results[0], m.Results[1]
	if r3.Split != 3 || *r3.TestRMSE != *single.TestRMSE || r3.TestLL != single.TestLL {
		t.Errorf("split 3 in RunSplits: RMSE %v LL %v; alone: RMSE %v LL %v", *r3.TestRMSE, r3.TestLL, *single.TestRMSE, single.TestLL)
	}
	if *r1.TestRMSE == *r3.TestRMSE {
		t.Errorf("splits 1 and 3 gave the same RMSE %v: the split was not passed on", *r1.TestRMSE)
	}
	want := zoo.NewStat([]float64{*r1.TestRMSE, *r3.TestRMSE})
	a := m.Aggregate
	if a.TestRMSE == nil || a.TestRMSE.Mean != want.Mean || *a.TestRMSE.Std != *want.Std || a.TestRMSE.N != 2 ||
		a.TestLL == nil || a.TestLL.Mean != (r1.TestLL+r3.TestLL)/2 || a.TestAccuracy != nil || a.TrainSeconds.N != 2 {
		t.Errorf("aggregate %+v (want RMSE %+v)", a, want)
	}

	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(buf.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"entry", "dataset", "model", "splits", "seeds", "aggregate", "results"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("multi-split JSON lacks %q", k)
		}
	}
	back, err := zoo.ReadResults(&buf)
	if err != nil || len(back) != 2 || back[1].Split != 3 || *back[1].TestRMSE != *r3.TestRMSE {
		t.Errorf("read back: %v %v", back, err)
	}

	// The single-split JSON is today's: stable keys at the top level, no multi-split keys.
	buf.Reset()
	if err := single.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	keys = nil
	if err := json.Unmarshal(buf.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range stableKeys {
		if _, ok := keys[k]; !ok {
			t.Errorf("single-split JSON lacks %q", k)
		}
	}
	if _, ok := keys["results"]; ok {
		t.Error("single-split JSON has a results key")
	}

	if _, err := zoo.RunSplits(e, o, nil, nil); !errors.Is(err, zoo.ErrBadSplits) {
		t.Errorf("no splits: %v", err)
	}
	if _, err := zoo.RunSplits(e, o, []int{1, 1}, nil); !errors.Is(err, zoo.ErrBadSplits) {
		t.Errorf("split twice: %v", err)
	}
	if _, err := zoo.RunSplits(e, o, []int{0, 10}, nil); err == nil {
		t.Error("split 10 of a 10-fold set accepted")
	}
}
