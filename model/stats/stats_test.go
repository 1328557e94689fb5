package stats

import (
	"math"
	"testing"
)

// Reference values from R 4:
//
//	quantile(c(1, 2, 4, 7, 11), c(0, 0.1, 0.25, 0.5, 0.9, 1))   # type 7
//	# 1.0 1.4 2.0 4.0 9.4 11.0
//	coef(lm(c(2, 4.5, 6, 9) ~ c(0, 1, 2, 3)))  # 2.00 2.25
//	coef(lm(c(3, 5, 4) ~ c(1, 4, 9)))          # 3.57142857143 0.09183673469
//	coef(lm(c(2, 6, 8) ~ c(0, 2, 3)))          # 2 2
func TestQuantile(t *testing.T) {
	s := []float64{1, 2, 4, 7, 11}
	for _, tc := range []struct{ q, want float64 }{
		{0, 1}, {0.1, 1.4}, {0.25, 2}, {0.5, 4}, {0.9, 9.4}, {1, 11}, {1.5, 11}, {-0.1, 1},
	} {
		if got := Quantile(s, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("empty: want NaN")
	}
	if got := Quantile([]float64{5}, 0.3); got != 5 {
		t.Errorf("one value: %v", got)
	}
}

func TestFitLine(t *testing.T) {
	tests := []struct {
		name       string
		x, y       []float64
		slope, icp float64
	}{
		{"index", nil, []float64{2, 4.5, 6, 9}, 2.25, 2},
		{"given x", []float64{1, 4, 9}, []float64{3, 5, 4}, 0.09183673469, 3.57142857143},
		{"NaN skipped", nil, []float64{2, math.NaN(), 6, 8}, 2, 2},
		{"one point", nil, []float64{math.NaN(), 5}, 0, 5},
		{"same x", []float64{2, 2}, []float64{1, 3}, 0, 2},
	}
	for _, tc := range tests {
		l := FitLine(tc.x, tc.y)
		if math.Abs(l.Slope-tc.slope) > 1e-10 || math.Abs(l.Intercept-tc.icp) > 1e-10 {
			t.Errorf("%s: got %+v, want slope %v intercept %v", tc.name, l, tc.slope, tc.icp)
		}
	}
	if l := FitLine(nil, []float64{math.NaN()}); !math.IsNaN(l.Intercept) {
		t.Errorf("no points: %+v", l)
	}
	if got := (Line{Slope: 2, Intercept: 1}).At(3); got != 7 {
		t.Errorf("At = %v", got)
	}
}
