package planner

import (
	"math"

	"github.com/prewarm/prewarm/model"
)

// Assess measures how the model, the seasonal profile and seasonal naive
// would have done over the last window steps of history, forecasting chunk
// steps at a time from rolling origins (each forecast sees only the history
// before its origin), and returns the evidence for Gate. season is the
// shortest seasonal period and naivePeriod the one seasonal naive repeats
// (e.g. the week when there are two weeks of history), both in steps.
// profile may be nil. Errors that cannot be measured are NaN.
func Assess(history []float64, season, naivePeriod, window, chunk int, level float64,
	modelF, profile model.Forecaster) (GateInput, error) {
	in := GateInput{HistorySteps: len(history), Season: season,
		ModelError: math.NaN(), ProfileError: math.NaN(), NaiveError: math.NaN()}
	n := len(history)
	chunk = max(chunk, 1)
	first := max(n-window, naivePeriod, 1)
	if naivePeriod < 1 || first >= n || modelF == nil {
		return in, nil
	}
	var sm, sp, sn, cnt float64
	for o := first; o < n; o += chunk {
		h := min(chunk, n-o)
		mf, err := modelF.Forecast(history[:o], h, level)
		if err != nil {
			return in, err
		}
		var pf model.Forecast
		if profile != nil {
			if pf, err = profile.Forecast(history[:o], h, level); err != nil {
				return in, err
			}
		}
		for j := 0; j < h; j++ {
			y, naive := history[o+j], history[o+j-naivePeriod]
			if math.IsNaN(y) || math.IsNaN(naive) || j >= len(mf.Mean) || math.IsNaN(mf.Mean[j]) {
				continue
			}
			if profile != nil && (j >= len(pf.Mean) || math.IsNaN(pf.Mean[j])) {
				continue
			}
			sm += math.Abs(y - mf.Mean[j])
			sn += math.Abs(y - naive)
			if profile != nil {
				sp += math.Abs(y - pf.Mean[j])
			}
			cnt++
		}
	}
	if cnt > 0 {
		in.ModelError, in.NaiveError = sm/cnt, sn/cnt
		if profile != nil {
			in.ProfileError = sp / cnt
		}
	}
	return in, nil
}
