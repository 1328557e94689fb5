package backtest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// FrontierPoint is, for one policy and one SLO target, the cheapest
// setting of the policy's knobs that reaches the target (Reached), or the
// setting that comes closest when none does. JSON names are those of
// `forecaster backtest --frontier --format json`.
type FrontierPoint struct {
	Policy        string            `json:"policy"`
	SLOTarget     float64           `json:"slo_target"`
	Reached       bool              `json:"reached"`
	CostVsStatic  float64           `json:"cost_vs_static"`
	SLOAttainment float64           `json:"slo_attainment"`
	Settings      map[string]string `json:"settings"`
}

// FrontierTrial is one setting tried by the frontier, with its outcome.
type FrontierTrial struct {
	Policy        string
	Settings      map[string]string
	CostVsStatic  float64
	SLOAttainment float64
}

// knob is one setting of a policy: its name and value for reports, and
// how it changes the configuration.
type knob struct {
	name, value string
	set         func(*Config)
}

// Frontier is the outcome of a sweep: the cheapest setting per policy and
// SLO target, and every setting tried.
type Frontier struct {
	Points []FrontierPoint
	Trials []FrontierTrial
}

// RunFrontier runs the named policies as Run does and sweeps the main
// knobs of each adaptive policy — reactive: the target utilisation and the
// scale-out and scale-in thresholds; hybrid (its controller alone, without
// the tuner's choice among candidates) and predictive: the forecast
// quantile (fixed, or calibrated walk-forward towards a target) and the
// target utilisation — returning, per policy and per SLO target, the
// cheapest setting that reaches the target. Flat (the best fixed fleet in
// hindsight for each target) and oracle (one setting) are included as the
// references. Costs are relative to the static policy of cfg. The
// walk-forward refits are made once and shared by the report and every
// trial: none of the knobs changes them.
func RunFrontier(ctx context.Context, t Trace, cfg Config, targets []float64, policies ...string) (Report, Frontier, error) {
	if len(policies) == 0 {
		policies = Policies()
	}
	if err := checkPolicies(policies); err != nil {
		return Report{}, Frontier{}, err
	}
	b, err := prepare(ctx, t, cfg, true)
	if err != nil {
		return Report{}, Frontier{}, err
	}
	// The report's flat comes from the frontier's search, which shares its
	// runs between targets. The report's replays and the frontier's trials
	// share one pool of workers.
	others := slices.DeleteFunc(slices.Clone(policies), func(p string) bool { return p == PolicyFlat })
	reportTasks, report := b.runTasks(ctx, others, b.cfg)
	trialTasks, sweep := b.frontierTasks(ctx, targets)
	if err := b.replay(ctx, append(reportTasks, trialTasks...), b.cfg); err != nil {
		return Report{}, Frontier{}, err
	}
	rep := report()
	f, flat := sweep(rep)
	if i := slices.Index(policies, PolicyFlat); i >= 0 {
		all := rep.Policies
		rep.Policies = nil
		for _, p := range policies {
			if p == PolicyFlat {
				rep.add(flat)
				continue
			}
			rep.Policies = append(rep.Policies, all[slices.IndexFunc(all, func(r Result) bool { return r.Name == p })])
		}
	}
	return rep, f, nil
}

// frontierTasks returns the sweep's trials, one task a setting (the flat
// fleet's search is one), and the function that assembles the frontier
// once they have run, from rep, the base configuration's report with its
// static and oracle runs. That function also returns the flat result at
// the base SLO target.
func (b *bench) frontierTasks(ctx context.Context, targets []float64) ([]task, func(rep Report) (Frontier, Result)) {
	cfg := b.cfg
	type job = frontierJob
	jobs := []job{{policy: PolicyFlat}}
	for _, s := range forecastGrid() {
		jobs = append(jobs, frontierJob{policy: PolicyHybrid, settings: s}, frontierJob{policy: PolicyPredictive, settings: s})
	}
	for _, s := range reactiveGrid() {
		jobs = append(jobs, frontierJob{policy: PolicyReactive, settings: s})
	}
	results := make([]Result, len(jobs))
	var flats []Result // one per target, then the base target's
	tasks := make([]task, len(jobs))
	for j, jb := range jobs {
		c := cfg
		for _, k := range jb.settings {
			k.set(&c)
		}
		// A trial is read for its cost and SLO attainment alone; the
		// flat search's runs give the report its flat result, P99s included.
		c.countsOnly = jb.policy != PolicyFlat
		if jb.policy == PolicyHybrid {
			// The knobs are the controller's; the tuner would choose over
			// them. The report's hybrid is the tuned one.
			c.Tune.Enabled = false
		}
		tasks[j] = task{weight: policyWeight(jb.policy, c), do: func() error {
			var err error
			if jb.policy == PolicyFlat {
				flats, err = b.flatSearch(ctx, c, append(slices.Clone(targets), cfg.Planner.SLO.Quantile))
			} else {
				var p policy
				if p, err = b.newPolicy(jb.policy, c); err == nil {
					results[j], err = simulate(ctx, b.trace, c, jb.policy, uint64(j), p)
				}
			}
			if err != nil {
				return fmt.Errorf("frontier: %w", err)
			}
			return nil
		}}
	}
	return tasks, func(rep Report) (Frontier, Result) { return b.assembleFrontier(rep, targets, jobs, results, flats) }
}

// frontierJob is one trial of the sweep: a policy and its knobs.
type frontierJob struct {
	policy   string
	settings []knob
}

