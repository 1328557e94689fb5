package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
)

// Plan is the report's plan section: the pre-warm schedule the controller
// decides over the horizon, hour by hour, and what it costs.
type Plan struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Hours has one entry per hour of the horizon: the most instances
	// asked for in it and the reason of the decision that asked.
	Hours []Hour `json:"hours"`
	// Changes are the decisions that changed the desired count.
	Changes planner.Schedule `json:"changes"`
	// GPUHours is Σ desired × time over the horizon (planner.Prices.UsageOf).
	GPUHours float64 `json:"gpu_hours"`
	// OnDemandCost is those hours at the on-demand price.
	OnDemandCost float64 `json:"on_demand_cost"`
	// ExpectedRequests is Σ forecast mean × step over the horizon.
	ExpectedRequests float64 `json:"expected_requests"`
	// CostPer1kRequests is OnDemandCost per 1,000 expected requests.
	CostPer1kRequests float64 `json:"cost_per_1k_requests"`
	// Peak is the most instances asked for, first at PeakAt.
	Peak   int       `json:"peak"`
	PeakAt time.Time `json:"peak_at"`
	// Lowest is the fewest instances asked for.
	Lowest int `json:"lowest"`
	// Levels counts the decisions that followed each gate level.
	Levels map[string]int `json:"levels"`
	// Warm is the plan's warm tier, with a warm_start (nil without).
	Warm *WarmTier `json:"warm,omitempty"`
}

// WarmTier is what the plan keeps stopped and ready to start over the
// horizon: the disks of instances that serve WarmStart after they start
// instead of a boot, paid at prices.stopped_per_hour beside the running
// fleet.
type WarmTier struct {
	WarmStart Duration `json:"warm_start"`
	// Peak is the most instances kept stopped at once, Mean the average.
	Peak int     `json:"peak"`
	Mean float64 `json:"mean"`
	// StoppedHours is Σ stopped instances × time; Cost those hours at
	// PricePerHour (prices.stopped_per_hour).
	StoppedHours float64 `json:"stopped_hours"`
	PricePerHour float64 `json:"price_per_hour"`
	Cost         float64 `json:"cost"`
}

// warmTier sums the stopped instances of the decisions all, made every
// tick until end; nil for a fleet without a warm tier.
func warmTier(c planner.Config, all planner.Schedule, tick time.Duration, end time.Time) *WarmTier {
	if !c.Fleet.WarmTier() || len(all) == 0 {
		return nil
	}
	w := &WarmTier{WarmStart: Duration(c.Fleet.WarmStart), PricePerHour: c.Prices.StoppedPerHour}
	for i, st := range all {
		next := end
		if i+1 < len(all) {
			next = all[i+1].At
		}
		w.Peak = max(w.Peak, st.Warm)
		w.StoppedHours += float64(st.Warm) * next.Sub(st.At).Hours()
	}
	if span := end.Sub(all[0].At).Hours(); span > 0 {
		w.Mean = w.StoppedHours / span
	}
	w.Cost = w.StoppedHours * w.PricePerHour
	return w
}

// Hour is one hour of the plan.
type Hour struct {
	Start   time.Time `json:"start"`
	Desired int       `json:"desired"`
	// NeedMean is what the forecast's mean needs at the hour's busiest
	// forecast step (the plan runs above it: its margin).
	NeedMean int    `json:"need_at_mean"`
	Reason   string `json:"reason"`
}

// grid is the demand folded onto the forecast step, as the service reads
// its history from the store (the busiest value of each step, store.Max).
type grid struct {
	start  time.Time
	step   time.Duration
	values []float64
}

func (g grid) end() time.Time { return g.start.Add(time.Duration(len(g.values)) * g.step) }

// index is the number of the step that starts at or before t.
func (g grid) index(t time.Time) int {
	return int(math.Floor(float64(t.Sub(g.start)) / float64(g.step)))
}

// history is what a refit at t sees: the steps of the span before t.
func (g grid) history(t time.Time, span time.Duration) []float64 {
	k := min(max(g.index(t), 0), len(g.values))
	return g.values[max(0, k-int(span/g.step)):k]
}

// run is one report's controller run.
type run struct {
	in       Input
	cfg      planner.Config
	settings control.Settings // the pool's, as serve runs them
	tick     time.Duration
	g        grid
	end      time.Time
	// final is the refit at end (the long horizon), f95 the same forecast
	// with 95% intervals.
	final, f95 control.Refit
}

