package auto

import (
	"fmt"
	"math"
	"sort"

	"github.com/prewarm/prewarm/model/holtwinters"

	"github.com/prewarm/prewarm/model/seasonal"
)

// candidate is one member of the pool: a point forecaster on a gap-free
// history and the least history it needs.
type candidate struct {
	name  string
	need  int
	point func(x []float64, h int) []float64
}

// daysPerWeek turns a daily period into the weekly one tried when only
// the daily cycle was detected or configured: demand that follows the
// clock usually follows the calendar too, and validation drops the weekly
// candidates where it does not.
const daysPerWeek = 7

// candidates builds the pool for the given periods and history length.
//
// Around the short period p (the day): seasonal naive; the median daily
// shape of the last 3, 7 and 14 days at the latest day's level; the last
// day's shape with a damped trend. Around the long period P (the week; 7p
// when only p is known): seasonal naive and the mean weekly shape of the
// last 2 and 3 weeks. And two fixed combinations that hedge between them.
// Without any period the pool is naive and the means of the last few steps.
func candidates(periods []int, x []float64) []candidate {
	n := len(x)
	if len(periods) == 0 {
		return nonSeasonalCandidates()
	}
	p := periods[0]
	long := p * daysPerWeek
	if len(periods) > 1 {
		p = periods[len(periods)-2]
		long = periods[len(periods)-1]
	}
	profile := func(pr seasonal.Profile) candidate {
		return candidate{name: pr.Name(), need: pr.Period, point: pr.Point}
	}
	snaive := profile(seasonal.Profile{Period: p, Cycles: 1})
	week7 := profile(seasonal.Profile{Period: p, Cycles: 7, Robust: true, Relative: true})
	pool := []candidate{
		snaive,
		profile(seasonal.Profile{Period: p, Cycles: 3, Robust: true, Relative: true}),
		week7,
		profile(seasonal.Profile{Period: p, Cycles: 14, Robust: true, Relative: true}),
		profile(seasonal.Profile{Period: p, Cycles: 1, Relative: true, Damping: 0.9}),
		combine("mean", snaive, week7),
	}
	// Weekly candidates need the week at least twice before the earliest
	// validation origin to be worth scoring.
	if long > p && n >= 3*long {
		wNaive := profile(seasonal.Profile{Period: long, Cycles: 1})
		w3 := profile(seasonal.Profile{Period: long, Cycles: 3, Relative: true})
		pool = append(pool,
			wNaive,
			profile(seasonal.Profile{Period: long, Cycles: 2, Relative: true}),
			w3,
			combine("median", snaive, week7, w3),
		)
	}
	pool = append(pool, holtWintersCandidates(x, p, long)...)
	return pool
}

func nonSeasonalCandidates() []candidate {
	var pool []candidate
	pool = append(pool, candidate{name: "naive", need: 1, point: func(x []float64, h int) []float64 {
		out := make([]float64, h)
		for j := range out {
			out[j] = x[len(x)-1]
		}
		return out
	}})
	for _, k := range []int{3, 12, 48} {
		pool = append(pool, candidate{name: fmt.Sprintf("mean(last %d)", k), need: k, point: func(x []float64, h int) []float64 {
			s := 0.0
			for _, v := range x[len(x)-k:] {
				s += v
			}
			out := make([]float64, h)
			for j := range out {
				out[j] = s / float64(k)
			}
			return out
		}})
	}
	return pool
}

// combine averages (mean) or takes the median of members' forecasts step
// by step.
func combine(how string, members ...candidate) candidate {
	need := 0
	name := how + "("
	for i, m := range members {
		need = max(need, m.need)
		if i > 0 {
			name += ", "
		}
		name += m.name
	}
	name += ")"
	return candidate{name: name, need: need, point: func(x []float64, h int) []float64 {
		outs := make([][]float64, len(members))
		for i, m := range members {
			outs[i] = m.point(x, h)
		}
		out := make([]float64, h)
		col := make([]float64, len(members))
		for j := range out {
			for i := range outs {
				col[i] = outs[i][j]
			}
			out[j] = aggregate(how, col)
		}
		return out
	}}
}

func aggregate(how string, v []float64) float64 {
	if how == "median" {
		sort.Float64s(v)
		k := len(v)
		if k%2 == 1 {
			return v[k/2]
		}
		return (v[k/2-1] + v[k/2]) / 2
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// holtWintersCandidates fits Holt-Winters forms to the whole history x:
// multiplicative seasonality at p (positive series), additive seasonality
// with a damped trend at p, and Taylor's double-seasonal form at p and
// long when x holds four long cycles. Each is fitted once; at a
// validation origin it is re-run with the same parameters over the
// history before the origin (holtwinters.FitWith, a single pass), so the
// parameters have seen the validation stretch, a mild optimism shared by
// all forms. Forms that fail to fit are left out.
func holtWintersCandidates(x []float64, p, long int) []candidate {
	type form struct {
		spec holtwinters.Spec
		ok   bool
	}
	forms := []form{
		{holtwinters.Spec{Seasonality: holtwinters.Multiplicative, Periods: []int{p}}, allPositive(x)},
		{holtwinters.Spec{Trend: holtwinters.DampedTrend, Seasonality: holtwinters.Additive, Periods: []int{p}}, true},
		{holtwinters.Spec{Seasonality: holtwinters.Additive, Periods: []int{p, long}}, long > p && len(x) >= 4*long},
	}
	var out []candidate
	for _, f := range forms {
		if !f.ok || len(x) < 3*f.spec.Periods[len(f.spec.Periods)-1] {
			continue
		}
		m, err := holtwinters.Fit(x, f.spec)
		if err != nil {
			continue
		}
		spec, params, n := f.spec, m.Params(), len(x)
		out = append(out, candidate{name: m.String(), need: 2 * spec.Periods[len(spec.Periods)-1],
			point: func(y []float64, h int) []float64 {
				fitted := m
				if len(y) != n {
					var err error
					if fitted, err = holtwinters.FitWith(y, spec, params); err != nil {
						return nanForecast(h)
					}
				}
				fc, err := fitted.Forecast(h, 0.95)
				if err != nil {
					return nanForecast(h)
				}
				return fc.Mean
			}})
	}
	return out
}

// nanForecast marks a failed candidate forecast; its validation score is
// then +Inf and the candidate is never chosen.
func nanForecast(h int) []float64 {
	out := make([]float64, h)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

func allPositive(x []float64) bool {
	for _, v := range x {
		if !(v > 0) {
			return false
		}
	}
	return true
}
