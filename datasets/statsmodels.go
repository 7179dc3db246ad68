package datasets

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Two small public-domain data sets of statsmodels (statsmodels/datasets, BSD-3 code; both data sets' COPYRIGHT:
// "This is public domain."), embedded verbatim; provenance and checksums in embed/README.md.

// co2Weekly is statsmodels/datasets/co2/co2.csv: the Scripps Mauna Loa weekly CO₂ series (Keeling & Whorf
// 2004), March 1958 – December 2001, header date,co2; dates YYYYMMDD, an empty co2 cell where the week has no
// value.
//
//go:embed embed/statsmodels/co2.csv
var co2Weekly []byte

// engelCSV is statsmodels/datasets/engel/engel.csv: Engel's (1857) 235 Belgian working-class households
// (Koenker & Bassett 1982), header "income","foodexp" (annual Belgian francs).
//
//go:embed embed/statsmodels/engel.csv
var engelCSV []byte

// EmbeddedCO2Monthly returns the monthly means of the embedded Mauna Loa weekly CO₂ series (statsmodels'
// co2.csv, March 1958 – December 2001): X [N,1] the month's middle in decimal years (year + (month − 0.5)/12), Y
// [N,1] the mean of the month's weekly values in ppmv, months in order. A month whose weeks have no value (the
// series' gaps) is left out, so N is at most the 526 months of the record. Errors: a *FormatError for a malformed
// line (the embedded file has none).
func EmbeddedCO2Monthly() (*Dataset, error) {
	const name = "embedded statsmodels/co2.csv"
	type month struct {
		key       int // year·12 + month − 1
		sum       float64
		count     int
		yr, index int
	}
	var months []month
	for i, line := range strings.Split(strings.TrimSpace(string(co2Weekly)), "\n") {
		if i == 0 {
			if line != "date,co2" {
				return nil, &FormatError{File: name, Line: 1, Msg: fmt.Sprintf("header %q, want date,co2", line)}
			}
			continue
		}
		date, val, ok := strings.Cut(strings.TrimSpace(line), ",")
		if !ok || len(date) != 8 {
			return nil, &FormatError{File: name, Line: i + 1, Msg: fmt.Sprintf("%q is not YYYYMMDD,value", line)}
		}
		ymd, err := strconv.Atoi(date)
		y, m := ymd/10000, ymd/100%100
		if err != nil || m < 1 || m > 12 {
			return nil, &FormatError{File: name, Line: i + 1, Msg: fmt.Sprintf("bad date %q", date)}
		}
		if val == "" {
			continue // a week without a value
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v <= 0 {
			return nil, &FormatError{File: name, Line: i + 1, Msg: fmt.Sprintf("bad CO₂ value %q", val)}
		}
		key := y*12 + m - 1
		if n := len(months); n == 0 || months[n-1].key != key {
			if n > 0 && months[n-1].key > key {
				return nil, &FormatError{File: name, Line: i + 1, Msg: fmt.Sprintf("date %s out of order", date)}
			}
			months = append(months, month{key: key, yr: y, index: m})
		}
		months[len(months)-1].sum += v
		months[len(months)-1].count++
	}
	x, yv := mat.NewDense(len(months), 1, nil), mat.NewDense(len(months), 1, nil)
	for i, m := range months {
		x.Set(i, 0, float64(m.yr)+(float64(m.index)-0.5)/12)
		yv.Set(i, 0, m.sum/float64(m.count))
	}
	return &Dataset{Name: "co2", X: x, Y: yv, FeatureNames: []string{"year"}}, nil
}

// EmbeddedEngel returns the embedded Engel food-expenditure data (statsmodels' engel.csv): X [235,1] the
// household's annual income, Y [235,1] its annual food expenditure (Belgian francs, 1857), a classic example of
// noise growing with the input. Errors: a *FormatError for a malformed line (the embedded file has none).
func EmbeddedEngel() (*Dataset, error) {
	const name = "embedded statsmodels/engel.csv"
	lines := strings.Split(strings.TrimSpace(string(engelCSV)), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != `"income","foodexp"` {
		return nil, &FormatError{File: name, Line: 1, Msg: "want the header \"income\",\"foodexp\""}
	}
	x, y := mat.NewDense(len(lines)-1, 1, nil), mat.NewDense(len(lines)-1, 1, nil)
	for i, line := range lines[1:] {
		a, b, ok := strings.Cut(strings.TrimSpace(line), ",")
		inc, err1 := strconv.ParseFloat(a, 64)
		food, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || inc <= 0 || food <= 0 {
			return nil, &FormatError{File: name, Line: i + 2, Msg: fmt.Sprintf("%q is not income,foodexp", line)}
		}
		x.Set(i, 0, inc)
		y.Set(i, 0, food)
	}
	return &Dataset{Name: "engel", X: x, Y: y, FeatureNames: []string{"income"}}, nil
}
