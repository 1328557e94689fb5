package backtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/tune"
)

// Report is the outcome of Run.
type Report struct {
	Trace string `json:"trace"`
	// Static is the instance count of the static policy (the peak's need)
	// and Flat the flat policy's.
	Static int `json:"static_instances"`
	Flat   int `json:"flat_instances"`
	// TraceRequests is the trace's own demand over the scored window:
	// Σ rate × step over its steps with data, to check every policy's
	// Requests against.
	TraceRequests float64 `json:"trace_requests"`
	// Tick, ForecastStep and RefitEvery are the settings used.
	Tick         time.Duration `json:"tick_ns"`
	ForecastStep time.Duration `json:"forecast_step_ns"`
	RefitEvery   time.Duration `json:"refit_every_ns"`
	Policies     []Result      `json:"policies"`

	// static and oracle are the runs every cost is relative to.
	static, oracle Result
}

// Run replays the trace through the named policies (all of them when none
// is named) and returns their results in the order asked. The forecasts are
// computed once, walk-forward, and shared by the forecasting policies;
// policies run in parallel. Static and oracle always run, as every cost is
// also given relative to theirs.
func Run(ctx context.Context, t Trace, cfg Config, policies ...string) (Report, error) {
	if len(policies) == 0 {
		policies = Policies()
	}
	if err := checkPolicies(policies); err != nil {
		return Report{}, err
	}
	b, err := prepare(ctx, t, cfg, slices.ContainsFunc(policies, needsForecasts))
	if err != nil {
		return Report{}, err
	}
	return b.run(ctx, policies, b.cfg)
}

func checkPolicies(policies []string) error {
	for _, p := range policies {
		if !slices.Contains(Policies(), p) {
			return fmt.Errorf("backtest: unknown policy %q: want one of %v", p, Policies())
		}
	}
	return nil
}

func needsForecasts(policy string) bool {
	return policy == PolicyScheduled || policy == PolicyPredictive || policy == PolicyHybrid
}

// bench is a trace prepared for replays: validated, defaults filled, the
// walk-forward refits made. The frontier replays it many times with other
// planner settings; the refits do not depend on them.
type bench struct {
	trace  Trace
	cfg    Config
	plans  plans
	static int
}

func prepare(ctx context.Context, t Trace, cfg Config, forecasts bool) (*bench, error) {
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("backtest: %w", err)
	}
	cfg = cfg.withDefaults(t)
	if err := cfg.validate(t); err != nil {
		return nil, err
	}
	b := &bench{trace: t, cfg: cfg, plans: plans{start: t.Start, every: cfg.Forecast.RefitEvery}}
	b.static = cfg.Planner.Bounded(cfg.Planner.InstancesFor(t.Peak()))
	if forecasts {
		f, err := newForecaster(cfg, t)
		if err != nil {
			return nil, fmt.Errorf("backtest: %w", err)
		}
		b.plans.refits, b.plans.source = f.start(ctx), f
	}
	return b, nil
}

// run replays the policies with cfg (the bench's, or a variant that
// differs only in planner settings).
func (b *bench) run(ctx context.Context, policies []string, cfg Config) (Report, error) {
	tasks, report := b.runTasks(ctx, policies, cfg)
	if err := b.replay(ctx, tasks, cfg); err != nil {
		return Report{}, err
	}
	return report(), nil
}

// replay runs the replays of tasks while the refits are made, and
// returns the refits' error first: a replay that lacked its refits is not
// valid.
func (b *bench) replay(ctx context.Context, tasks []task, cfg Config) error {
	err := runTasks(ctx, tasks, cfg.progress(StageReplays))
	if made := b.plans.made(); made != nil {
		return fmt.Errorf("backtest: %w", made)
	}
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	return nil
}

