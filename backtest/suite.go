package backtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/tune"
)

// SuiteCase is one trace of a policy suite and the configuration it is
// replayed under.
type SuiteCase struct {
	Trace  Trace
	Config Config
}

// Choice is a setting of a policy that needs no forecast (reactive or
// flat), chosen on one half of a trace, with its figures on the half it
// was chosen on and on the half it is scored on.
type Choice struct {
	Policy   string            `json:"policy"`
	Settings map[string]string `json:"settings"`
	// ChosenOn is "first" or "second": the half whose figures chose it.
	ChosenOn string `json:"chosen_on"`
	// ChosenCostVsStatic and ChosenSLO are its figures on that half.
	ChosenCostVsStatic float64 `json:"chosen_cost_vs_static"`
	ChosenSLO          float64 `json:"chosen_slo_attainment"`
	// Scored is its run scored on the second half.
	Scored Result `json:"scored"`
}

// SuiteEntry is one trace's outcome: every figure is scored on the
// trace's second half, from ScoredFrom on, while every policy runs over
// the whole trace, walk-forward.
type SuiteEntry struct {
	Trace      string    `json:"trace"`
	ScoredFrom time.Time `json:"scored_from"`
	// Hybrid is the default hybrid policy.
	Hybrid Result `json:"hybrid"`
	// Reactive and Flat are the cheapest reactive setting and flat size
	// that reached the SLO target on the first half (or came closest),
	// replayed on the second; Baseline is the one of them a team would
	// have kept: the cheaper of those that reach the target on the second
	// half, else the one with the higher attainment.
	Reactive Choice `json:"reactive"`
	Flat     Choice `json:"flat"`
	Baseline Choice `json:"baseline"`
	// HindsightReactive and HindsightFlat are each chosen on the second
	// half itself: what knowing the future of the trace would buy.
	HindsightReactive Choice `json:"hindsight_reactive"`
	HindsightFlat     Choice `json:"hindsight_flat"`
	// Oracle knows the future demand; Static holds the peak's fleet.
	Oracle Result `json:"oracle"`
	Static Result `json:"static"`
	// VsBaseline and VsOracle are the hybrid's cost over the baseline's
	// and the oracle's.
	VsBaseline float64 `json:"hybrid_vs_baseline"`
	VsOracle   float64 `json:"hybrid_vs_oracle"`
	// Reserved is the committed base every policy of the trace replayed
	// on (prices.reserved_instances; 0: all on demand).
	Reserved int `json:"reserved_instances,omitempty"`
	// MeetsSLO is true when the hybrid reaches the SLO target on the
	// second half, or at least the baseline's attainment where the
	// baseline falls short of the target.
	MeetsSLO bool `json:"hybrid_meets_slo"`
}

// SuiteReport is the outcome of RunSuite.
type SuiteReport struct {
	SLOTarget float64      `json:"slo_target"`
	Entries   []SuiteEntry `json:"traces"`
	SuiteSummary
}

// SuiteSummary is the suite's summary line over its entries, which RunSuite
// and LeaveOneTraceOut both report.
type SuiteSummary struct {
	// Worst names the trace where the hybrid costs most over its
	// baseline, WorstVsBaseline that ratio; GeoMeanVsBaseline is the
	// geometric mean of the ratios over every trace.
	Worst             string  `json:"worst"`
	WorstVsBaseline   float64 `json:"worst_vs_baseline"`
	GeoMeanVsBaseline float64 `json:"geomean_vs_baseline"`
	// MissedSLO lists the traces where the hybrid does not meet its SLO
	// bar (see SuiteEntry.MeetsSLO), AboveBaseline those where it costs
	// more than its baseline.
	MissedSLO     []string `json:"missed_slo,omitempty"`
	AboveBaseline []string `json:"above_baseline,omitempty"`
}

// RunSuite scores the default hybrid policy against the plans a team
// could make without a forecast, causally, on every case. Each trace is
// split at the UTC midnight at or before its middle. On the first half, the
// cheapest reactive setting of the frontier's grid and the cheapest flat
// fleet that reach the case's SLO target are chosen (the closest when
// none does); both are replayed over the whole trace and scored on the
// second half, and the baseline is the cheaper of those that reach the
// target there, else the one with the higher attainment. The hybrid runs
// at the case's configuration over the whole trace and is scored on the
// same second half, as are the oracle and static; the reactive setting
// and flat size chosen on the second half itself are the hindsight
// reference. progress, when not nil, is called after each case.
func RunSuite(ctx context.Context, cases []SuiteCase, progress func(done int, e SuiteEntry)) (SuiteReport, error) {
	rep := SuiteReport{}
	for i, c := range cases {
		e, err := runSuiteCase(ctx, c)
		if err != nil {
			return rep, fmt.Errorf("backtest: suite: %s: %w", c.Trace.Name, err)
		}
		if i == 0 {
			rep.SLOTarget = c.Config.Planner.SLO.Quantile // the suite's cases share one target
		}
		rep.Entries = append(rep.Entries, e)
		if progress != nil {
			progress(i+1, e)
		}
	}
	rep.SuiteSummary = summarise(rep.Entries)
	return rep, nil
}

