package report

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/seasonal"
	"github.com/prewarm/prewarm/planner"
)

// Demand is the report's demand section: the seasons, the model, the gate
// and the holdout accuracy.
type Demand struct {
	// PeriodsDetected are the seasonal periods the history's
	// autocorrelation shows (seasonal.Detect, snapped to the clock's).
	PeriodsDetected []Duration `json:"periods_detected"`
	// PeriodsUsed are the controller's periods with the MinSeasons cycles
	// of history the model needs.
	PeriodsUsed []Duration `json:"periods_used"`
	// Model and Profile are the methods the final refit ran.
	Model   string `json:"model"`
	Profile string `json:"profile,omitempty"`
	// Gate is the controller's verdict at the final refit: which forecast
	// the plan follows, and why.
	Gate Gate `json:"gate"`
	// ForecastQuantile is the calibrated quantile the plan was sized at.
	ForecastQuantile float64 `json:"forecast_quantile"`
	// WarmingUp is true while the history is shorter than the model needs.
	WarmingUp bool `json:"warming_up"`
	// Accuracy is the holdout; nil when the history is too short for one
	// (or for forecaster plan).
	Accuracy *Accuracy `json:"accuracy,omitempty"`
}

// Gate is planner.GateResult: the level the plan follows (model, profile
// or reactive) and the reason.
type Gate struct {
	Level  string `json:"level"`
	Reason string `json:"reason"`
}

// Forecast is the forecast the plan follows (the model's, or the seasonal
// profile's when the gate stepped back) with its 80% and 95% bands.
type Forecast struct {
	Start  time.Time `json:"start"`
	Step   Duration  `json:"step"`
	Method string    `json:"method"`
	// Trusted is false when the gate trusts no forecast: the plan is then
	// the reactive rules and floors, and this is the model's forecast.
	Trusted bool            `json:"trusted"`
	Points  []ForecastPoint `json:"points"`
	// ExpectedRequests is Σ mean × step.
	ExpectedRequests float64 `json:"expected_requests"`
	// PeakMean and PeakUpper95 are the largest mean and 95% upper bound
	// (requests/s), at PeakAt (of the upper bound).
	PeakMean    float64   `json:"peak_mean_rps"`
	PeakUpper95 float64   `json:"peak_upper_95_rps"`
	PeakAt      time.Time `json:"peak_at"`
}

// ForecastPoint is one forecast step (requests/s).
type ForecastPoint struct {
	At      time.Time `json:"at"`
	Mean    float64   `json:"mean"`
	Lower80 float64   `json:"lower_80"`
	Upper80 float64   `json:"upper_80"`
	Lower95 float64   `json:"lower_95"`
	Upper95 float64   `json:"upper_95"`
}

// Accuracy is the holdout: forecasts from rolling origins in the last
// days, each seeing only the history before it, scored on what followed.
type Accuracy struct {
	// Origins is how many forecasts were scored; Horizon each one's
	// length; From the first origin.
	Origins int       `json:"origins"`
	Horizon Duration  `json:"horizon"`
	From    time.Time `json:"from"`
	// NaivePeriod is seasonal naive's period (the gate's: the longest
	// with two cycles of history), also MASE's scale lag.
	NaivePeriod Duration `json:"naive_period"`
	Model       Scores   `json:"model"`
	Profile     *Scores  `json:"profile,omitempty"`
	Naive       Scores   `json:"seasonal_naive"`
	// MASERatio is the model's MASE over seasonal naive's (< 1: better).
	MASERatio float64 `json:"mase_ratio"`
}

// Scores are a method's holdout scores, averaged over the origins.
type Scores struct {
	Method     string  `json:"method"`
	MASE       float64 `json:"mase"`
	SMAPE      float64 `json:"smape"`
	MSIS       float64 `json:"msis"`
	Coverage80 float64 `json:"coverage_80"`
	Coverage95 float64 `json:"coverage_95"`
}

// Holdout set-up: origins a day apart, the last one a horizon (at most a
// week) before the end of the history.
const (
	holdoutOrigins    = 4
	holdoutMaxHorizon = 7 * 24 * time.Hour
)

