package holtwinters_test

import (
	"fmt"
	"math"

	"github.com/prewarm/prewarm/model/holtwinters"
)

// Fit Holt-Winters with additive seasonality to three weeks of a daily
// cycle and forecast the next six hours with a 95% interval.
func Example() {
	y := make([]float64, 24*21)
	for t := range y {
		y[t] = 100 + 20*math.Sin(2*math.Pi*float64(t)/24) + 3*math.Cos(float64(t)*1.7)
	}
	m, err := holtwinters.Fit(y, holtwinters.Spec{
		Seasonality: holtwinters.Additive,
		Periods:     []int{24},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fc, err := m.Forecast(6, 0.95)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fc.Method)
	for k := range fc.Mean {
		fmt.Printf("%d: %.0f [%.0f, %.0f]\n", k+1, fc.Mean[k], fc.Lower[k], fc.Upper[k])
	}
	// Output:
	// ets(A,N,A)[24]
	// 1: 100 [96, 104]
	// 2: 105 [101, 109]
	// 3: 110 [106, 114]
	// 4: 114 [110, 118]
	// 5: 117 [113, 122]
	// 6: 119 [115, 124]
}

// A Forecaster with the daily and weekly periods of hourly data picks the
// form by AICc and falls back, with a reason, when the history cannot
// support it.
func ExampleForecaster() {
	f := holtwinters.Forecaster{Periods: []int{24, 168}}
	fc, err := f.Forecast([]float64{5, 5, 5, 5}, 3, 0.9)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fc.Method, fc.Mean, fc.Fallback)
	// Output: naive [5 5 5] naive: the history is constant
}
