package service

import (
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// What the API and the status page show of a pool besides its status: the
// recent decisions as samples (for the capacity and demand charts), the
// forecast in force with the last day's demand beside what was forecast
// for it, and the plan. The decision goroutine computes them (it owns the
// controller) and publishes them under s.mu, so the API never waits on a
// decision.

// historySpan is how far back a pool's samples reach, and historySamples
// how many it keeps: one per historySpan/historySamples (5 minutes), or
// per decision when the interval is longer. A pool holds about 13 KB of
// samples.
const (
	historySpan    = 24 * time.Hour
	historySamples = 288
)

// Sample is one point of GET /api/v1/pools/NAME/history: the last decision
// of its bucket, with the bucket's highest demand.
type Sample struct {
	At        time.Time      `json:"at"`
	DemandRPS Number         `json:"demand_rps"`
	Forecast  ForecastBounds `json:"forecast_rps"`
	Planned   Number         `json:"planned"`
	Wished    int            `json:"wished"`
	Desired   int            `json:"desired"`
	Current   int            `json:"current"`
	Ready     int            `json:"ready"`
}

// sample is a Sample in a third of the memory.
type sample struct {
	at                                   int64 // Unix nanoseconds of the bucket's last decision
	demand, mean, lower, upper, planned  float32
	wished, desired, current, readyCount int32
}

func (s sample) public(loc *time.Location) Sample {
	n := func(v float32) Number { return Number(v) }
	return Sample{At: time.Unix(0, s.at).In(loc), DemandRPS: n(s.demand),
		Forecast: ForecastBounds{Mean: n(s.mean), Lower: n(s.lower), Upper: n(s.upper)},
		Planned:  n(s.planned), Wished: int(s.wished), Desired: int(s.desired), Current: int(s.current), Ready: int(s.readyCount)}
}

// sampleRing keeps the last historySamples samples, one per bucket.
type sampleRing struct {
	bucket time.Duration
	buf    []sample // oldest at head once full
	head   int
}

// add records a decision: in the newest sample when it falls in the same
// bucket (keeping the higher demand), else as a new sample.
func (r *sampleRing) add(s sample, interval time.Duration) {
	r.bucket = max(interval, historySpan/historySamples)
	if n := len(r.buf); n > 0 {
		last := &r.buf[(r.head+n-1)%n]
		if s.at/int64(r.bucket) == last.at/int64(r.bucket) && s.at >= last.at {
			if last.demand > s.demand || s.demand != s.demand { // keep the peak; NaN keeps it too
				s.demand = last.demand
			}
			*last = s
			return
		}
	}
	if len(r.buf) < historySamples {
		r.buf = append(r.buf, s)
		return
	}
	r.buf[r.head] = s
	r.head = (r.head + 1) % len(r.buf)
}

// since returns the samples at or after t, oldest first.
func (r *sampleRing) since(t time.Time, loc *time.Location) []Sample {
	out := make([]Sample, 0, len(r.buf))
	for i := range r.buf {
		s := r.buf[(r.head+i)%len(r.buf)]
		if s.at >= t.UnixNano() {
			out = append(out, s.public(loc))
		}
	}
	return out
}

// ForecastStep is one step of a forecast: from At for one forecast step.
type ForecastStep struct {
	At time.Time `json:"at"`
	ForecastBounds
}

// ObservedStep is a past forecast step: the demand the store had for it
// (the highest per-window value the refits read) and the model's forecast
// for it, made by the refit that owned the step.
type ObservedStep struct {
	At        time.Time `json:"at"`
	DemandRPS Number    `json:"demand_rps"`
	Mean      Number    `json:"mean"`
}

// ForecastView is GET /api/v1/pools/NAME/forecast: the refit in force.
type ForecastView struct {
	Pool string `json:"pool"`
	// MadeAt is the refit's time; the forecast starts there, one Step a
	// value.
	MadeAt time.Time `json:"made_at,omitzero"`
	Step   Duration  `json:"step"`
	// Model is the method that ran, FallbackReason why it is not the one
	// asked for; Level the band's nominal coverage (0.98: the band holds
	// 98% of demand; the plan sizes at its upper bound).
	Model          string  `json:"model"`
	FallbackReason string  `json:"fallback_reason,omitempty"`
	Level          float64 `json:"level"`
	Gate           string  `json:"gate"`
	GateReason     string  `json:"gate_reason"`
	// InCharge and InChargeReason are PoolStatus's: which rule sizes
	// the pool (a cold start's forecast is a guess).
	InCharge       string `json:"in_charge"`
	InChargeReason string `json:"in_charge_reason"`
	// MASE is the model's error over the last day against seasonal
	// naive's (null until it can be scored).
	MASE  Number         `json:"mase"`
	Steps []ForecastStep `json:"steps"`
	// History is the day before MadeAt, one forecast step a point.
	History []ObservedStep `json:"history"`
}

// ScheduleView is GET /api/v1/pools/NAME/schedule: the trusted plan from
// now on (empty when the pool follows the reactive rules alone), and the
// plans of both forecast levels of the refit in force, so an operator sees
// what the other level would do. Every step carries its tiers (reserved,
// on demand, spot, warm: planner.Config.Tiers).
type ScheduleView struct {
	Pool   string    `json:"pool"`
	MadeAt time.Time `json:"made_at,omitzero"`
	Gate   string    `json:"gate"`
	// InCharge and InChargeReason are PoolStatus's: which rule sizes
	// the pool while this plan is in force.
	InCharge       string               `json:"in_charge"`
	InChargeReason string               `json:"in_charge_reason"`
	Steps          []planner.TieredStep `json:"steps"`
	ModelPlan      []planner.TieredStep `json:"model_plan"`
	ProfilePlan    []planner.TieredStep `json:"profile_plan"`
}

// views are a pool's published forecast and schedule.
type views struct {
	forecast ForecastView
	schedule ScheduleView
}

// buildViews computes the views of the refit in force from the
// controller's memory (decision goroutine), each plan's steps split into
// the tiers of the pool's configuration cfg.
func buildViews(name string, ctl *control.Controller, cfg planner.Config) views {
	r := ctl.Last()
	f := r.Forecast
	ch := ctl.InCharge()
	fv := ForecastView{Pool: name, MadeAt: r.At, Step: Duration(f.Step), Model: modelName(r), FallbackReason: f.Forecast.Fallback,
		Level: f.Forecast.Level, Gate: r.Gate.Level, GateReason: r.Gate.Reason, InCharge: ch.Rule, InChargeReason: ch.Reason,
		MASE: NaN(), Steps: []ForecastStep{}, History: []ObservedStep{}}
	for i := range f.Forecast.Mean {
		fv.Steps = append(fv.Steps, ForecastStep{At: f.Start.Add(time.Duration(i) * f.Step), ForecastBounds: boundsAt(f, i)})
	}
	sv := ScheduleView{Pool: name, MadeAt: r.At, Gate: r.Gate.Level, InCharge: ch.Rule, InChargeReason: ch.Reason, Steps: nonNil(ctl.Plan(r.At).WithTiers(cfg)),
		ModelPlan: nonNil(r.ModelPlan.WithTiers(cfg)), ProfilePlan: nonNil(r.ProfilePlan.WithTiers(cfg))}
	if r.At.IsZero() {
		return views{forecast: fv, schedule: sv}
	}
	st := ctl.State()
	set := ctl.Settings()
	actual := make(map[int64]float64, len(st.Actual))
	for _, a := range st.Actual {
		actual[a.At.UnixNano()] = a.RPS
	}
	model := make(map[int64]float64, len(st.Forecasts))
	for _, sf := range st.Forecasts {
		model[sf.At.UnixNano()] = sf.Model
	}
	for t := r.At.Add(-historySpan); t.Before(r.At); t = t.Add(set.Step) {
		y, ok := actual[t.UnixNano()]
		if !ok {
			y = math.NaN()
		}
		m, ok := model[t.UnixNano()]
		if !ok {
			m = math.NaN()
		}
		fv.History = append(fv.History, ObservedStep{At: t.In(r.At.Location()), DemandRPS: Number(y), Mean: Number(m)})
	}
	fv.MASE = Number(dayMASE(actual, model, r.At, set.Step, set.Periods))
	return views{forecast: fv, schedule: sv}
}

// dayMASE is the model's mean absolute error over the day before at divided
// by seasonal naive's (the demand one period earlier), at the longest of
// periods for which at least half the day's steps can be scored: the
// figure the forecast gate compares, over a day. NaN when none can be.
func dayMASE(actual, model map[int64]float64, at time.Time, step time.Duration, periods []time.Duration) float64 {
	steps := int(historySpan / step)
	for _, period := range slices.Backward(slices.Sorted(slices.Values(periods))) {
		var errModel, errNaive float64
		n := 0
		for t := at.Add(-historySpan); t.Before(at); t = t.Add(step) {
			y, okY := actual[t.UnixNano()]
			f, okF := model[t.UnixNano()]
			base, okB := actual[t.Add(-period).UnixNano()]
			if !okY || !okF || !okB || math.IsNaN(y) || math.IsNaN(f) || math.IsNaN(base) {
				continue
			}
			errModel += math.Abs(y - f)
			errNaive += math.Abs(y - base)
			n++
		}
		if 2*n >= steps && n > 0 {
			if errNaive == 0 {
				return math.NaN()
			}
			return errModel / errNaive
		}
	}
	return math.NaN()
}

// boundsAt is forecast step i's mean and band (NaN past its end).
func boundsAt(f planner.DemandForecast, i int) ForecastBounds {
	at := func(v []float64) Number {
		if i < 0 || i >= len(v) {
			return NaN()
		}
		return Number(v[i])
	}
	return ForecastBounds{Mean: at(f.Forecast.Mean), Lower: at(f.Forecast.Lower), Upper: at(f.Forecast.Upper)}
}

// stepIndex is the forecast step in progress at now (-1 before it starts).
func stepIndex(f planner.DemandForecast, now time.Time) int {
	if f.Step <= 0 || now.Before(f.Start) {
		return -1
	}
	return int(now.Sub(f.Start) / f.Step)
}

// modelName is the method that ran at the refit, without the fallback
// note control adds to Refit.Model.
func modelName(r control.Refit) string {
	if m := r.Forecast.Forecast.Method; m != "" {
		return m
	}
	return r.Model
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Forecast returns the pool's forecast in force (GET .../forecast).
func (s *Service) Forecast(name string) (ForecastView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(name)
	if p == nil {
		return ForecastView{}, false
	}
	return p.views.forecast, true
}

// Schedule returns the pool's trusted plan from now on, the step in force
// first (GET .../schedule).
func (s *Service) Schedule(name string) (ScheduleView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(name)
	if p == nil {
		return ScheduleView{}, false
	}
	v := p.views.schedule
	now := s.deps.Now()
	steps := []planner.TieredStep{}
	for i, st := range v.Steps {
		if i+1 < len(v.Steps) && !v.Steps[i+1].At.After(now) {
			continue // superseded before now
		}
		steps = append(steps, st)
	}
	v.Steps = steps
	return v, true
}

// History returns the pool's samples at or after since (zero: the last
// day's), oldest first (GET .../history).
func (s *Service) History(name string, since time.Time) (HistoryView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(name)
	if p == nil {
		return HistoryView{}, false
	}
	loc := time.UTC
	if p.status.At.Location() != nil {
		loc = p.status.At.Location()
	}
	return HistoryView{Pool: name, Bucket: Duration(p.samples.bucket), Samples: p.samples.since(since, loc)}, true
}
