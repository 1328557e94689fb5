package backtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// Result is one policy's outcome. JSON names are those of `forecaster
// backtest --format json`.
type Result struct {
	Name string `json:"name"`
	// GPUHours is the billed instance-hours (booting included).
	GPUHours float64 `json:"gpu_hours"`
	// Cost is in the prices' currency, billed per second.
	Cost float64 `json:"cost"`
	// CostVsStatic is Cost divided by the static policy's cost.
	CostVsStatic float64 `json:"cost_vs_static"`
	// CostPer1kRequests is Cost per 1,000 requests that arrived: the unit
	// price of serving, comparable across traces and fleets.
	CostPer1kRequests float64 `json:"cost_per_1k_requests"`
	// SLOAttainment is the share of requests served within SLO.Latency;
	// dropped requests count as misses.
	SLOAttainment float64 `json:"slo_attainment"`
	// P99LatencyS is the 99th percentile of the wait for capacity, in
	// seconds; dropped requests count at the queue timeout.
	P99LatencyS float64 `json:"p99_latency_s"`
	// Requests is the number of requests that arrived; Dropped those that
	// timed out in the queue.
	Requests float64 `json:"requests"`
	Dropped  float64 `json:"dropped"`
	// UnderprovisionedMinutes counts the minutes in which demand exceeded
	// the ready capacity or requests were left waiting.
	UnderprovisionedMinutes float64 `json:"underprovisioned_minutes"`
	// Actions is the number of changes of the desired count.
	Actions int `json:"actions"`
	// SpotInterruptions is how many spot instances were interrupted.
	SpotInterruptions int `json:"spot_interruptions,omitempty"`
	// ForecastMinutes is, for hybrid, the minutes spent trusting the
	// model, the seasonal profile, or the reactive rules alone.
	ForecastMinutes map[string]float64 `json:"forecast_minutes,omitempty"`

	// Capacity has one point per trace step, for CSV files and plots.
	Capacity []CapacityPoint `json:"-"`
	// Decisions holds every change of the desired count with its reason.
	Decisions planner.Schedule `json:"-"`
}

// CapacityPoint is one trace step of a policy's run: demand and the
// time-averaged ready and desired instance counts.
type CapacityPoint struct {
	At             time.Time
	DemandRPS      float64
	Ready, Desired float64
	// Underprovisioned is how long in the step demand exceeded the ready
	// capacity or requests were left waiting.
	Underprovisioned time.Duration
}

// Report is the outcome of Run.
type Report struct {
	Trace string `json:"trace"`
	// Static is the instance count of the static policy (the peak's need).
	Static int `json:"static_instances"`
	// Tick, ForecastStep and RefitEvery are the settings used.
	Tick         time.Duration `json:"tick_ns"`
	ForecastStep time.Duration `json:"forecast_step_ns"`
	RefitEvery   time.Duration `json:"refit_every_ns"`
	Policies     []Result      `json:"policies"`
}