// forecastSettings are the controller settings of the pool with the
// backtest's defaults for a trace: a forecast step of control's default or
// the trace's step when that is coarser (rounded up to a multiple of it),
// and a refit interval on that grid. The backtest fills the same defaults
// (TestForecastGridIsTheBacktests checks it).
func forecastSettings(fo backtest.ForecastOptions, traceStep time.Duration) (control.Settings, error) {
	s := fo.Settings
	def := control.Settings{}.WithDefaults()
	roundUp := func(d, unit time.Duration) time.Duration { return (d + unit - 1) / unit * unit }
	if s.Step == 0 {
		s.Step = def.Step
		if s.Step < traceStep || s.Step%traceStep != 0 {
			s.Step = roundUp(s.Step, traceStep)
		}
	}
	if s.RefitEvery == 0 {
		s.RefitEvery = def.RefitEvery
		if s.RefitEvery < s.Step || s.RefitEvery%s.Step != 0 {
			s.RefitEvery = roundUp(s.RefitEvery, s.Step)
		}
	}
	s = s.WithDefaults()
	if s.Step%traceStep != 0 {
		return s, fmt.Errorf("forecast step %v must be a multiple of the demand's step %v", s.Step, traceStep)
	}
	return s, s.Validate()
}

func newRun(in Input) (*run, error) {
	r := &run{in: in, cfg: in.Backtest.Planner}
	var err error
	if r.settings, err = forecastSettings(in.Backtest.Forecast, in.Trace.Step); err != nil {
		return nil, err
	}
	r.tick = in.Tick
	if r.tick == 0 {
		r.tick = min(time.Minute, in.Trace.Step)
	}
	agg := datasets.AggregateMax
	if in.Backtest.Forecast.Aggregate == string(store.Mean) {
		agg = datasets.AggregateMean
	}
	s, err := datasets.Resample(datasets.Series{Name: in.Trace.Name, Start: in.Trace.Start, Step: in.Trace.Step, Values: in.Trace.RPS},
		r.settings.Step, agg)
	if err != nil {
		return nil, err
	}
	r.g = grid{start: s.Start, step: s.Step, values: s.Values}
	if r.g.end().After(in.Trace.End()) && len(r.g.values) > 1 {
		r.g.values = r.g.values[:len(r.g.values)-1] // a partial last step
	}
	r.end = r.g.end()
	return r, nil
}

// demandAt is the recorded demand over (t−tick, t]: the trace's step that
// holds t−tick (NaN outside the trace or in a gap).
func (r *run) demandAt(t time.Time) float64 {
	tr := r.in.Trace
	i := int(math.Floor(float64(t.Add(-r.tick).Sub(tr.Start)) / float64(tr.Step)))
	if i < 0 || i >= len(tr.RPS) {
		return math.NaN()
	}
	return tr.RPS[i]
}

// driver feeds a controller one decision per tick, as the service does:
// the observation is the demand over the last tick, and the utilisation is
// derived from it and the capacity asked for (the service's rule when a
// pool configures no utilisation series).
type driver struct {
	ctl     *control.Controller
	cfg     planner.Config
	tick    time.Duration
	current int
}

func (d *driver) decide(t time.Time, demand float64) planner.Step {
	var st planner.Step
	if math.IsNaN(demand) {
		st = d.ctl.Hold(t, d.current, "no demand recorded")
	} else {
		obs := planner.Observation{At: t, Span: d.tick, DemandRPS: demand}
		switch capacity := float64(d.current) * d.cfg.Fleet.RPS(); {
		case capacity == 0 && demand > 0:
			obs.Utilisation = 1
		case capacity > 0:
			obs.Utilisation = math.Min(1, demand/capacity)
		}
		st = d.ctl.Decide(t, obs, d.current)
	}
	d.current = st.Desired
	return st
}

// warmUp replays the last WarmUp of history through a controller with the
// pool's settings: a refit every RefitEvery up to the end (the refit at
// the end is left to the caller), a decision every tick.
func (r *run) warmUp(ctx context.Context) (*driver, error) {
	ctl, err := control.New(r.cfg, r.settings)
	if err != nil {
		return nil, err
	}
	d := &driver{ctl: ctl, cfg: r.cfg, tick: r.tick, current: r.cfg.Fleet.MinInstances}
	every := r.settings.RefitEvery
	n := min(int((r.in.WarmUp+every-1)/every), int(r.end.Sub(r.g.start.Add(r.g.step))/every))
	if n <= 0 {
		return d, nil
	}
	next := r.end.Add(-time.Duration(n) * every)
	for t := next; t.Before(r.end); t = t.Add(r.tick) {
		if !t.Before(next) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, err := ctl.Refit(next, r.g.history(next, r.settings.History)); err != nil && !errors.Is(err, control.ErrNoHistory) {
				return nil, err
			}
			next = next.Add(every)
		}
		d.decide(t, r.demandAt(t))
	}
	return d, nil
}

