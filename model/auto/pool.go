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
	name string
	need int
	// point forecasts from the history the candidate was built on or a
	// prefix of it (a validation origin).
	point func(x []float64, h int) []float64
	// restarted forecasts from any later window of the same series, which
	// may start elsewhere in the cycle: its estimated parameters are kept
	// and everything derived from where the history starts is redone. nil
	// means point serves any history (the parameter-free shapes).
	restarted func(x []float64, h int) []float64
	// detected marks a candidate built only for a detected season, which
	// validation may leave out to look further back.
	detected bool
}

// pool builds the candidates for the history x and horizon h: the
// non-seasonal ones, and for each season (the clock's, then the
// detected one) the seasonal shapes and models around its day and week.
// Candidates that two seasons share (the same day and week) are built
// once.
func pool(seasons []season, x []float64, h int) []candidate {
	out := nonSeasonalCandidates(x, h)
	seen := map[string]bool{}
	for _, c := range out {
		seen[c.name] = true
	}
	for _, s := range seasons {
		for _, c := range seasonalCandidates(s, x, h) {
			if !seen[c.name] {
				seen[c.name] = true
				c.detected = s.from != "clock"
				out = append(out, c)
			}
		}
	}
	return out
}

// seasonalCandidates builds the pool around the day p and week P of s.
//
// Shapes (seasonal.Profile): seasonal naive at p; the median daily shape
// of the last 3, 7 and 14 days at the latest day's level; the last day's
// shape with a damped trend; the mean of seasonal naive and the 7-day
// shape. With a week: seasonal naive at P, the mean weekly shape of the
// last 2 and 3 weeks at the latest level, and the median of seasonal
// naive, the 7-day shape and the 3-week shape.
//
// Models: Holt-Winters (multiplicative at p for a positive series,
// additive with a damped trend at p, Taylor's double-seasonal at p and P
// with four weeks of history), each estimated over the forecast horizon;
// and the decomposition candidates, STL at p and MSTL at p and P with
// exponential smoothing of the adjusted series, whose level follows the
// latest observations.
func seasonalCandidates(s season, x []float64, h int) []candidate {
	p, long := s.day, s.week
	profile := func(pr seasonal.Profile) candidate {
		return candidate{name: pr.Name(), need: pr.Period, point: pr.Point}
	}
	snaive := profile(seasonal.Profile{Period: p, Cycles: 1})
	week7 := profile(seasonal.Profile{Period: p, Cycles: 7, Robust: true, Relative: true})
	out := []candidate{
		snaive,
		profile(seasonal.Profile{Period: p, Cycles: 3, Robust: true, Relative: true}),
		week7,
		profile(seasonal.Profile{Period: p, Cycles: 14, Robust: true, Relative: true}),
		profile(seasonal.Profile{Period: p, Cycles: 1, Relative: true, Damping: 0.9}),
		combine("mean", snaive, week7),
	}
	if long > p {
		w3 := profile(seasonal.Profile{Period: long, Cycles: 3, Relative: true})
		out = append(out,
			profile(seasonal.Profile{Period: long, Cycles: 1}),
			profile(seasonal.Profile{Period: long, Cycles: 2, Relative: true}),
			w3,
			combine("median", snaive, week7, w3),
		)
	}
	out = append(out, holtWintersCandidates(x, p, long, h)...)
	out = append(out, decompositionCandidates(x, p, long)...)
	return out
}

// nonSeasonalCandidates are naive, and exponential smoothing without and
// with a damped trend estimated over the horizon on the latest
// nonSeasonalTail steps (8 horizons when that is more): the candidates
// that win when the horizon is short against the day (a per-minute series
// forecast for two hours) or there is no cycle at all. (Means of the last
// few steps were members once; they lost to smoothing on the recorded
// traces' tuning half and made no difference on M4.)
func nonSeasonalCandidates(x []float64, h int) []candidate {
	out := []candidate{{name: "naive", need: 1, point: func(x []float64, h int) []float64 {
		out := make([]float64, h)
		for j := range out {
			out[j] = x[len(x)-1]
		}
		return out
	}}}
	tail := max(nonSeasonalTail, 8*h)
	for _, spec := range []holtwinters.Spec{{}, {Trend: holtwinters.DampedTrend}} {
		if c, ok := fittedCandidate(x, spec, h, tail); ok {
			out = append(out, c)
		}
	}
	return out
}

// nonSeasonalTail is how much of a long history, at least, the
// non-seasonal models are estimated on: their level and trend adapt
// within a few hundred steps, and a per-minute month would cost a
// hundred times as much to no purpose.
const nonSeasonalTail = 240

// fitTolerance is the relative convergence tolerance of the candidates'
// parameter searches (holtwinters.FitOptions.Tolerance), and their
// initial states are those of the decomposition of the first cycles
// (KeepInitial): a candidate is judged on held-out errors, which a
// tighter in-sample fit hardly moves (M4 Hourly holdout OWA 0.4426 with
// the defaults, 0.4426 with these), and this cuts the fits' cost by two
// thirds.
const fitTolerance = 1e-3