// Run replays the trace through the named policies (all of them when none
// is named) and returns their results in the order asked. The forecasts are
// computed once, walk-forward, and shared by the forecasting policies;
// policies run in parallel.
func Run(ctx context.Context, t Trace, cfg Config, policies ...string) (Report, error) {
	if len(policies) == 0 {
		policies = Policies()
	}
	if err := t.validate(); err != nil {
		return Report{}, fmt.Errorf("backtest: %w", err)
	}
	cfg = cfg.withDefaults(t)
	if err := cfg.validate(t); err != nil {
		return Report{}, err
	}
	needForecasts := false
	for _, p := range policies {
		switch p {
		case PolicyStatic, PolicyReactive:
		case PolicyScheduled, PolicyPredictive, PolicyHybrid:
			needForecasts = true
		default:
			return Report{}, fmt.Errorf("backtest: unknown policy %q: want one of %v", p, Policies())
		}
	}
	pl := plans{start: t.Start, every: cfg.Forecast.RefitEvery}
	if needForecasts {
		f, err := newForecaster(cfg, t)
		if err != nil {
			return Report{}, fmt.Errorf("backtest: %w", err)
		}
		if pl.refits, err = f.run(ctx); err != nil {
			return Report{}, fmt.Errorf("backtest: %w", err)
		}
		pl.source = f
		// The hybrid policy's own controller: same settings, fresh state.
		if pl.hybrid, err = control.New(cfg.Planner, f.ctl.Settings()); err != nil {
			return Report{}, fmt.Errorf("backtest: %w", err)
		}
	}
	static := cfg.Planner.InstancesFor(t.Peak())
	static, _ = clampInstances(cfg.Planner, static)
	rep := Report{Trace: t.Name, Static: static, Tick: cfg.Tick, ForecastStep: cfg.Forecast.Step,
		RefitEvery: cfg.Forecast.RefitEvery}

	// static always runs first: the others are priced against it.
	names := []string{PolicyStatic}
	for _, p := range policies {
		if p != PolicyStatic {
			names = append(names, p)
		}
	}
	results := make([]Result, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = simulate(ctx, t, cfg, name, uint64(i), newPolicy(name, cfg, pl, static, t.Peak()))
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	staticCost := results[0].Cost
	for _, p := range policies {
		r := results[slices.Index(names, p)]
		if staticCost > 0 {
			r.CostVsStatic = r.Cost / staticCost
		}
		rep.Policies = append(rep.Policies, r)
	}
	return rep, nil
}

func clampInstances(c planner.Config, n int) (int, bool) {
	if n < c.Fleet.MinInstances {
		return c.Fleet.MinInstances, true
	}
	if n > c.Fleet.MaxInstances {
		return c.Fleet.MaxInstances, true
	}
	return n, false
}

func newPolicy(name string, cfg Config, pl plans, static int, peak float64) policy {
	c := cfg.Planner
	switch name {
	case PolicyStatic:
		return staticPolicy{n: static, reason: fmt.Sprintf("static: peak %.3g req/s needs %d", peak, static)}
	case PolicyReactive:
		return &reactivePolicy{cfg: c}
	case PolicyScheduled:
		return &planPolicy{cfg: c, plans: pl, profile: true}
	case PolicyPredictive:
		return &planPolicy{cfg: c, plans: pl}
	default:
		return &hybridPolicy{ctl: pl.hybrid, plans: pl, levels: map[string]float64{}, tick: cfg.Tick}
	}
}

// simulate runs one policy over the trace, tick by tick.
func simulate(ctx context.Context, t Trace, cfg Config, name string, stream uint64, p policy) Result {
	c := cfg.Planner
	tick := cfg.Tick
	tickS := tick.Seconds()
	perStep := int(t.Step / tick)
	rps := c.Fleet.RPS()
	fl := &fleet{
		bootTicks: int((c.Fleet.BootDelay + tick - 1) / tick),
		reserved:  c.Prices.ReservedInstances,
		spotShare: cfg.Spot.Share,
	}
	if cfg.Spot.Share > 0 && cfg.Spot.InterruptionsPerHour > 0 {
		fl.interruptP = 1 - math.Exp(-cfg.Spot.InterruptionsPerHour*tick.Hours())
		fl.rng = rand.New(rand.NewPCG(cfg.Spot.Seed, stream))
	}
	// Warm start: the fleet the first step needs is ready at the start.
	desired, _ := clampInstances(c, c.InstancesFor(rate(t.RPS[0])))
	fl.setDesired(desired, -fl.bootTicks)
	fl.advance(0)

	q := &fluidQueue{}
	lat := newLatencies(c.SLO.Latency.Seconds())
	var bill billing
	res := Result{Name: name, Capacity: make([]CapacityPoint, 0, len(t.RPS))}
	var requests, dropped, underTicks float64
	obs := planner.Observation{At: t.Start, Span: tick}
	var readySum, desiredSum float64
	var stepUnder time.Duration

	nTicks := len(t.RPS) * perStep
	for i := 0; i < nTicks; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			break
		}
		now := t.Start.Add(time.Duration(i) * tick)
		fl.advance(i)
		step := p.decide(now, obs, desired)
		if step.Desired != desired {
			res.Actions++
			desired = step.Desired
			res.Decisions = append(res.Decisions, step)
		}
		fl.setDesired(desired, i)
		fl.interrupt()
		bill.bill(fl, tickS, c.Prices.ReservedPerHour, c.Prices.OnDemandPerHour, c.Prices.SpotPerHour)

		lambda := rate(t.RPS[i/perStep])
		mu := float64(fl.ready()) * rps
		t0 := float64(i) * tickS
		q.arrive(t0, tickS, lambda)
		timeoutS := cfg.QueueTimeout.Seconds()
		served, d := q.serve(t0, t0+tickS, mu, timeoutS, lat)
		if cfg.QueueTimeout > 0 {
			d += q.dropOlder(t0 + tickS - timeoutS)
		}
		dropped += d
		lat.addDropped(timeoutS, d)
		waiting := q.len()
		requests += lambda * tickS
		util := 0.0
		switch {
		case mu > 0:
			util = math.Min(1, served/(mu*tickS))
		case lambda > 0 || waiting > eps:
			util = 1
		}
		if lambda > mu*(1+1e-9) || waiting > eps {
			underTicks++
			stepUnder += tick
		}
		obs = planner.Observation{At: now.Add(tick), Span: tick, Utilisation: util, Queue: waiting, DemandRPS: lambda}

		readySum += float64(fl.ready())
		desiredSum += float64(desired)
		if (i+1)%perStep == 0 {
			s := i / perStep
			res.Capacity = append(res.Capacity, CapacityPoint{At: t.Start.Add(time.Duration(s) * t.Step),
				DemandRPS: rate(t.RPS[s]), Ready: readySum / float64(perStep), Desired: desiredSum / float64(perStep),
				Underprovisioned: stepUnder})
			readySum, desiredSum, stepUnder = 0, 0, 0
		}
	}
	res.GPUHours = bill.instanceSeconds / 3600
	res.Cost = bill.cost()
	res.Requests = requests
	if requests > 0 {
		res.CostPer1kRequests = 1000 * res.Cost / requests
	}
	res.Dropped = dropped
	res.SLOAttainment = 1
	if requests > 0 {
		res.SLOAttainment = math.Max(0, lat.withinSL/requests)
	}
	res.P99LatencyS = lat.quantile(0.99)
	res.UnderprovisionedMinutes = underTicks * tick.Minutes()
	res.SpotInterruptions = fl.interruptions
	if h, ok := p.(*hybridPolicy); ok {
		res.ForecastMinutes = h.levels
	}
	return res
}

// rate reads a trace value as a rate; a gap (NaN) has no arrivals.
func rate(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return v
}