// refitEnd makes the refit at the end of the history with a horizon of at
// least the report's, on a controller that carries the warmed-up one's
// memory, and the same forecast at 95%.
func (r *run) refitEnd(warm *driver) (*driver, error) {
	long := r.settings
	long.Horizon = max(r.in.Horizon, long.Horizon)
	ctl, err := control.New(r.cfg, long)
	if err != nil {
		return nil, err
	}
	if err := ctl.Restore(warm.ctl.State()); err != nil {
		return nil, err
	}
	hist := r.g.history(r.end, r.settings.History)
	if r.final, err = ctl.Refit(r.end, hist); err != nil {
		return nil, fmt.Errorf("refit at the end of the history: %w", err)
	}
	wide := long
	wide.IntervalLevel = 0.95
	c95, err := control.New(r.cfg, wide)
	if err != nil {
		return nil, err
	}
	if r.f95, err = c95.Forecast(r.end, hist); err != nil {
		return nil, fmt.Errorf("95%% forecast: %w", err)
	}
	return &driver{ctl: ctl, cfg: r.cfg, tick: r.tick, current: warm.current}, nil
}

// plan runs the controller and fills the demand, forecast and plan
// sections.
func (r *run) plan(ctx context.Context, rep *Report) error {
	warm, err := r.warmUp(ctx)
	if err != nil {
		return err
	}
	d, err := r.refitEnd(warm)
	if err != nil {
		return err
	}
	rep.Demand = r.demand()
	rep.Forecast = r.forecast()
	rep.recent = r.recentHistory(14 * 24 * time.Hour)
	rep.Plan = r.decideHorizon(d, rep.Forecast)
	return nil
}

// recentHistory is the last span of the grid.
func (r *run) recentHistory(span time.Duration) grid {
	k := max(0, len(r.g.values)-int(span/r.g.step))
	return grid{start: r.g.start.Add(time.Duration(k) * r.g.step), step: r.g.step, values: r.g.values[k:]}
}

// decideHorizon decides every tick of the horizon with the forecast's mean
// as the demand (the demand of the last tick before the end first): the
// plan the controller would follow if demand came in as forecast.
func (r *run) decideHorizon(d *driver, fc Forecast) Plan {
	end := r.end.Add(r.in.Horizon)
	p := Plan{Start: r.end, End: end, Levels: map[string]int{}, Lowest: math.MaxInt}
	mean := func(t time.Time) float64 {
		if !t.After(r.end) {
			return r.demandAt(t)
		}
		i := int(t.Add(-r.tick).Sub(fc.Start) / time.Duration(fc.Step))
		if i < 0 || i >= len(fc.Points) {
			return math.NaN()
		}
		return fc.Points[i].Mean
	}
	var all planner.Schedule
	for t := r.end; t.Before(end); t = t.Add(r.tick) {
		st := d.decide(t, mean(t))
		p.Levels[d.ctl.Level()]++
		all = append(all, st)
		if st.Desired > p.Peak {
			p.Peak, p.PeakAt = st.Desired, st.At
		}
		p.Lowest = min(p.Lowest, st.Desired)
	}
	p.Changes = all.Compact()
	p.Hours = r.hourly(all, fc, end)
	p.Warm = warmTier(r.cfg, all, r.tick, end)
	u := planner.Prices{OnDemandPerHour: r.cfg.Prices.OnDemandPerHour}.UsageOf(p.Changes, end)
	p.GPUHours, p.OnDemandCost = u.GPUHours, u.Cost
	p.ExpectedRequests = fc.ExpectedRequests
	if p.ExpectedRequests > 0 {
		p.CostPer1kRequests = p.OnDemandCost / p.ExpectedRequests * 1000
	}
	return p
}

// hourly folds the decisions into hours: the most instances asked for in
// each, with its reason.
func (r *run) hourly(all planner.Schedule, fc Forecast, end time.Time) []Hour {
	var hours []Hour
	for _, st := range all {
		h := st.At.Sub(r.end) / time.Hour
		for int(h) >= len(hours) {
			start := r.end.Add(time.Duration(len(hours)) * time.Hour)
			stop := start.Add(time.Hour)
			if stop.After(end) {
				stop = end
			}
			hours = append(hours, Hour{Start: start, Desired: -1, NeedMean: r.needAtMean(fc, start, stop)})
		}
		if st.Desired > hours[h].Desired {
			hours[h].Desired, hours[h].Reason = st.Desired, st.Reason
		}
	}
	return hours
}

// needAtMean is the need of the forecast mean's busiest step in [from, to).
func (r *run) needAtMean(fc Forecast, from, to time.Time) int {
	n := 0
	for _, p := range fc.Points {
		if p.At.Before(to) && p.At.Add(time.Duration(fc.Step)).After(from) {
			n = max(n, r.cfg.InstancesFor(p.Mean))
		}
	}
	return n
}