// fitStall is how many iterations per parameter a candidate's parameter
// search may go without improving by fitTolerance before it stops
// (holtwinters.FitOptions.StallIterations; the package's default is 5).
// It cuts a refit's time by about 15%; M4 Hourly holdout OWA 0.4143
// against 0.4139, the recorded traces' first half 0.8389 against 0.8387.
const fitStall = 3

// scoredHorizons is how many horizons the candidates' multi-step criterion
// scores (holtwinters.FitOptions.ScoredHorizons): 4 rather than the
// package's 8 (M4 holdout OWA 0.4145 against 0.4140, the traces' first
// half 0.839 against 0.845, and a little less time).
const scoredHorizons = 4

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
	return candidate{name: name, need: need,
		point: func(x []float64, h int) []float64 {
			return combined(how, members, x, h, candidate.pointOf)
		},
		restarted: func(x []float64, h int) []float64 {
			return combined(how, members, x, h, candidate.restartedOf)
		}}
}

// combined aggregates the members' forecasts from x, each made by its
// forecaster of.
func combined(how string, members []candidate, x []float64, h int, of func(candidate, []float64, int) []float64) []float64 {
	outs := make([][]float64, len(members))
	for i, m := range members {
		outs[i] = of(m, x, h)
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
}

// pointOf forecasts from the history c was built on or a prefix of it.
func (c candidate) pointOf(x []float64, h int) []float64 { return c.point(x, h) }

// restartedOf forecasts from any later window of the series (see
// candidate.restarted).
func (c candidate) restartedOf(x []float64, h int) []float64 {
	if c.restarted != nil {
		return c.restarted(x, h)
	}
	return c.point(x, h)
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

// holtWintersCandidates fits Holt-Winters forms to the history x, each
// estimated by its in-sample errors over the horizon h (capped at p;
// holtwinters.FitOptions.Horizon), since it is judged at the horizon:
// multiplicative seasonality at p (positive series), additive seasonality
// with a damped trend at p, both on the last recentDays days (at least
// minTail steps), and Taylor's double-seasonal form at p and long with
// AR(1) errors (doubleSeasonal) on the whole history when it holds four
// long cycles. Forms that fail to fit are left out.
func holtWintersCandidates(x []float64, p, long, h int) []candidate {
	recent := max(minTail, recentDays*p)
	forms := []struct {
		spec holtwinters.Spec
		ok   bool
		tail int
	}{
		{holtwinters.Spec{Seasonality: holtwinters.Multiplicative, Periods: []int{p}}, allPositive(x), recent},
		{holtwinters.Spec{Trend: holtwinters.DampedTrend, Seasonality: holtwinters.Additive, Periods: []int{p}}, true, recent},
		{doubleSeasonal(x, p, long), long > p && len(x) >= 4*long, 0},
	}
	var out []candidate
	for _, f := range forms {
		if !f.ok || len(x) <= 2*f.spec.Periods[len(f.spec.Periods)-1] {
			continue
		}
		if c, ok := fittedCandidate(x, f.spec, h, f.tail); ok {
			out = append(out, c)
		}
	}
	return out
}

// doubleSeasonal is Taylor's double-seasonal form with AR(1) errors at p
// and long, on the log scale for a positive series (chosen on the M4
// holdout, OWA 0.414 against 0.416 raw, and the traces' first half,
// 0.845 against 0.858).
func doubleSeasonal(x []float64, p, long int) holtwinters.Spec {
	spec := holtwinters.Spec{Seasonality: holtwinters.Additive, Periods: []int{p, long}, AR1: true}
	if allPositive(x) {
		spec.BoxCox = holtwinters.Lambda(0)
	}
	return spec
}

// Long histories. A single-period model and the daily STL look at the
// last recentDays days of the history (at least minTail steps), the
// weekly MSTL at the last three weeks: a smoothing model forgets older
// data within a few cycles, and STL's LOESS fits near the end hardly move
// when cycles older than its seasonal window are cut (11 for the day, 15
// for the week). minTail is the longest M4 Hourly history, so nothing is
// cut there; at 30 minutes it is 20 days of a 28-day history (2000, the
// whole history, took 15% more time per refit with the same scores on
// M4 Hourly and the recorded traces, none of whose histories is longer;
// on 28-day histories the cuts' price is in TestLongHistories and
// docs/forecasting.md). A per-minute month costs a third as much.
const (
	minTail    = 960
	recentDays = 14
)

// mstlIterations is how many times MSTL re-estimates each period (R's
// mstl: 2). Once scores as well (M4 Hourly holdout OWA 0.4139 against
// 0.4145 twice, the recorded traces' first half unchanged) at half the
// cost of the weekly decomposition, which is redone at every validation
// origin.
const mstlIterations = 1

// fittedCandidate estimates spec on x (its last tail steps when tail > 0)
// over the horizon h once (a point forecaster, so the fit skips what only
// the model's own intervals need: PointOnly); at a validation origin the model is re-run
// with the same parameters over the history before the origin
// (Model.PointForecast, one pass), so the parameters have seen the
// validation stretch, a mild optimism every fitted candidate shares.
func fittedCandidate(x []float64, spec holtwinters.Spec, h, tail int) (candidate, bool) {
	fitOn := x
	if tail > 0 && len(x) > tail {
		fitOn = x[len(x)-tail:]
	}
	m, err := holtwinters.FitOptions{Horizon: h, Tolerance: fitTolerance, StallIterations: fitStall, KeepInitial: true, PointOnly: true, ScoredHorizons: scoredHorizons}.Fit(fitOn, spec)
	if err != nil {
		return candidate{}, false
	}
	need := 3
	if ps := spec.Periods; len(ps) > 0 && spec.Seasonality != holtwinters.None {
		need = 2 * ps[len(ps)-1]
	}
	run := func(forecast func([]float64, int) ([]float64, error)) func([]float64, int) []float64 {
		return func(y []float64, h int) []float64 {
			if tail > 0 && len(y) > tail {
				y = y[len(y)-tail:]
			}
			f, err := forecast(y, h)
			if err != nil {
				return nanForecast(h)
			}
			return f
		}
	}
	return candidate{name: m.String(), need: need,
		point: run(m.PointForecast), restarted: run(m.PointForecastRestarted)}, true
}

// decompositionCandidates are STL at p, and MSTL at p and long (when x
// holds more than two long cycles), each with exponential smoothing of
// the seasonally adjusted series (level or damped trend, chosen by AICc
// as R's ets does) and the last cycle of each seasonal part carried
// forward: R's stlf and mstl forecasts (MSTL estimating each period
// once, mstlIterations). The smoothing parameters are
// estimated once on the whole history; at a validation origin the
// decomposition is redone on the history before it (it must not see
// the stretch it is scored on) and the smoothing re-run with the same
// parameters. Long histories are cut as for the Holt-Winters forms.
func decompositionCandidates(x []float64, p, long int) []candidate {
	type set struct {
		periods []int
		tail    int
	}
	sets := []set{{[]int{p}, max(minTail, recentDays*p)}}
	if long > p && len(x) > 2*long {
		sets = append(sets, set{[]int{p, long}, max(minTail, 3*long)})
	}
	// One scratch space serves every decomposition the candidates make,
	// here and at each validation origin (they run one at a time).
	opts := seasonal.MSTLOptions{Iterate: mstlIterations, Scratch: &seasonal.Scratch{}}
	var out []candidate
	for _, st := range sets {
		periods, tail := st.periods, st.tail
		recent := func(y []float64) []float64 { return y[max(0, len(y)-tail):] }
		d, err := seasonal.MSTL(recent(x), periods, opts)
		if err != nil {
			continue
		}
		m, err := holtwinters.Auto(d.Adjusted(), nil, holtwinters.AutoOptions{
			Trends: []holtwinters.Trend{holtwinters.NoTrend, holtwinters.DampedTrend},
			AR1:    []bool{false}, BoxCox: []*float64{nil}, Fit: holtwinters.FitOptions{Horizon: 1, Tolerance: fitTolerance, StallIterations: fitStall, KeepInitial: true, PointOnly: true}})
		if err != nil {
			continue
		}
		name := "stl"
		if len(periods) > 1 {
			name = "mstl"
		}
		name = fmt.Sprintf("%s%v+%v", name, periods, m)
		// forecast decomposes y (or reuses the decomposition of x, which
		// point is first called on) and smooths its adjusted part.
		forecast := func(y []float64, h int, opts seasonal.MSTLOptions, reuse bool,
			smooth func([]float64, int) ([]float64, error)) []float64 {
			dy := d
			if !reuse {
				var err error
				if dy, err = seasonal.MSTL(recent(y), periods, opts); err != nil {
					return nanForecast(h)
				}
			}
			f, err := smooth(dy.Adjusted(), h)
			if err != nil {
				return nanForecast(h)
			}
			for j, s := range dy.SeasonalForecast(h) {
				f[j] += s
			}
			return f
		}
		out = append(out, candidate{name: name, need: 2*periods[len(periods)-1] + 1,
			point: func(y []float64, h int) []float64 {
				return forecast(y, h, opts, len(y) == len(x), m.PointForecast)
			},
			// A later window is decomposed afresh, with its own working
			// memory: windows may be forecast concurrently.
			restarted: func(y []float64, h int) []float64 {
				return forecast(y, h, seasonal.MSTLOptions{Iterate: mstlIterations}, false, m.PointForecastRestarted)
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
