package backtest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/planner"
)

// Result is one policy's outcome. JSON names are those of `forecaster
// backtest --format json`. Every figure counts the scored demand only
// (Config.ScoreFrom/ScoreUntil; by default the whole trace).
type Result struct {
	Name string `json:"name"`
	// GPUHours is the billed running instance-hours (booting and
	// draining instances included, and the cold boots that fill the warm
	// tier); StoppedHours the warm tier's stopped instance-hours.
	GPUHours     float64 `json:"gpu_hours"`
	StoppedHours float64 `json:"stopped_hours,omitempty"`
	// Cost is in the prices' currency, billed per second.
	Cost float64 `json:"cost"`
	// CostVsStatic and CostVsOracle are Cost divided by the static and the
	// oracle policy's.
	CostVsStatic float64 `json:"cost_vs_static"`
	CostVsOracle float64 `json:"cost_vs_oracle"`
	// CostPer1kRequests is Cost per 1,000 requests that arrived: the unit
	// price of serving, comparable across traces and fleets.
	CostPer1kRequests float64 `json:"cost_per_1k_requests"`
	// SLOAttainment is the share of requests that waited at most
	// SLO.Latency for a server; dropped requests count as misses.
	SLOAttainment float64 `json:"slo_attainment"`
	// SLOAttainmentAfterWarmUp is the same from Config.WarmUp after the
	// trace's start on: what the policy does once it has seen a day.
	SLOAttainmentAfterWarmUp float64 `json:"slo_attainment_after_warmup"`
	// P99WaitS is the 99th percentile of the wait for a server, and
	// P99LatencyS of the wait plus the service time, in seconds; dropped
	// requests count at the queue timeout.
	P99WaitS    float64 `json:"p99_wait_s"`
	P99LatencyS float64 `json:"p99_latency_s"`
	// Requests is the number of requests that arrived; Dropped those that
	// timed out in the queue.
	Requests float64 `json:"requests"`
	Dropped  float64 `json:"dropped"`
	// UnderprovisionedMinutes counts the minutes in which more requests
	// than the SLO allows (1 − SLO.Quantile) waited longer than
	// SLO.Latency, or a backlog was left.
	UnderprovisionedMinutes float64 `json:"underprovisioned_minutes"`
	// Actions is the number of changes applied to the fleet.
	Actions int `json:"actions"`
	// SpotInterruptions is how many spot instances were interrupted, in
	// SpotStockOuts zone-wide stock-outs among others.
	SpotInterruptions int `json:"spot_interruptions,omitempty"`
	SpotStockOuts     int `json:"spot_stock_outs,omitempty"`
	// WarmStarts is how many launches started a stopped instance of the
	// warm tier (--warm-start).
	WarmStarts int `json:"warm_starts,omitempty"`
	// ForecastMinutes is, for hybrid, the minutes spent trusting the
	// model, the seasonal profile, or the reactive rules alone.
	ForecastMinutes map[string]float64 `json:"forecast_minutes,omitempty"`
	// CandidateMinutes is, for hybrid, the minutes spent following each
	// of the tuner's candidates (package tune).
	CandidateMinutes map[string]float64 `json:"candidate_minutes,omitempty"`
	// Instances is the fleet size of static and flat.
	Instances int `json:"instances,omitempty"`
	// Settings are the policy's knobs, for a frontier's rows.
	Settings map[string]string `json:"settings,omitempty"`

	// Capacity has one point per trace step, for CSV files and plots.
	Capacity []CapacityPoint `json:"-"`
	// Decisions holds every change applied to the fleet with its reason.
	Decisions planner.Schedule `json:"-"`
}

// CapacityPoint is one trace step of a policy's run: demand and the
// time-averaged ready, desired and billed instance counts, and of the
// billed ones those on spot, with the warm tier's stopped instances.
type CapacityPoint struct {
	At time.Time
	// DemandRPS is NaN for a step with no data.
	DemandRPS                             float64
	Ready, Desired, Billed, Spot, Stopped float64
	// Underprovisioned is how long in the step the fleet was short (see
	// Result.UnderprovisionedMinutes).
	Underprovisioned time.Duration
	// Requests arrived in the step; Late of them waited past the SLO
	// (drops included), counted as they were served or dropped.
	Requests, Late float64
}