func (r *run) demand() Demand {
	f := r.final
	d := Demand{Model: f.Model, Profile: f.Profile, Gate: Gate(f.Gate), ForecastQuantile: f.Quantile, WarmingUp: f.WarmingUp}
	hist := r.g.history(r.end, r.settings.History)
	clock := seasonal.ClockPeriods(r.g.step)
	for _, p := range seasonal.Detect(seasonal.Interpolate(hist), seasonal.DetectOptions{Snap: clock}) {
		d.PeriodsDetected = append(d.PeriodsDetected, Duration(time.Duration(p)*r.g.step))
	}
	n := finiteSpan(hist)
	for _, p := range r.settings.Periods {
		if n >= r.cfg.Gating.MinSeasons*int(p/r.g.step) {
			d.PeriodsUsed = append(d.PeriodsUsed, Duration(p))
		}
	}
	return d
}

// finiteSpan is the history's length from its first recorded value.
func finiteSpan(x []float64) int {
	for i, v := range x {
		if !math.IsNaN(v) {
			return len(x) - i
		}
	}
	return 0
}

// forecast is the trusted forecast over the horizon with both bands.
func (r *run) forecast() Forecast {
	f80, f95 := r.final.Forecast, r.f95.Forecast
	fc := Forecast{Start: r.end, Step: Duration(r.g.step), Trusted: r.final.Gate.Level != planner.GateReactive}
	if r.final.Gate.Level == planner.GateProfile && r.final.ProfileForecast.Forecast.Horizon() > 0 {
		f80, f95 = r.final.ProfileForecast, r.f95.ProfileForecast
	}
	fc.Method = f80.Forecast.Method
	if f80.Forecast.Fallback != "" {
		fc.Method += " (fallback: " + f80.Forecast.Fallback + ")"
	}
	h := min(int(r.in.Horizon/r.g.step), f80.Forecast.Horizon())
	for i := range h {
		p := ForecastPoint{At: r.end.Add(time.Duration(i) * r.g.step), Mean: f80.Forecast.Mean[i],
			Lower80: at(f80.Forecast.Lower, i), Upper80: at(f80.Forecast.Upper, i),
			Lower95: at(f95.Forecast.Lower, i), Upper95: at(f95.Forecast.Upper, i)}
		p = p.sane()
		fc.Points = append(fc.Points, p)
		fc.ExpectedRequests += p.Mean * r.g.step.Seconds()
		fc.PeakMean = math.Max(fc.PeakMean, p.Mean)
		if p.Upper95 > fc.PeakUpper95 {
			fc.PeakUpper95, fc.PeakAt = p.Upper95, p.At
		}
	}
	return fc
}

func at(x []float64, i int) float64 {
	if i < len(x) {
		return x[i]
	}
	return math.NaN()
}

// sane orders the bounds around the mean (a missing bound is the mean)
// and keeps a rate from going below zero.
func (p ForecastPoint) sane() ForecastPoint {
	fix := func(v, def float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return def
		}
		return v
	}
	if math.IsNaN(p.Mean) || math.IsInf(p.Mean, 0) {
		p.Mean = 0
	}
	p.Mean = math.Max(p.Mean, 0)
	p.Upper80 = math.Max(fix(p.Upper80, p.Mean), p.Mean)
	p.Upper95 = math.Max(fix(p.Upper95, p.Upper80), p.Upper80)
	p.Lower80 = math.Max(math.Min(fix(p.Lower80, p.Mean), p.Mean), 0)
	p.Lower95 = math.Max(math.Min(fix(p.Lower95, p.Lower80), p.Lower80), 0)
	return p
}

