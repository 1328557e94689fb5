package seasonal

import (
	"fmt"

	"github.com/prewarm/prewarm/model"
)

// Naive2 is the M4 competition's reference benchmark, the one OWA divides
// by: when SeasonalityTest says the series is seasonal at Period, it is
// seasonally adjusted with Classical multiplicative decomposition, forecast
// with Naive, and the seasonal indices of the last cycle are put back;
// otherwise it is plain Naive. Its interval is the naive one on the
// adjusted scale, multiplied by the seasonal index.
type Naive2 struct {
	// Period is the cycle length tested for, e.g. 24 for hourly data.
	Period int
}

// Forecast implements model.Forecaster.
func (s Naive2) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if err := checkArgs(history, horizon, level); err != nil {
		return model.Forecast{}, err
	}
	x := FillGaps(history, s.Period)
	if !SeasonalityTest(x, s.Period) {
		f := naiveForecast(x, horizon, level)
		f.Method = "naive2"
		return f, nil
	}
	d, err := Classical(x, s.Period, true)
	if err != nil {
		f := naiveForecast(x, horizon, level)
		f.Method = "naive2"
		f.Fallback = fmt.Sprintf("naive: no seasonal adjustment: %v", err)
		return f, nil
	}
	adjusted := make([]float64, len(x))
	for t := range x {
		adjusted[t] = x[t] / d.Seasonal[t]
	}
	f := naiveForecast(adjusted, horizon, level)
	n := len(x)
	for h := range f.Mean {
		si := d.Figure[(n+h)%s.Period]
		f.Mean[h] *= si
		f.Lower[h] *= si
		f.Upper[h] *= si
	}
	f.Method = "naive2"
	return f, nil
}
