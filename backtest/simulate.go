package backtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
)

// Result is one policy's outcome. JSON names are those of `forecaster
// backtest --format json`. Every figure counts the scored demand only
// (Config.ScoreFrom/ScoreUntil; by default the whole trace).
type Result struct {
	Name string `json:"name"`
	// GPUHours is the billed instance-hours (booting and draining
	// instances included).
	GPUHours float64 `json:"gpu_hours"`
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
	// SpotInterruptions is how many spot instances were interrupted.
	SpotInterruptions int `json:"spot_interruptions,omitempty"`
	// ForecastMinutes is, for hybrid, the minutes spent trusting the
	// model, the seasonal profile, or the reactive rules alone.
	ForecastMinutes map[string]float64 `json:"forecast_minutes,omitempty"`
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
// time-averaged ready, desired and billed instance counts.
type CapacityPoint struct {
	At time.Time
	// DemandRPS is NaN for a step with no data.
	DemandRPS              float64
	Ready, Desired, Billed float64
	// Underprovisioned is how long in the step the fleet was short (see
	// Result.UnderprovisionedMinutes).
	Underprovisioned time.Duration
	// Requests arrived in the step; Late of them waited past the SLO
	// (drops included), counted as they were served or dropped.
	Requests, Late float64
}

// poolName is the simulated fleet's one pool.
const poolName = "backtest"

// simulate runs one policy over the trace, tick by tick: each tick the
// policy decides from the metrics it can see, the decision passes through
// actuator.Safe (the limits serve applies) to the simulated fleet, and the
// tick's arrivals queue for the ready instances' servers.
func simulate(ctx context.Context, t Trace, cfg Config, name string, stream uint64, p policy) (Result, error) {
	c := cfg.Planner
	tick := cfg.Tick
	tickS := tick.Seconds()
	perStep := int(t.Step / tick)
	serviceS := cfg.serviceTime().Seconds()
	slots := max(c.Fleet.Slots, 1)
	rpsPerInstance := float64(slots) / serviceS

	clock := t.Start
	now := func() time.Time { return clock }
	fleet := simulated.New(simulated.Options{Now: now, BootDelay: c.Fleet.BootDelay, BootSpread: cfg.BootSpread,
		Drain: max(cfg.Drain, 0), OnDemandBase: c.Prices.ReservedInstances, SpotShare: cfg.Spot.Share,
		InterruptionsPerHour: cfg.Spot.InterruptionsPerHour, Rand: rand.New(rand.NewPCG(cfg.Spot.Seed, stream))})
	// Warm start: the fleet the first step needs is ready at the start.
	initial, _ := clampInstances(c, c.InstancesFor(rate(firstFinite(t.RPS))))
	fleet.AddPool(poolName, initial, c.Fleet.MinInstances, c.Fleet.MaxInstances)
	safe := newSafe(fleet, cfg, now)

	q := &fluidQueue{}
	lat := newLatencies(c.SLO.Latency.Seconds(), cfg.QueueTimeout.Seconds(), serviceS)
	res := Result{Name: name, Capacity: make([]CapacityPoint, 0, len(t.RPS))}
	var sc scores
	seen := newMetricsFeed(cfg.MetricsLag)
	warm := t.Start.Add(cfg.WarmUp)
	var prev simulated.Usage
	var point CapacityPoint

	nTicks := len(t.RPS) * perStep
	for i := 0; i < nTicks; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return res, ctx.Err()
		}
		at := t.Start.Add(time.Duration(i) * tick)
		clock = at
		counts := fleet.Counts(poolName)
		current := counts.Desired
		obs, ok := seen.latest(at)
		st := p.decide(at, obs, ok, current)
		if st.Desired != current {
			err := safe.SetDesired(ctx, poolName, st.Desired, st.Reason)
			if err != nil && !errors.Is(err, actuator.ErrRateLimited) {
				return res, fmt.Errorf("%s at %s: %w", name, at.Format(time.RFC3339), err)
			}
			counts = fleet.Counts(poolName)
			if got := counts.Desired; got != current {
				if got != st.Desired {
					st.Reason = fmt.Sprintf("%s (limited to %d by max_step)", st.Reason, got)
					st.Desired = got
				}
				res.Actions++
				res.Decisions = append(res.Decisions, st)
			}
		}

		raw := t.RPS[i/perStep]
		gap := math.IsNaN(raw)
		lambda := rate(raw)
		servers := counts.Ready * slots
		capacity := float64(counts.Ready) * rpsPerInstance
		scored := cfg.scored(at)
		lat.off = !scored
		lat.setRegime(lambda, servers)
		before, droppedBefore := lat.within, lat.erlangDropped
		t0 := float64(i) * tickS
		q.arrive(t0, tickS, lambda)
		served, dropped := q.serve(t0, t0+tickS, capacity, cfg.QueueTimeout.Seconds(), lat)
		if cfg.QueueTimeout > 0 {
			dropped += q.dropOlder(t0 + tickS - cfg.QueueTimeout.Seconds())
		}
		lat.addDropped(cfg.QueueTimeout.Seconds(), dropped)
		dropped += lat.erlangDropped - droppedBefore
		waiting := q.len()

		clock = at.Add(tick)
		use := fleet.Usage(poolName)
		onDemandS, spotS := (use.OnDemand - prev.OnDemand).Seconds(), (use.Spot - prev.Spot).Seconds()
		prev = use

		arrived := lambda * tickS
		short := !gap && (waiting > eps || lambda > capacity*(1+1e-9) ||
			(arrived > 0 && 1-(lat.within-before)/arrived > 1-c.SLO.Quantile+1e-9))
		if scored {
			sc.add(tickS, arrived, lat.within-before, dropped, onDemandS, spotS, c.Prices)
			if !at.Before(warm) {
				sc.afterWarmRequests += arrived
				sc.afterWarmWithin += lat.within - before
			}
			if short {
				res.UnderprovisionedMinutes += tick.Minutes()
			}
		}

		obs = planner.Observation{At: at.Add(tick), Span: tick, DemandRPS: lambda,
			Queue: waiting + lat.regime.meanQueue(), Utilisation: utilisation(served, capacity*tickS, lambda, waiting)}
		seen.push(obs, !gap)

		point.Ready += float64(counts.Ready)
		point.Desired += float64(counts.Desired)
		point.Billed += (onDemandS + spotS) / tickS
		point.Requests += arrived
		point.Late += served + dropped - (lat.within - before)
		if short {
			point.Underprovisioned += tick
		}
		if (i+1)%perStep == 0 {
			s := i / perStep
			n := float64(perStep)
			res.Capacity = append(res.Capacity, CapacityPoint{At: t.Start.Add(time.Duration(s) * t.Step), DemandRPS: raw,
				Ready: point.Ready / n, Desired: point.Desired / n, Billed: point.Billed / n, Underprovisioned: point.Underprovisioned,
				Requests: point.Requests, Late: point.Late})
			point = CapacityPoint{}
		}
	}
	lat.finish()
	res.SpotInterruptions = fleet.Usage(poolName).Interruptions
	sc.fill(&res, lat)
	if h, ok := p.(*hybridPolicy); ok {
		res.ForecastMinutes = h.levels
	}
	return res, nil
}