// runTasks returns the replays run makes, one task a policy, and the
// function that assembles their report once every task has run.
func (b *bench) runTasks(ctx context.Context, policies []string, cfg Config) ([]task, func() Report) {
	t := b.trace
	// static and oracle run always: the others are priced against them.
	names := []string{PolicyStatic, PolicyOracle}
	for _, p := range policies {
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	results := make([]Result, len(names))
	tasks := make([]task, len(names))
	for i, name := range names {
		tasks[i] = task{weight: policyWeight(name, cfg), do: func() error {
			var err error
			if name == PolicyFlat {
				results[i], err = b.flat(ctx, cfg)
				return err
			}
			p, err := b.newPolicy(name, cfg)
			if err == nil {
				results[i], err = simulate(ctx, t, cfg, name, uint64(i), p)
			}
			return err
		}}
	}
	return tasks, func() Report {
		rep := Report{Trace: t.Name, Static: b.static, Tick: cfg.Tick, ForecastStep: cfg.Forecast.Step,
			RefitEvery: cfg.Forecast.RefitEvery, TraceRequests: b.traceRequests(cfg)}
		results[0].Instances = b.static
		rep.static, rep.oracle = results[0], results[1]
		for _, p := range policies {
			rep.add(results[slices.Index(names, p)])
		}
		return rep
	}
}

// policyWeight ranks a replay by how long it takes, so that the longest
// start first and no worker idles at the end: the tuned hybrid replays
// its candidates too, the flat fleet bisects, the forecasting policies
// plan at every refit.
func policyWeight(name string, cfg Config) int {
	switch {
	case name == PolicyHybrid && cfg.Tune.Enabled:
		return 3
	case name == PolicyFlat:
		return 2
	case needsForecasts(name):
		return 1
	}
	return 0
}

// add appends r to the report, priced against static and the oracle.
func (rep *Report) add(r Result) {
	if rep.static.Cost > 0 {
		r.CostVsStatic = r.Cost / rep.static.Cost
	}
	if rep.oracle.Cost > 0 {
		r.CostVsOracle = r.Cost / rep.oracle.Cost
	}
	if r.Name == PolicyFlat {
		rep.Flat = r.Instances
	}
	rep.Policies = append(rep.Policies, r)
}

// traceRequests sums the trace's demand over the scored window.
func (b *bench) traceRequests(cfg Config) float64 {
	t := b.trace
	sum := 0.0
	for i, v := range t.RPS {
		if math.IsNaN(v) {
			continue
		}
		// A step counts tick by tick, as the simulation scores it.
		for k := time.Duration(0); k < t.Step; k += cfg.Tick {
			if cfg.scored(t.Start.Add(time.Duration(i)*t.Step + k)) {
				sum += v * cfg.Tick.Seconds()
			}
		}
	}
	return sum
}

func (b *bench) newPolicy(name string, cfg Config) (policy, error) {
	c := cfg.Planner
	switch name {
	case PolicyStatic:
		return staticPolicy{n: b.static, reason: fmt.Sprintf("static: peak %.3g req/s needs %d", b.trace.Peak(), b.static)}, nil
	case PolicyReactive:
		return &reactivePolicy{cfg: c}, nil
	case PolicyOracle:
		return newOracle(c, b.trace.Start, cfg.Tick, b.tickNeeds(cfg)), nil
	}
	settings := cfg.Forecast.Settings
	switch name {
	case PolicyScheduled:
		settings.Follow = planner.GateProfile
	case PolicyPredictive:
		settings.Follow = planner.GateModel
	}
	ctl, err := control.New(c, settings)
	if err != nil {
		return nil, err
	}
	if settings.Follow != "" {
		return &planPolicy{cfg: c, ctl: ctl, plans: b.plans}, nil
	}
	opts := cfg.Tune
	opts.Sim = cfg.simOptions(time.Time{}, 0, 0)

	tuner, err := tune.New(ctl, opts)
	if err != nil {
		return nil, err
	}
	return &hybridPolicy{tuner: tuner, plans: b.plans, levels: map[string]float64{}, chosen: map[string]float64{}, tick: cfg.Tick}, nil
}

// tickNeeds returns the instances each tick's demand needs.
func (b *bench) tickNeeds(cfg Config) []int {
	t := b.trace
	perStep := int(t.Step / cfg.Tick)
	needs := make([]int, len(t.RPS)*perStep)
	for s, v := range t.RPS {
		n := cfg.Planner.InstancesFor(fleetsim.Rate(v))
		for k := range perStep {
			needs[s*perStep+k] = n
		}
	}
	return needs
}

// flat finds the smallest fleet size whose static run reaches the SLO
// target over the scored demand.
func (b *bench) flat(ctx context.Context, cfg Config) (Result, error) {
	r, err := b.flatSearch(ctx, cfg, []float64{cfg.Planner.SLO.Quantile})
	if err != nil {
		return Result{}, err
	}
	return r[0], nil
}

// flatSearch finds, for each target, the smallest fleet size whose static
// run reaches it over the scored demand, by bisection between the minimum
// and the static peak fleet (attainment only grows with the fleet; above
// the peak fleet it doubles until one does). Runs are shared between the
// targets.
func (b *bench) flatSearch(ctx context.Context, cfg Config, targets []float64) ([]Result, error) {
	c := cfg.Planner
	tried := map[int]Result{}
	try := func(n int) (Result, error) {
		if r, ok := tried[n]; ok {
			return r, nil
		}
		r, err := simulate(ctx, b.trace, cfg, PolicyFlat, 1000+uint64(n),
			staticPolicy{n: n, reason: fmt.Sprintf("flat: %d instances", n)})
		r.Instances = n
		tried[n] = r
		return r, err
	}
	out := make([]Result, len(targets))
	for i, q := range targets {
		lo, hi := c.Fleet.MinInstances, max(b.static, c.Fleet.MinInstances)
		best, err := try(hi)
		if err != nil {
			return nil, err
		}
		for best.SLOAttainment < q && hi < c.Fleet.MaxInstances {
			lo, hi = hi+1, min(2*hi+1, c.Fleet.MaxInstances)
			if best, err = try(hi); err != nil {
				return nil, err
			}
		}
		for lo < hi {
			mid := (lo + hi) / 2
			r, err := try(mid)
			if err != nil {
				return nil, err
			}
			if r.SLOAttainment >= q {
				best, hi = r, mid
			} else {
				lo = mid + 1
			}
		}
		out[i] = best
	}
	return out, nil
}
