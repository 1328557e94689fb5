package holtwinters

import "testing"

// BenchmarkFitDoubleSeasonalMinute fits a double-seasonal model (periods
// 1440 and 10080, AR(1) errors) to 4 weeks of synthetic per-minute data,
// 40,320 points: the speed bar. "multiplicative" is dshw's form
// estimated one step ahead; "additive-h60" is the default Forecaster's
// form estimated over a 60-minute horizon.
func BenchmarkFitDoubleSeasonalMinute(b *testing.B) {
	y := synthDouble(40320, 1440, 10080, 0.3, 3)
	cases := []struct {
		name string
		opts FitOptions
		spec Spec
	}{
		{"multiplicative", FitOptions{}, Spec{Seasonality: Multiplicative, Periods: []int{1440, 10080}, AR1: true}},
		{"additive-h60", FitOptions{Horizon: 60}, Spec{Seasonality: Additive, Periods: []int{1440, 10080}, AR1: true}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.opts.Fit(y, c.spec); err != nil {
					b.Fatal(err)
				}
			}
		})
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

// BenchmarkForecastMultiplicativeMinute is one day's forecast (h = 1440)
// with a 95% interval from a per-minute double-seasonal multiplicative
// model: its variance needs a perturbed path per step (O(h²) steps, see
// modelVariances), the costliest interval of the package.
func BenchmarkForecastMultiplicativeMinute(b *testing.B) {
	y := synthDouble(40320, 1440, 10080, 0.3, 3)
	m, err := Fit(y, Spec{Seasonality: Multiplicative, Periods: []int{1440, 10080}, AR1: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Forecast(1440, 0.95); err != nil {
			b.Fatal(err)
		}
	}
}
