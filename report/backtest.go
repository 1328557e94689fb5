package report

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
)

// Backtest is the report's look back: static, reactive, hybrid and oracle
// replayed over the whole trace (walk-forward) and scored over its last
// weeks, exactly as `forecaster backtest --score-from` does.
type Backtest struct {
	ScoreFrom  time.Time `json:"score_from"`
	ScoreUntil time.Time `json:"score_until"`
	// Days is the scored span; Weeks the weeks asked for.
	Days  float64 `json:"days"`
	Weeks int     `json:"weeks"`
	// Command reproduces the table with `forecaster backtest`.
	Command string `json:"command,omitempty"`
	// Static is the static policy's fleet (the peak's need).
	Static int `json:"static_instances"`
	// Policies are backtest.Result, under the names `forecaster backtest
	// --format json` uses.
	Policies []backtest.Result `json:"policies"`
	// Requests is the trace's demand over the scored span.
	Requests float64 `json:"requests"`
	// Baseline is what the hybrid's cost is measured against: the cheaper
	// of the reactive fleet and the best flat fleet that met the SLO
	// target on the same demand (the closer one when neither did).
	Baseline *Baseline `json:"baseline,omitempty"`

	// capacity is the hybrid run's fleet per trace step (scored span).
	capacity []backtest.CapacityPoint
	step     time.Duration
}

// BacktestPolicies are the policies the report compares: the static fleet
// for reference, the two baselines without a forecast (reactive rules and
// the best flat fleet), the hybrid, and the oracle.
var BacktestPolicies = []string{backtest.PolicyStatic, backtest.PolicyFlat, backtest.PolicyReactive, backtest.PolicyHybrid, backtest.PolicyOracle}

// Baseline is the hybrid's saving against the baseline without a
// forecast (backtest.BaselineOf between reactive and flat).
type Baseline struct {
	// Policy is reactive or flat; Instances the flat fleet's size.
	Policy    string `json:"policy"`
	Instances int    `json:"instances,omitempty"`
	// Cost and SLOAttainment are the baseline's over the scored span.
	Cost          float64 `json:"cost"`
	SLOAttainment float64 `json:"slo_attainment"`
	// HybridVs is the hybrid's cost over the baseline's (below 1: a saving).
	HybridVs float64 `json:"hybrid_vs_baseline"`
}

// baselineOf finds the baseline in the backtest's results (nil when one of
// the three policies is missing or the baseline cost nothing).
func baselineOf(b *Backtest, sloTarget float64) *Baseline {
	hybrid, base, ok := backtest.HybridAndBaseline(b.Policies, sloTarget)
	if !ok {
		return nil
	}
	bl := &Baseline{Policy: base.Name, Cost: base.Cost, SLOAttainment: base.SLOAttainment, HybridVs: hybrid.Cost / base.Cost}
	if base.Name == backtest.PolicyFlat {
		bl.Instances = base.Instances
	}
	return bl
}

// ScoreFrom is the start of the backtest's scored span for a trace: its
// last weeks, or its whole length (the zero time) when that leaves less
// than a day of warm-up before them.
func ScoreFrom(t backtest.Trace, weeks int) time.Time {
	if weeks <= 0 {
		weeks = 4
	}
	from := t.End().Add(-time.Duration(weeks) * 7 * 24 * time.Hour)
	if from.Before(t.Start.Add(24 * time.Hour)) {
		return time.Time{}
	}
	// On the trace's own grid, as --score-from would be typed.
	return t.Start.Add(from.Sub(t.Start) / t.Step * t.Step)
}

// runBacktest runs the report's backtest.
func runBacktest(ctx context.Context, in Input) (*Backtest, error) {
	cfg := in.Backtest
	cfg.ScoreFrom = ScoreFrom(in.Trace, in.BacktestWeeks)
	cfg.ScoreUntil = time.Time{}
	rep, err := backtest.Run(ctx, in.Trace, cfg, BacktestPolicies...)
	if err != nil {
		return nil, err
	}
	b := &Backtest{ScoreFrom: cfg.ScoreFrom, ScoreUntil: in.Trace.End(), Weeks: in.BacktestWeeks, Command: in.BacktestCommand,
		Static: rep.Static, Policies: rep.Policies, Requests: rep.TraceRequests, step: in.Trace.Step}
	if b.Weeks == 0 {
		b.Weeks = 4
	}
	if b.ScoreFrom.IsZero() {
		b.ScoreFrom = in.Trace.Start
	}
	b.Days = b.ScoreUntil.Sub(b.ScoreFrom).Hours() / 24
	b.Baseline = baselineOf(b, cfg.Planner.SLO.Quantile)
	for i := range b.Policies {
		p := &b.Policies[i]
		if p.Name == backtest.PolicyHybrid {
			for _, c := range p.Capacity {
				if !c.At.Before(b.ScoreFrom) {
					b.capacity = append(b.capacity, c)
				}
			}
		}
	}
	return b, nil
}

// Policy returns the named policy's result.
func (b *Backtest) Policy(name string) (backtest.Result, bool) {
	for _, p := range b.Policies {
		if p.Name == name {
			return p, true
		}
	}
	return backtest.Result{}, false
}

// Hindsight checks the advice against the backtest's hybrid fleet over
// the scored weeks.
type Hindsight struct {
	// Best is the baseline that would have cost least over those weeks,
	// with the hybrid fleet bought reserved up to it and on demand above
	// (C(k) on the recorded fleet).
	Best int `json:"best"`
}

// hindsight prices the hybrid fleet of the backtest at every baseline.
func hindsight(c planner.Config, b *Backtest) *Hindsight {
	if len(b.capacity) == 0 {
		return nil
	}
	stepH := b.step.Hours()
	billed := make([]float64, len(b.capacity))
	for i, p := range b.capacity {
		billed[i] = p.Billed
	}
	slices.Sort(billed)
	// above[i] is Σ billed[i:].
	above := make([]float64, len(billed)+1)
	for i := len(billed) - 1; i >= 0; i-- {
		above[i] = above[i+1] + billed[i]
	}
	n := float64(len(billed))
	from := func(j float64) int { i, _ := slices.BinarySearch(billed, j-1e-9); return i }
	h := &Hindsight{}
	best := math.Inf(1)
	for j := 0; j <= int(math.Ceil(billed[len(billed)-1])); j++ {
		i := from(float64(j))
		burst := above[i] - float64(j)*float64(len(billed)-i)
		cost := c.Prices.ReservedPerHour*float64(j)*n*stepH + c.Prices.OnDemandPerHour*burst*stepH
		if cost < best-1e-9 {
			best, h.Best = cost, j
		}
	}
	return h
}
