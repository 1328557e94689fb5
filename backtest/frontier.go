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

// Frontier sweeps the main knobs of each adaptive policy — reactive: the
// target utilisation and the scale-out and scale-in thresholds; hybrid and
// predictive: the forecast quantile (fixed, or calibrated walk-forward
// towards a target) and the target utilisation — and returns, per policy
// and per SLO target, the cheapest setting that reaches the target. Flat
// (the best fixed fleet in hindsight for each target) and oracle (one
// setting) are included as the references. Costs are relative to the
// static policy of cfg. The walk-forward refits are made once and shared:
// none of the knobs changes them.
func Frontier(ctx context.Context, t Trace, cfg Config, targets []float64) ([]FrontierPoint, error) {
	points, _, err := FrontierTrials(ctx, t, cfg, targets)
	return points, err
}

// FrontierTrials is Frontier that also returns every trial, for plots.
func FrontierTrials(ctx context.Context, t Trace, cfg Config, targets []float64) ([]FrontierPoint, []FrontierTrial, error) {
	b, err := prepare(ctx, t, cfg, true)
	if err != nil {
		return nil, nil, err
	}
	cfg = b.cfg
	type job struct {
		policy   string
		settings []knob
		target   float64 // flat only
	}
	var jobs []job
	for _, s := range reactiveGrid() {
		jobs = append(jobs, job{policy: PolicyReactive, settings: s})
	}
	for _, s := range forecastGrid(cfg) {
		jobs = append(jobs, job{policy: PolicyPredictive, settings: s}, job{policy: PolicyHybrid, settings: s})
	}
	jobs = append(jobs, job{policy: PolicyStatic}, job{policy: PolicyOracle})
	for _, q := range targets {
		jobs = append(jobs, job{policy: PolicyFlat, target: q})
	}
	results := make([]Result, len(jobs))
	err = forEach(ctx, len(jobs), func(j int) error {
		jb := jobs[j]
		c := cfg
		for _, k := range jb.settings {
			k.set(&c)
		}
		var err error
		if jb.policy == PolicyFlat {
			c.Planner.SLO.Quantile = jb.target
			results[j], err = b.flat(ctx, c)
			return err
		}
		p, err := b.newPolicy(jb.policy, c)
		if err == nil {
			results[j], err = simulate(ctx, b.trace, c, jb.policy, uint64(j), p)
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("backtest: frontier: %w", err)
	}
	staticCost := results[slices.IndexFunc(jobs, func(j job) bool { return j.policy == PolicyStatic })].Cost
	vsStatic := func(r Result) float64 {
		if staticCost > 0 {
			return r.Cost / staticCost
		}
		return 0
	}
	var trials []FrontierTrial
	var flatTarget []float64 // per trial: the target a flat trial searched for
	for j, jb := range jobs {
		if jb.policy == PolicyStatic {
			continue
		}
		settings := map[string]string{}
		for _, k := range jb.settings {
			settings[k.name] = k.value
		}
		if jb.policy == PolicyFlat {
			settings["instances"] = strconv.Itoa(results[j].Instances)
		}
		trials = append(trials, FrontierTrial{Policy: jb.policy, Settings: settings,
			CostVsStatic: vsStatic(results[j]), SLOAttainment: results[j].SLOAttainment})
		flatTarget = append(flatTarget, jb.target)
	}
	var points []FrontierPoint
	for _, policy := range []string{PolicyReactive, PolicyPredictive, PolicyHybrid, PolicyFlat, PolicyOracle} {
		for _, q := range targets {
			var best *FrontierTrial
			for i, tr := range trials {
				if tr.Policy != policy {
					continue
				}
				if policy == PolicyFlat && flatTarget[i] != q {
					continue
				}
				if best == nil || better(tr, *best, q) {
					best = &trials[i]
				}
			}
			if best == nil {
				continue
			}
			points = append(points, FrontierPoint{Policy: policy, SLOTarget: q, Reached: best.SLOAttainment >= q,
				CostVsStatic: best.CostVsStatic, SLOAttainment: best.SLOAttainment, Settings: best.Settings})
		}
	}
	return points, trials, nil
}

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
// threshold below it.
func reactiveGrid() [][]knob {
	var grid [][]knob
	for _, target := range []float64{0.5, 0.75, 1} {
		for _, out := range []float64{0.3, 0.5, 0.7, 0.85} {
			for _, in := range []float64{0.1, 0.2, 0.3} {
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

// forecastGrid is the forecasting policies' sweep: forecast quantile
// (fixed levels, and calibration towards each SLO target) × target
// utilisation.
func forecastGrid(cfg Config) [][]knob {
	var quantiles []knob
	for _, q := range []float64{0.5, 0.8, 0.9, 0.95, 0.99} {
		quantiles = append(quantiles, floatKnob("forecast_quantile", q, func(c *Config, v float64) {
			c.Planner.ForecastQuantile = v
		}))
	}
	var grid [][]knob
	for _, target := range []float64{0.6, 0.8, 1} {
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