// newSafe wraps the fleet in the safety layer serve uses, with the pool's
// limits and the simulated clock; it logs nothing.
func newSafe(fleet *simulated.Fleet, cfg Config, now func() time.Time) *actuator.Safe {
	pool := actuator.PoolConfig{Name: poolName, Backend: simulated.Name, Min: cfg.Planner.Fleet.MinInstances,
		Max: cfg.Planner.Fleet.MaxInstances, MaxStep: cfg.Limits.MaxStep, MinInterval: cfg.Limits.MinInterval}
	return actuator.NewSafe(fleet, actuator.SafetyOptions{
		Pools:    []actuator.PoolConfig{pool},
		Now:      now,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewToken: func() string { return "backtest" },
		Sleep:    func(context.Context, time.Duration) error { return nil },
		Retry:    actuator.RetryPolicy{AttemptTimeout: -1},
	})
}

// scored reports whether the tick starting at at counts in the figures.
func (c Config) scored(at time.Time) bool {
	return (c.ScoreFrom.IsZero() || !at.Before(c.ScoreFrom)) && (c.ScoreUntil.IsZero() || at.Before(c.ScoreUntil))
}

// scores accumulates a run's figures over the scored ticks.
type scores struct {
	requests, within, dropped          float64
	afterWarmRequests, afterWarmWithin float64
	instanceSeconds                    float64
	reservedCost, onDemandCost, spot   float64
}

// add bills one tick: the reserved baseline always, on-demand instances
// above it, spot instances at the spot price.
func (s *scores) add(tickS, arrived, within, dropped, onDemandS, spotS float64, p planner.Prices) {
	s.requests += arrived
	s.within += within
	s.dropped += dropped
	s.instanceSeconds += onDemandS + spotS
	reservedS := float64(p.ReservedInstances) * tickS
	s.reservedCost += reservedS / 3600 * p.ReservedPerHour
	s.onDemandCost += math.Max(onDemandS-reservedS, 0) / 3600 * p.OnDemandPerHour
	s.spot += spotS / 3600 * p.SpotPerHour
}

func (s scores) fill(r *Result, lat *latencies) {
	r.GPUHours = s.instanceSeconds / 3600
	r.Cost = s.reservedCost + s.onDemandCost + s.spot
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
	r.P99WaitS = lat.wait.quantile(0.99)
	r.P99LatencyS = lat.latency.quantile(0.99)
}

// utilisation is the busy share of the ready servers over a tick (1 while
// requests wait or nothing can serve arrivals).
func utilisation(served, capacityRequests, lambda, waiting float64) float64 {
	switch {
	case waiting > eps:
		return 1
	case capacityRequests > 0:
		return math.Min(1, served/capacityRequests)
	case lambda > 0:
		return 1
	}
	return 0
}

// metricsFeed delays observations by the metrics lag: what the tick that
// ended at At measured is seen from At + lag on.
type metricsFeed struct {
	lag     time.Duration
	queue   []fedObservation
	current fedObservation
}

type fedObservation struct {
	obs planner.Observation
	ok  bool
}

func newMetricsFeed(lag time.Duration) *metricsFeed {
	return &metricsFeed{lag: max(lag, 0)}
}

func (m *metricsFeed) push(obs planner.Observation, ok bool) {
	m.queue = append(m.queue, fedObservation{obs: obs, ok: ok})
}

// latest returns the newest observation visible at now; ok is false
// before the first, and for a tick with no data.
func (m *metricsFeed) latest(now time.Time) (planner.Observation, bool) {
	k := 0
	for k < len(m.queue) && !m.queue[k].obs.At.Add(m.lag).After(now) {
		m.current = m.queue[k]
		k++
	}
	m.queue = m.queue[k:]
	return m.current.obs, m.current.ok
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

// rate reads a trace value as a rate; a gap (NaN) has no arrivals.
func rate(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return v
}

func firstFinite(x []float64) float64 {
	for _, v := range x {
		if !math.IsNaN(v) {
			return v
		}
	}
	return 0
}
