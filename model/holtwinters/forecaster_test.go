package holtwinters

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/model"
)

func nanAt(y []float64, idx ...int) []float64 {
	y = append([]float64(nil), y...)
	for _, i := range idx {
		y[i] = math.NaN()
	}
	return y
}

func infAt(y []float64, idx ...int) []float64 {
	y = append([]float64(nil), y...)
	for _, i := range idx {
		y[i] = math.Inf(1)
	}
	return y
}

func constant(n int, v float64) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = v
	}
	return y
}

// TestForecasterAwkwardInput checks each documented fallback: the method
// that ran, the reason recorded, and a finite forecast.
func TestForecasterAwkwardInput(t *testing.T) {
	hourly := synthDouble(24*7*3, 24, 168, 0.3, 5)
	withZeros := append([]float64(nil), hourly...)
	for i := 0; i < len(withZeros); i += 24 {
		withZeros[i] = 0
	}
	mult := &Spec{Seasonality: Multiplicative}
	tests := []struct {
		name         string
		f            Forecaster
		y            []float64
		wantMethod   string // substring
		wantFallback string // substring; "" means no fallback
	}{
		{"regular double seasonal", Forecaster{Periods: []int{24, 168}}, hourly, "ets(", ""},
		{"gaps are coasted over", Forecaster{Periods: []int{24, 168}}, nanAt(hourly, 5, 6, 7, 200, 300, len(hourly)-1), "ets(", ""},
		{"leading gaps dropped", Forecaster{Periods: []int{24}}, nanAt(hourly, 0, 1, 2, 3), "ets(", ""},
		{"constant", Forecaster{Periods: []int{24}}, constant(100, 3), "naive", "constant"},
		{"constant with gaps", Forecaster{Periods: []int{24}}, nanAt(constant(100, 3), 10, 99), "naive", "constant"},
		{"all zeros", Forecaster{Periods: []int{24}}, constant(100, 0), "naive", "constant"},
		{"zeros rule out multiplicative", Forecaster{Periods: []int{24}, Spec: mult}, withZeros, "snaive(24)", "strictly positive"},
		{"zeros with auto", Forecaster{Periods: []int{24, 168}}, withZeros, "ets(", ""},
		{"weekly period too long", Forecaster{Periods: []int{24, 168}}, hourly[:200], "ets(", "periods [168] dropped"},
		{"shorter than one day", Forecaster{Periods: []int{24}}, hourly[:20], "ets(A,", "periods [24] dropped"},
		{"two points", Forecaster{Periods: []int{24}}, hourly[:2], "naive", "too short"},
		{"one point", Forecaster{Periods: []int{24}}, hourly[:1], "naive", "constant"},
		{"one finite point among gaps", Forecaster{Periods: []int{24}}, []float64{math.NaN(), 4, math.NaN()}, "naive", "constant"},
		{"infinite values are gaps", Forecaster{Periods: []int{24}}, infAt(hourly, 10, 400), "ets(", "history[10] = +Inf treated as missing"},
		{"mostly missing", Forecaster{Periods: []int{24}}, nanAt(hourly[:72], seq(1, 71)...), "snaive(24)", "too short"},
		{"few finite values", Forecaster{Periods: []int{24}}, nanAt(hourly[:72], seq(2, 70)...), "snaive(24)", "too short"},
		{"few finite values, non-seasonal", Forecaster{}, nanAt(hourly[:72], seq(2, 70)...), "ets(A,", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := append([]float64(nil), tc.y...)
			fc, err := tc.f.Forecast(tc.y, 30, 0.9)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(fc.Method, tc.wantMethod) {
				t.Errorf("method %q, want %q in it (fallback %q)", fc.Method, tc.wantMethod, fc.Fallback)
			}
			if tc.wantFallback == "" && fc.Fallback != "" || !strings.Contains(fc.Fallback, tc.wantFallback) {
				t.Errorf("fallback %q, want %q", fc.Fallback, tc.wantFallback)
			}
			checkForecast(t, fc, 30, 0.9)
			for i := range orig {
				if !(orig[i] == tc.y[i] || math.IsNaN(orig[i]) && math.IsNaN(tc.y[i])) {
					t.Fatalf("history[%d] modified", i)
				}
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// checkForecast asserts the shape and finiteness of a forecast and that
// its interval contains the point forecast.
func checkForecast(t *testing.T, fc model.Forecast, h int, level float64) {
	t.Helper()
	if fc.Horizon() != h || len(fc.Lower) != h || len(fc.Upper) != h {
		t.Fatalf("lengths %d/%d/%d, want %d", len(fc.Mean), len(fc.Lower), len(fc.Upper), h)
	}
	if fc.Level != level {
		t.Errorf("level %v, want %v", fc.Level, level)
	}
	for k := range h {
		if isNaNOrInf(fc.Mean[k]) || isNaNOrInf(fc.Lower[k]) || isNaNOrInf(fc.Upper[k]) {
			t.Fatalf("step %d not finite: %v [%v, %v]", k+1, fc.Mean[k], fc.Lower[k], fc.Upper[k])
		}
		if fc.Lower[k] > fc.Mean[k] || fc.Mean[k] > fc.Upper[k] {
			t.Fatalf("step %d: mean %v outside [%v, %v]", k+1, fc.Mean[k], fc.Lower[k], fc.Upper[k])
		}
	}
}

func TestForecasterArgumentErrors(t *testing.T) {
	y := synthDouble(100, 24, 168, 0.3, 6)
	tests := []struct {
		name    string
		y       []float64
		h       int
		level   float64
		wantErr error
	}{
		{"zero horizon", y, 0, 0.9, nil},
		{"level 0", y, 5, 0, nil},
		{"level 1", y, 5, 1, nil},
		{"level NaN", y, 5, math.NaN(), nil},
		{"empty", nil, 5, 0.9, model.ErrNoData},
		{"all NaN", []float64{math.NaN(), math.NaN()}, 5, 0.9, model.ErrNoData},
		{"only infinite values", []float64{math.Inf(1), math.NaN(), math.Inf(-1)}, 5, 0.9, model.ErrNoData},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Forecaster{Periods: []int{24}}.Forecast(tc.y, tc.h, tc.level)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}
