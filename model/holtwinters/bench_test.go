package holtwinters

import "testing"

// BenchmarkFitDoubleSeasonalMinute fits Taylor's double-seasonal model
// (multiplicative, periods 1440 and 10080) to 4 weeks of synthetic
// per-minute data, 40,320 points: the speed bar.
func BenchmarkFitDoubleSeasonalMinute(b *testing.B) {
	y := synthDouble(40320, 1440, 10080, 0.3, 3)
	spec := Spec{Seasonality: Multiplicative, Periods: []int{1440, 10080}, AR1: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fit(y, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitDoubleSeasonalHourly is one M4-Hourly-sized double-seasonal
// fit: 960 points, periods 24 and 168, estimated by the 24-step criterion.
func BenchmarkFitDoubleSeasonalHourly(b *testing.B) {
	y := synthDouble(960, 24, 168, 0.3, 4)
	spec := Spec{Seasonality: Additive, Periods: []int{24, 168}, AR1: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (FitOptions{Horizon: 24}).Fit(y, spec); err != nil {
			b.Fatal(err)
		}
	}
}