// holdout forecasts from holdoutOrigins origins a day apart, the last a
// horizon before the end of the history, with the controller's model (and
// profile) and with seasonal naive, and scores each forecast on what
// followed (nil when the history cannot hold the origins with two days of
// history before the first).
func (r *run) holdout(ctx context.Context) (*Accuracy, error) {
	step := r.g.step
	h := int(min(r.in.Horizon, holdoutMaxHorizon) / step)
	day := int(24 * time.Hour / step)
	last := len(r.g.values) - h
	first := last - (holdoutOrigins-1)*day
	if h < 1 || first < 2*max(day, 1) {
		return nil, nil
	}
	set := r.settings
	set.Horizon = time.Duration(h) * step
	c80, err := control.New(r.cfg, set)
	if err != nil {
		return nil, err
	}
	set.IntervalLevel = 0.95
	c95, err := control.New(r.cfg, set)
	if err != nil {
		return nil, err
	}
	acc := &Accuracy{Horizon: Duration(time.Duration(h) * step), From: r.g.start.Add(time.Duration(first) * step)}
	var model, profile, naive scoreSum
	for o := first; o <= last; o += max(day, 1) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		at := r.g.start.Add(time.Duration(o) * step)
		train := r.g.history(at, r.settings.History)
		test := r.g.values[o : o+h]
		period := naivePeriod(len(train), r.settings, step)
		a, err := c80.Forecast(at, train)
		if err != nil {
			return nil, err
		}
		b, err := c95.Forecast(at, train)
		if err != nil {
			return nil, err
		}
		acc.NaivePeriod = Duration(time.Duration(period) * step)
		model.add(train, test, a.Forecast.Forecast, b.Forecast.Forecast, period, a.Model)
		if a.ProfileForecast.Forecast.Horizon() > 0 {
			profile.add(train, test, a.ProfileForecast.Forecast, b.ProfileForecast.Forecast, period, a.Profile)
		}
		n80, n95, err := naiveForecasts(train, h, period)
		if err != nil {
			return nil, err
		}
		naive.add(train, test, n80, n95, period, "seasonal naive")
		acc.Origins++
	}
	acc.Model, acc.Naive = model.mean(), naive.mean()
	if profile.n > 0 {
		p := profile.mean()
		acc.Profile = &p
	}
	acc.MASERatio = acc.Model.MASE / acc.Naive.MASE
	if model.n == 0 || naive.n == 0 || math.IsNaN(acc.MASERatio) || math.IsInf(acc.MASERatio, 0) {
		return nil, nil
	}
	return acc, nil
}

// naivePeriod is the gate's seasonal naive period for a history of n
// steps: the longest controller period with two cycles (1: naive).
func naivePeriod(n int, s control.Settings, step time.Duration) int {
	p := 1
	for _, d := range s.Periods {
		if k := int(d / step); n >= 2*k && k > p {
			p = k
		}
	}
	return p
}

func naiveForecasts(train []float64, h, period int) (f80, f95 model.Forecast, err error) {
	var f model.Forecaster = seasonal.Naive{}
	if period > 1 {
		f = seasonal.SeasonalNaive{Period: period}
	}
	if f80, err = f.Forecast(train, h, 0.8); err != nil {
		return f80, f95, fmt.Errorf("seasonal naive: %w", err)
	}
	if f95, err = f.Forecast(train, h, 0.95); err != nil {
		return f80, f95, fmt.Errorf("seasonal naive: %w", err)
	}
	return f80, f95, nil
}

// scoreSum accumulates one method's scores over the origins.
type scoreSum struct {
	sum    Scores
	n      float64
	method string
}

// add scores one origin's forecast on the test steps that were recorded
// (accuracy.Score with the scale at lag period; a window it cannot score,
// e.g. a flat history, is skipped).
func (s *scoreSum) add(train, test []float64, f80, f95 model.Forecast, period int, method string) {
	var y, mean, lo80, hi80, lo95, hi95 []float64
	for j, v := range test {
		if math.IsNaN(v) || j >= len(f80.Mean) || j >= len(f95.Mean) {
			continue
		}
		y = append(y, v)
		mean = append(mean, f80.Mean[j])
		lo80, hi80 = append(lo80, at(f80.Lower, j)), append(hi80, at(f80.Upper, j))
		lo95, hi95 = append(lo95, at(f95.Lower, j)), append(hi95, at(f95.Upper, j))
	}
	if len(y) == 0 {
		return
	}
	sc, err := accuracy.Score(seasonal.Interpolate(train), y, mean, lo95, hi95, period, 0.95)
	if err != nil {
		return
	}
	cov80, err := accuracy.Coverage(y, lo80, hi80)
	if err != nil {
		return
	}
	s.sum.MASE += sc.MASE
	s.sum.SMAPE += sc.SMAPE
	s.sum.MSIS += sc.MSIS
	s.sum.Coverage95 += sc.Coverage
	s.sum.Coverage80 += cov80
	s.n++
	if s.method == "" {
		s.method = method
	}
}

func (s scoreSum) mean() Scores {
	if s.n == 0 {
		return Scores{Method: s.method}
	}
	return Scores{Method: s.method, MASE: s.sum.MASE / s.n, SMAPE: s.sum.SMAPE / s.n, MSIS: s.sum.MSIS / s.n,
		Coverage80: s.sum.Coverage80 / s.n, Coverage95: s.sum.Coverage95 / s.n}
}