// summarise is the summary of entries: the worst trace, the geometric
// mean (of the entries with a baseline cost) and the misses.
func summarise(entries []SuiteEntry) SuiteSummary {
	var sum SuiteSummary
	logSum, n := 0.0, 0
	for _, e := range entries {
		if !e.MeetsSLO {
			sum.MissedSLO = append(sum.MissedSLO, e.Trace)
		}
		if !(e.VsBaseline > 0) || math.IsInf(e.VsBaseline, 0) {
			continue
		}
		if e.VsBaseline > 1 {
			sum.AboveBaseline = append(sum.AboveBaseline, e.Trace)
		}
		logSum += math.Log(e.VsBaseline)
		n++
		if e.VsBaseline > sum.WorstVsBaseline {
			sum.Worst, sum.WorstVsBaseline = e.Trace, e.VsBaseline
		}
	}
	if n > 0 {
		sum.GeoMeanVsBaseline = math.Exp(logSum / float64(n))
	}
	return sum
}

// SplitPoint is where a suite splits a trace: the UTC midnight at or
// before its middle.
func SplitPoint(t Trace) time.Time {
	return t.Start.Add(t.End().Sub(t.Start) / 2).Truncate(24 * time.Hour)
}

// suiteRun is one simulation of a suite case.
type suiteRun struct {
	policy string
	knobs  []knob
	second bool // scored on the second half, else the first
}

// suiteBench is a suite case prepared: the refits made, the trace split,
// and every figure but the hybrid's computed (the baselines, their
// hindsight references, static and the oracle on the second half), so
// the hybrid can be replayed under several tuner settings.
type suiteBench struct {
	b             *bench
	first, second Config
	entry         SuiteEntry
	// firstBaseline is the baseline's rule applied on the first half: the
	// cheaper of the reactive setting and the flat size chosen there that
	// reach the target there (else the higher attainment), with its cost
	// and attainment on that half.
	firstBaseline Result
	staticFirst   float64
}

func runSuiteCase(ctx context.Context, c SuiteCase) (SuiteEntry, error) {
	sb, err := prepareSuiteCase(ctx, c)
	if err != nil {
		return SuiteEntry{}, err
	}
	h, err := sb.hybrid(ctx, sb.b.cfg.Tune, true)
	if err != nil {
		return SuiteEntry{}, err
	}
	return sb.withHybrid(h), nil
}