// assembleFrontier picks, per policy and target, the cheapest trial that
// reaches the target; results are the trials' in the order of jobs, flats
// the flat search's per target and then at the base target.
func (b *bench) assembleFrontier(rep Report, targets []float64, jobs []frontierJob, results, flats []Result) (Frontier, Result) {
	results = append(slices.Clone(results), rep.oracle)
	jobs = append(slices.Clone(jobs), frontierJob{policy: PolicyOracle})
	staticCost := rep.static.Cost
	vsStatic := func(r Result) float64 {
		if staticCost > 0 {
			return r.Cost / staticCost
		}
		return 0
	}
	var f Frontier
	trialOf := func(policy string, settings map[string]string, r Result) FrontierTrial {
		return FrontierTrial{Policy: policy, Settings: settings, CostVsStatic: vsStatic(r), SLOAttainment: r.SLOAttainment}
	}
	for j, jb := range jobs {
		if jb.policy == PolicyFlat {
			continue
		}
		settings := map[string]string{}
		for _, k := range jb.settings {
			settings[k.name] = k.value
		}
		f.Trials = append(f.Trials, trialOf(jb.policy, settings, results[j]))
	}
	flatTrials := make([]FrontierTrial, len(targets))
	for i, r := range flats[:len(targets)] {
		flatTrials[i] = trialOf(PolicyFlat, map[string]string{"instances": strconv.Itoa(r.Instances)}, r)
		if !slices.ContainsFunc(f.Trials, func(t FrontierTrial) bool {
			return t.Policy == PolicyFlat && t.Settings["instances"] == flatTrials[i].Settings["instances"]
		}) {
			f.Trials = append(f.Trials, flatTrials[i])
		}
	}
	for _, policy := range []string{PolicyReactive, PolicyPredictive, PolicyHybrid, PolicyFlat, PolicyOracle} {
		for i, q := range targets {
			var best *FrontierTrial
			if policy == PolicyFlat {
				best = &flatTrials[i]
			}
			for k, tr := range f.Trials {
				if policy != PolicyFlat && tr.Policy == policy && (best == nil || better(tr, *best, q)) {
					best = &f.Trials[k]
				}
			}
			if best == nil {
				continue
			}
			f.Points = append(f.Points, FrontierPoint{Policy: policy, SLOTarget: q, Reached: best.SLOAttainment >= q,
				CostVsStatic: best.CostVsStatic, SLOAttainment: best.SLOAttainment, Settings: best.Settings})
		}
	}
	return f, flats[len(targets)]
}

// FrontierTrials is about how many runs RunFrontier makes: every setting
// of the forecasting policies' and the reactive policy's grids, a
// bisection of the flat fleet per target, and Run's policies. Callers
// bound a frontier's work with it before starting one.
func FrontierTrials() int { return 2*len(forecastGrid()) + len(reactiveGrid()) + RunRuns() }

// RunRuns is about how many runs Run makes with every policy: one each,
// and the flat fleet's bisection.
func RunRuns() int { return len(Policies()) + flatRuns }

// flatRuns is about how many static runs the flat fleet's bisection makes.
const flatRuns = 20

// better reports whether trial a beats b for target q: reaching it beats
// not reaching it; among those that reach it the cheaper wins; among those
// that do not, the closer.
func better(a, b FrontierTrial, q float64) bool {
	ra, rb := a.SLOAttainment >= q, b.SLOAttainment >= q
	switch {
	case ra != rb:
		return ra
	case ra:
		return a.CostVsStatic < b.CostVsStatic
	}
	return a.SLOAttainment > b.SLOAttainment
}

// reactiveGrid is the reactive policy's sweep: target utilisation (which
// sizes proportional scale-outs) × scale-out threshold × scale-in
// threshold below it. Thresholds as low as 20% let it hold the headroom a
// burst needs, at a price.
func reactiveGrid() [][]knob {
	var grid [][]knob
	for _, target := range []float64{0.5, 0.8, 1} {
		for _, out := range []float64{0.2, 0.4, 0.6, 0.85} {
			for _, in := range []float64{0.05, 0.15, 0.3} {
				if in >= out {
					continue
				}
				grid = append(grid, []knob{
					floatKnob("target_util", target, func(c *Config, v float64) { c.Planner.TargetUtilisation = v }),
					floatKnob("scale_out_util", out, func(c *Config, v float64) { c.Planner.Reactive.ScaleOutUtilisation = v }),
					floatKnob("scale_in_util", in, func(c *Config, v float64) { c.Planner.Reactive.ScaleInUtilisation = v }),
				})
			}
		}
	}
	return grid
}

// forecastGrid is the forecasting policies' sweep: the forecast quantile,
// fixed or calibrated walk-forward towards a target, × the target
// utilisation.
func forecastGrid() [][]knob {
	var quantiles []knob
	for _, q := range []float64{0.5, 0.8, 0.95, 0.99} {
		quantiles = append(quantiles, floatKnob("forecast_quantile", q, func(c *Config, v float64) {
			c.Planner.ForecastQuantile, c.Planner.Calibration.On = v, false
		}))
	}
	for _, q := range []float64{0.99, 0.995, 0.999} {
		quantiles = append(quantiles, floatKnob("calibration_target", q, func(c *Config, v float64) {
			c.Planner.Calibration.Target, c.Planner.Calibration.On = v, true
		}))
	}
	var grid [][]knob
	for _, target := range []float64{0.7, 0.85, 1} {
		tk := floatKnob("target_util", target, func(c *Config, v float64) { c.Planner.TargetUtilisation = v })
		for _, q := range quantiles {
			grid = append(grid, []knob{q, tk})
		}
	}
	return grid
}

func floatKnob(name string, v float64, set func(*Config, float64)) knob {
	return knob{name: name, value: strconv.FormatFloat(v, 'g', -1, 64), set: func(c *Config) { set(c, v) }}
}
