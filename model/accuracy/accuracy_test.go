package accuracy

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// Hand-computed cases. insample = 1..8 with m = 2 has every seasonal
// difference equal to 2, so the scale is 2.
var (
	insample = []float64{1, 2, 3, 4, 5, 6, 7, 8}
	actual   = []float64{10, 20, 0}
	forecast = []float64{12, 15, 0}
)

func TestSMAPE(t *testing.T) {
	// 200·2/22 = 18.1818…, 200·5/35 = 28.5714…, 0/0 counts as 0.
	want := (200.0*2/22 + 200.0*5/35 + 0) / 3
	got, err := SMAPE(actual, forecast)
	if err != nil || !near(got, want, 1e-12) {
		t.Errorf("SMAPE = %v, %v; want %v", got, err, want)
	}
	if _, err := SMAPE([]float64{1}, nil); !errors.Is(err, ErrLength) {
		t.Errorf("length mismatch: err = %v", err)
	}
}

func TestMASEAndScale(t *testing.T) {
	tests := []struct {
		name      string
		m         int
		wantScale float64
	}{
		{"seasonal m=2", 2, 2},
		{"m=1", 1, 1},
		{"m=3", 3, 3},
	}
	for _, tc := range tests {
		scale, err := Scale(insample, tc.m)
		if err != nil || scale != tc.wantScale {
			t.Errorf("%s: Scale = %v, %v; want %v", tc.name, scale, err, tc.wantScale)
		}
		// mean |error| = (2 + 5 + 0)/3
		mase, err := MASE(insample, actual, forecast, tc.m)
		if want := 7.0 / 3 / tc.wantScale; err != nil || !near(mase, want, 1e-12) {
			t.Errorf("%s: MASE = %v, %v; want %v", tc.name, mase, err, want)
		}
	}
	if _, err := Scale([]float64{1, 2}, 24); err == nil {
		t.Error("Scale of a series shorter than its period: no error")
	}
}

func TestMSISAndCoverage(t *testing.T) {
	lower := []float64{9, 21, -1}
	upper := []float64{11, 25, 1}
	// Widths 2, 4, 2; the second actual (20) is 1 below its lower bound:
	// penalty 2/0.05·1 = 40. Mean (2 + 44 + 2)/3 = 16, scale 2 → 8.
	got, err := MSIS(insample, actual, lower, upper, 2, 0.05)
	if err != nil || !near(got, 8, 1e-12) {
		t.Errorf("MSIS = %v, %v; want 8", got, err)
	}
	cov, err := Coverage(actual, lower, upper)
	if err != nil || !near(cov, 2.0/3, 1e-12) {
		t.Errorf("Coverage = %v, %v; want 2/3", cov, err)
	}
	// Above the upper bound: actual 30 over upper 25 by 5 → 200 penalty.
	got, _ = MSIS(insample, []float64{30}, []float64{20}, []float64{25}, 2, 0.05)
	if want := (5.0 + 200) / 2; !near(got, want, 1e-12) {
		t.Errorf("MSIS above = %v, want %v", got, want)
	}
	if _, err := MSIS(insample, actual, lower, upper, 2, 1.5); err == nil {
		t.Error("alpha 1.5 accepted")
	}
}

func TestOWA(t *testing.T) {
	tests := []struct {
		name        string
		smape, mase float64
		want        float64
	}{
		// Naive2 itself scores 1 by definition.
		{"naive2", Naive2HourlySMAPE, Naive2HourlyMASE, 1},
		// The official sNaive hourly figures give its official OWA 0.627.
		{"snaive", 13.912, 1.193, 0.627},
		// And the best entry (Doornik et al.) 0.410.
		{"best entry", 8.913, 0.801, 0.410},
	}
	for _, tc := range tests {
		got := OWA(tc.smape, tc.mase, Naive2HourlySMAPE, Naive2HourlyMASE)
		if math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("%s: OWA = %.4f, want %.3f", tc.name, got, tc.want)
		}
	}
}

func TestScoreAndSummary(t *testing.T) {
	lower := []float64{9, 21, -1}
	upper := []float64{11, 25, 1}
	sc, err := Score(insample, actual, forecast, lower, upper, 2, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	sum.Add(sc)
	sum.Add(Scores{SMAPE: 0, MASE: 0, MSIS: 0, Coverage: 1})
	mean := sum.Mean()
	if !near(mean.MSIS, 4, 1e-12) || !near(mean.Coverage, (2.0/3+1)/2, 1e-12) ||
		!near(mean.SMAPE, sc.SMAPE/2, 1e-12) || !near(mean.MASE, sc.MASE/2, 1e-12) {
		t.Errorf("Summary mean = %+v after %+v and a perfect series", mean, sc)
	}
	var empty Summary
	if !math.IsNaN(empty.Mean().SMAPE) {
		t.Error("empty summary should be NaN")
	}
}

func TestErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	flat := []float64{5, 5, 5, 5, 5, 5}
	tests := []struct {
		name                               string
		insample, actual, mean, lower, upp []float64
		want                               error
		wantText                           string
	}{
		{"NaN forecast", insample, actual, []float64{12, nan, 0}, []float64{9, 21, -1}, []float64{11, 25, 1}, ErrNotFinite, "forecast at step 2"},
		{"infinite upper bound", insample, actual, forecast, []float64{9, 21, -1}, []float64{11, inf, 1}, ErrNotFinite, "upper bound at step 2"},
		{"NaN actual", insample, []float64{nan, 20, 0}, forecast, []float64{9, 21, -1}, []float64{11, 25, 1}, ErrNotFinite, "actual at step 1"},
		{"flat in-sample: zero scale", flat, actual, forecast, []float64{9, 21, -1}, []float64{11, 25, 1}, ErrNotFinite, "MASE undefined"},
		{"lengths differ", insample, actual, forecast[:2], []float64{9, 21}, []float64{11, 25}, ErrLength, "sMAPE"},
	}
	for _, tc := range tests {
		sc, err := Score(tc.insample, tc.actual, tc.mean, tc.lower, tc.upp, 2, 0.95)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantText) {
			t.Errorf("%s: Score = %+v, %v; want %v mentioning %q", tc.name, sc, err, tc.want, tc.wantText)
		}
	}
	if _, err := MASE(flat, actual, forecast, 1); !errors.Is(err, ErrNotFinite) {
		t.Errorf("MASE on a flat in-sample series: err = %v, want ErrNotFinite", err)
	}
}