// prepareSuiteCase makes the refits and runs every baseline of a case.
func prepareSuiteCase(ctx context.Context, c SuiteCase) (*suiteBench, error) {
	b, err := prepare(ctx, c.Trace, c.Config, true)
	if err != nil {
		return nil, err
	}
	mid := SplitPoint(c.Trace)
	if !mid.After(c.Trace.Start) {
		return nil, fmt.Errorf("trace of %v is too short to split into two halves of whole days", c.Trace.End().Sub(c.Trace.Start))
	}
	sb := &suiteBench{b: b, first: b.cfg, second: b.cfg}
	sb.first.ScoreFrom, sb.first.ScoreUntil = c.Trace.Start, mid
	sb.second.ScoreFrom, sb.second.ScoreUntil = mid, time.Time{}
	target := b.cfg.Planner.SLO.Quantile

	var runs []suiteRun
	for _, k := range reactiveGrid() {
		runs = append(runs, suiteRun{PolicyReactive, k, false}, suiteRun{PolicyReactive, k, true})
	}
	var main Report
	var flatFirst, flatSecond []Result
	var staticFirst Result
	results := make([]Result, len(runs))
	// Four jobs before the grid: static and oracle on the second half,
	// static on the first, and the flat searches on each half.
	const before = 4
	err = forEach(ctx, len(runs)+before, func(j int) error {
		var err error
		switch j {
		case 0:
			main, err = b.run(ctx, nil, sb.second)
		case 1:
			flatFirst, err = b.flatSearch(ctx, sb.first, []float64{target})
		case 2:
			flatSecond, err = b.flatSearch(ctx, sb.second, []float64{target})
		case 3:
			staticFirst, err = simulate(ctx, b.trace, sb.first, PolicyStatic, 0, staticPolicy{n: b.static})
		default:
			r := runs[j-before]
			cfg := sb.first
			if r.second {
				cfg = sb.second
			}
			for _, k := range r.knobs {
				k.set(&cfg)
			}
			var p policy
			if p, err = b.newPolicy(r.policy, cfg); err == nil {
				results[j-before], err = simulate(ctx, b.trace, cfg, r.policy, uint64(j), p)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	e := SuiteEntry{Trace: c.Trace.Name, ScoredFrom: mid, Static: main.static, Oracle: main.oracle,
		Reserved: c.Config.Planner.Prices.ReservedInstances}
	priceAgainst(&e.Static, main)
	priceAgainst(&e.Oracle, main)
	// Reactive: the cheapest on each half; its other-half run is the
	// same setting's.
	e.Reactive = bestReactive(runs, results, false, target, staticFirst.Cost)
	e.HindsightReactive = bestReactive(runs, results, true, target, main.static.Cost)
	e.HindsightFlat = flatChoice(flatSecond[0], "second", main.static.Cost)
	e.Flat = flatChoice(flatFirst[0], "first", staticFirst.Cost)
	n := flatFirst[0].Instances
	e.Flat.Scored, err = simulate(ctx, b.trace, sb.second, PolicyFlat, 1000+uint64(n), staticPolicy{n: n, reason: fmt.Sprintf("flat: %d instances", n)})
	if err != nil {
		return nil, err
	}
	e.Flat.Scored.Instances = n
	for _, ch := range []*Choice{&e.Reactive, &e.Flat, &e.HindsightReactive, &e.HindsightFlat} {
		priceAgainst(&ch.Scored, main)
	}
	e.Baseline = baselineOf(e.Reactive, e.Flat, target)
	sb.entry, sb.staticFirst = e, staticFirst.Cost
	sb.firstBaseline = firstHalfBaseline(runs, results, flatFirst[0], target)
	return sb, nil
}

// firstHalfBaseline applies the baseline's rule on the first half alone.
func firstHalfBaseline(runs []suiteRun, results []Result, flat Result, target float64) Result {
	var reactive Result
	for i, r := range runs {
		if !r.second && (reactive.Name == "" || better(trial(results[i], 1), trial(reactive, 1), target)) {
			reactive = results[i]
		}
	}
	a, b := Choice{Scored: reactive}, Choice{Scored: flat}
	return baselineOf(a, b, target).Scored
}

// hybrid replays the hybrid with the tuner's options on one half.
func (sb *suiteBench) hybrid(ctx context.Context, opts tune.Options, second bool) (Result, error) {
	cfg := sb.first
	if second {
		cfg = sb.second
	}
	cfg.Tune = opts
	p, err := sb.b.newPolicy(PolicyHybrid, cfg)
	if err != nil {
		return Result{}, err
	}
	r, err := simulate(ctx, sb.b.trace, cfg, PolicyHybrid, 2, p)
	if made := sb.b.plans.made(); made != nil {
		return Result{}, fmt.Errorf("backtest: %w", made)
	}
	return r, err
}

// withHybrid is the case's entry with the hybrid's run on the second
// half.
func (sb *suiteBench) withHybrid(h Result) SuiteEntry {
	e := sb.entry
	target := sb.b.cfg.Planner.SLO.Quantile
	h.CostVsStatic, h.CostVsOracle = ratio(h.Cost, e.Static.Cost), ratio(h.Cost, e.Oracle.Cost)
	e.Hybrid = h
	e.VsBaseline = ratio(h.Cost, e.Baseline.Scored.Cost)
	e.VsOracle = ratio(h.Cost, e.Oracle.Cost)
	e.MeetsSLO = h.SLOAttainment >= min(target, e.Baseline.Scored.SLOAttainment)
	return e
}

// bestReactive picks the cheapest reactive run reaching target among the
// runs scored on one half (second), the closest when none does, and
// returns it with its run on the second half.
func bestReactive(runs []suiteRun, results []Result, second bool, target, staticCost float64) Choice {
	best := -1
	for i, r := range runs {
		if r.second != second {
			continue
		}
		if best < 0 || better(trial(results[i], staticCost), trial(results[best], staticCost), target) {
			best = i
		}
	}
	ch := Choice{Policy: PolicyReactive, Settings: settingsOf(runs[best].knobs), ChosenOn: halfName(second),
		ChosenCostVsStatic: ratio(results[best].Cost, staticCost), ChosenSLO: results[best].SLOAttainment}
	for i, r := range runs {
		if r.second && slices.EqualFunc(r.knobs, runs[best].knobs, func(a, b knob) bool { return a.name == b.name && a.value == b.value }) {
			ch.Scored = results[i]
		}
	}
	return ch
}

func trial(r Result, staticCost float64) FrontierTrial {
	return FrontierTrial{CostVsStatic: ratio(r.Cost, staticCost), SLOAttainment: r.SLOAttainment}
}

func flatChoice(r Result, half string, staticCost float64) Choice {
	return Choice{Policy: PolicyFlat, Settings: map[string]string{"instances": strconv.Itoa(r.Instances)}, ChosenOn: half,
		ChosenCostVsStatic: ratio(r.Cost, staticCost), ChosenSLO: r.SLOAttainment, Scored: r}
}

// baselineOf keeps the cheaper of two choices that reach target on the
// scored half, else the one with the higher attainment there.
func baselineOf(a, b Choice, target float64) Choice {
	if BaselineOf(a.Scored, b.Scored, target) == 1 {
		return b
	}
	return a
}

// HybridAndBaseline finds, among one run's results, the hybrid and the
// baseline it is measured against (BaselineOf between reactive and flat);
// ok is false when one of the three is missing or the baseline cost
// nothing, so that no ratio is made from it.
func HybridAndBaseline(results []Result, target float64) (hybrid, base Result, ok bool) {
	byName := map[string]Result{}
	for _, r := range results {
		byName[r.Name] = r
	}
	hybrid, okH := byName[PolicyHybrid]
	reactive, okR := byName[PolicyReactive]
	flat, okF := byName[PolicyFlat]
	if !okH || !okR || !okF {
		return Result{}, Result{}, false
	}
	base = [2]Result{reactive, flat}[BaselineOf(reactive, flat, target)]
	return hybrid, base, base.Cost > 0
}

// BaselineOf picks the baseline without a forecast between two policies
// replayed on the same demand, typically a reactive fleet (a) and a flat
// one (b): the cheaper of those whose SLO attainment reaches target, or
// the one closer to it when neither does (a on a tie). It returns 0 for a
// and 1 for b.
func BaselineOf(a, b Result, target float64) int {
	ra, rb := a.SLOAttainment >= target, b.SLOAttainment >= target
	switch {
	case ra && rb && b.Cost < a.Cost, !ra && rb, !ra && !rb && b.SLOAttainment > a.SLOAttainment:
		return 1
	}
	return 0
}

// priceAgainst sets r's costs relative to the report's static and oracle.
func priceAgainst(r *Result, rep Report) {
	r.CostVsStatic = ratio(r.Cost, rep.static.Cost)
	r.CostVsOracle = ratio(r.Cost, rep.oracle.Cost)
}

func settingsOf(knobs []knob) map[string]string {
	s := map[string]string{}
	for _, k := range knobs {
		s[k.name] = k.value
	}
	return s
}

func halfName(second bool) string {
	if second {
		return "second"
	}
	return "first"
}

// ratio is a/b, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b > 0 {
		return a / b
	}
	return 0
}

// SuiteFiles are the shared recorded traces the policy suite replays by
// default (in the datasets folder's traces/): every one long enough to
// hold two halves of whole days.
var SuiteFiles = []string{"nyc_taxi.csv", "alibaba_sd_requests_hourly.csv", "metro_traffic_hourly.csv",
	"nab_tweets_aapl_5min.csv", "nab_tweets_amzn_5min.csv"}

// SuiteSynthetic returns the generator's traces the suite replays: for
// each seed, days of per-minute demand with bursts a forecast cannot
// time (datasets.BurstySynthetic) and with isolated spikes
// (datasets.SpikySynthetic), named "bursts-seedN" and "spikes-seedN".
func SuiteSynthetic(seeds []uint64, days int) []Trace {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var out []Trace
	for _, mode := range []struct {
		name string
		gen  func() datasets.Synthetic
	}{{"bursts", datasets.BurstySynthetic}, {"spikes", datasets.SpikySynthetic}} {
		for _, seed := range seeds {
			g := mode.gen()
			g.Seed = seed
			s := g.Generate(start, time.Minute, days*24*60)
			out = append(out, Trace{Name: fmt.Sprintf("%s-seed%d", mode.name, seed), Start: s.Start, Step: s.Step, RPS: s.Values})
		}
	}
	return out
}