// simulate runs one policy over the trace, tick by tick, on the one
// fleet simulator (fleetsim): each tick the policy decides from the
// metrics it can see, the decision passes through actuator.Safe (the
// limits serve applies) to the simulated fleet, and the tick's arrivals
// queue for the ready instances' servers.
func simulate(ctx context.Context, t Trace, cfg Config, name string, stream uint64, p policy) (Result, error) {
	c := cfg.Planner
	tick := cfg.Tick
	perStep := int(t.Step / tick)
	// Warm start: the fleet the first step needs is ready at the start.
	initial := c.Bounded(c.InstancesFor(fleetsim.Rate(firstFinite(t.RPS))))
	sim, err := fleetsim.New(cfg.simOptions(t.Start, initial, stream))
	if err != nil {
		return Result{}, err
	}
	res := Result{Name: name, Capacity: make([]CapacityPoint, 0, len(t.RPS))}
	var sc scores
	warm := t.Start.Add(cfg.WarmUp)
	var point CapacityPoint

	nTicks := len(t.RPS) * perStep
	if !cfg.ScoreUntil.IsZero() {
		// Nothing after the scored window counts: stop there, at the end
		// of a step so the capacity rows stay whole.
		steps := (cfg.ScoreUntil.Sub(t.Start) + t.Step - 1) / t.Step
		nTicks = min(nTicks, max(int(steps), 0)*perStep)
	}
	for i := 0; i < nTicks; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		at := sim.Now()
		counts := sim.Counts()
		current := counts.Desired
		obs, ok := sim.Latest()
		st := p.decide(at, obs, ok, current)
		if st.Desired != current || st.Warm != counts.Warm {
			applied, changed, err := sim.Apply(ctx, st)
			if err != nil {
				return res, fmt.Errorf("%s at %s: %w", name, at.Format(time.RFC3339), err)
			}
			if changed {
				res.Actions++
				res.Decisions = append(res.Decisions, applied)
			}
		}
		raw := t.RPS[i/perStep]
		scored := cfg.scored(at)
		tk := sim.Serve(raw, scored && !cfg.countsOnly)
		if scored {
			sc.add(tk, tick, c.Prices)
			if !at.Before(warm) {
				sc.afterWarmRequests += tk.Arrived
				sc.afterWarmWithin += tk.Within
			}
			if tk.Short {
				res.UnderprovisionedMinutes += tick.Minutes()
			}
		}
		point.Ready += float64(tk.Ready)
		point.Desired += float64(tk.Desired)
		point.Billed += (tk.OnDemandS + tk.SpotS) / tick.Seconds()
		point.Spot += tk.SpotS / tick.Seconds()
		point.Stopped += tk.StoppedS / tick.Seconds()
		point.Requests += tk.Arrived
		point.Late += tk.Late()
		if tk.Short {
			point.Underprovisioned += tick
		}
		if (i+1)%perStep == 0 {
			s := i / perStep
			n := float64(perStep)
			res.Capacity = append(res.Capacity, CapacityPoint{At: t.Start.Add(time.Duration(s) * t.Step), DemandRPS: raw,
				Ready: point.Ready / n, Desired: point.Desired / n, Billed: point.Billed / n, Spot: point.Spot / n, Stopped: point.Stopped / n,
				Underprovisioned: point.Underprovisioned,
				Requests:         point.Requests, Late: point.Late})
			point = CapacityPoint{}
		}
	}
	res.P99WaitS, res.P99LatencyS = sim.Finish()
	res.SpotInterruptions, res.SpotStockOuts = sim.Interruptions()
	res.WarmStarts = sim.WarmStarts()
	sc.fill(&res)
	if h, ok := p.(*hybridPolicy); ok {
		res.ForecastMinutes, res.CandidateMinutes = h.levels, h.chosen
	}
	return res, nil
}

// simOptions are the simulator's settings for a run starting at start.
func (c Config) simOptions(start time.Time, initial int, stream uint64) fleetsim.Options {
	return fleetsim.Options{Planner: c.Planner, Start: start, Tick: c.Tick, Initial: initial,
		QueueTimeout: c.QueueTimeout, MetricsLag: c.MetricsLag, BootSpread: c.BootSpread, Drain: max(c.Drain, 0),
		SpotShare: c.Spot.Share, SpotInterruptionsPerHour: c.Spot.InterruptionsPerHour,
		SpotStockOutsPerWeek: c.Spot.StockOutsPerWeek, SpotStockOutFor: c.Spot.StockOutFor, SpotZones: c.Spot.Zones, Seed: c.Spot.Seed, Stream: stream}
}

// scored reports whether the tick starting at at counts in the figures.
func (c Config) scored(at time.Time) bool {
	return (c.ScoreFrom.IsZero() || !at.Before(c.ScoreFrom)) && (c.ScoreUntil.IsZero() || at.Before(c.ScoreUntil))
}

// scores accumulates a run's figures over the scored ticks.
type scores struct {
	requests, within, dropped          float64
	afterWarmRequests, afterWarmWithin float64
	instanceSeconds, stoppedSeconds    float64
	reservedCost, onDemandCost, spot   float64
	stopped                            float64
}

// add scores one tick and bills it (fleetsim.Tick.Bill).
func (s *scores) add(tk fleetsim.Tick, tick time.Duration, p planner.Prices) {
	s.requests += tk.Arrived
	s.within += tk.Within
	s.dropped += tk.Dropped
	s.instanceSeconds += tk.OnDemandS + tk.SpotS
	s.stoppedSeconds += tk.StoppedS
	b := tk.Bill(p, tick)
	s.reservedCost += b.Reserved
	s.onDemandCost += b.OnDemand
	s.spot += b.Spot
	s.stopped += b.Stopped
}

func (s scores) fill(r *Result) {
	r.GPUHours = s.instanceSeconds / 3600
	r.StoppedHours = s.stoppedSeconds / 3600
	r.Cost = s.reservedCost + s.onDemandCost + s.spot + s.stopped
	r.Requests = s.requests
	r.Dropped = s.dropped
	r.SLOAttainment, r.SLOAttainmentAfterWarmUp = 1, 1
	if s.requests > 0 {
		r.CostPer1kRequests = 1000 * r.Cost / s.requests
		r.SLOAttainment = math.Min(1, math.Max(0, s.within/s.requests))
	}
	if s.afterWarmRequests > 0 {
		r.SLOAttainmentAfterWarmUp = math.Min(1, math.Max(0, s.afterWarmWithin/s.afterWarmRequests))
	}
}

// firstFinite is the first value of x that is not a gap (0: none).
func firstFinite(x []float64) float64 {
	for _, v := range x {
		if !math.IsNaN(v) {
			return v
		}
	}
	return 0
}
