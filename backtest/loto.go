package backtest

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prewarm/prewarm/tune"
)

// DefaultsCandidate is one setting of the tuner's defaults that the
// leave-one-trace-out protocol compares.
type DefaultsCandidate struct {
	Name string
	Tune tune.Options
}

// HalfScore is a hybrid run on a trace's first half against that half's
// baseline (the suite's rule applied on the first half alone).
type HalfScore struct {
	VsBaseline float64 `json:"vs_baseline"`
	SLO        float64 `json:"slo_attainment"`
	// Loss is what the protocol minimises: ln(VsBaseline) plus the
	// shortfall below the SLO bar in units of the miss budget.
	Loss float64 `json:"loss"`
}

// LOTOEntry is one trace of the leave-one-trace-out protocol.
type LOTOEntry struct {
	Trace string `json:"trace"`
	// FirstHalf holds each candidate setting's score on this trace's
	// first half, in the order of LOTOReport.Grid.
	FirstHalf []HalfScore `json:"first_half"`
	// Chosen names the setting with the least loss over the other traces'
	// first halves; Entry is the suite's second-half figures with it.
	Chosen string     `json:"chosen_without_it"`
	Entry  SuiteEntry `json:"second_half"`
}

// LOTOReport is the outcome of LeaveOneTraceOut.
type LOTOReport struct {
	Grid []string `json:"grid"`
	// Defaults is the setting with the least loss over every trace's
	// first half: the one a release ships.
	Defaults string      `json:"defaults"`
	Entries  []LOTOEntry `json:"traces"`
	// SuiteSummary is over the second halves, each trace scored with the
	// setting chosen without it.
	SuiteSummary
}

// LeaveOneTraceOut scores defaults chosen without the trace they are
// scored on. Every candidate setting replays the hybrid on every trace's
// first half, against the baseline rule applied on that half; for each
// trace the setting with the least summed loss over the other traces is
// chosen, and that trace's second half is scored with it exactly as
// RunSuite scores the defaults. Defaults names the setting chosen on all
// the traces' first halves. The second halves are never seen by a
// choice. progress, when not nil, is told of each step.
func LeaveOneTraceOut(ctx context.Context, cases []SuiteCase, grid []DefaultsCandidate, progress func(string)) (LOTOReport, error) {
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	if len(grid) == 0 || len(cases) < 2 {
		return LOTOReport{}, fmt.Errorf("backtest: leave-one-trace-out needs a grid and at least two traces")
	}
	rep := LOTOReport{}
	for _, g := range grid {
		rep.Grid = append(rep.Grid, g.Name)
	}
	benches := make([]*suiteBench, len(cases))
	for i, c := range cases {
		sb, err := prepareSuiteCase(ctx, c)
		if err != nil {
			return rep, fmt.Errorf("backtest: leave-one-trace-out: %s: %w", c.Trace.Name, err)
		}
		benches[i] = sb
		say("%s: baselines ready", c.Trace.Name)
	}
	scores := make([][]HalfScore, len(cases))
	for i := range scores {
		scores[i] = make([]HalfScore, len(grid))
	}
	err := forEach(ctx, len(cases)*len(grid), func(k int) error {
		i, g := k/len(grid), k%len(grid)
		h, err := benches[i].hybrid(ctx, grid[g].Tune, false)
		if err != nil {
			return fmt.Errorf("%s, %s: %w", cases[i].Trace.Name, grid[g].Name, err)
		}
		scores[i][g] = halfScore(h, benches[i].firstBaseline, cases[i].Config.Planner.SLO.Quantile)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("backtest: leave-one-trace-out: %w", err)
	}
	say("first halves scored: %d settings × %d traces", len(grid), len(cases))
	rep.Defaults = grid[bestSetting(scores, -1)].Name
	for i, c := range cases {
		g := bestSetting(scores, i)
		h, err := benches[i].hybrid(ctx, grid[g].Tune, true)
		if err != nil {
			return rep, fmt.Errorf("backtest: leave-one-trace-out: %s: %w", c.Trace.Name, err)
		}
		rep.Entries = append(rep.Entries, LOTOEntry{Trace: c.Trace.Name, FirstHalf: scores[i], Chosen: grid[g].Name,
			Entry: benches[i].withHybrid(h)})
		say("%s: second half scored with %s", c.Trace.Name, grid[g].Name)
	}
	rep.SuiteSummary = summarise(rep.entries())
	return rep, nil
}

// halfScore scores a first-half run against that half's baseline.
func halfScore(h, baseline Result, target float64) HalfScore {
	s := HalfScore{VsBaseline: ratio(h.Cost, baseline.Cost), SLO: h.SLOAttainment}
	bar := min(target, baseline.SLOAttainment)
	s.Loss = math.Log(math.Max(s.VsBaseline, 1e-9)) + math.Max(0, bar-h.SLOAttainment)/(1-target)
	return s
}

// bestSetting is the setting with the least loss summed over every trace
// but skip (−1: none skipped).
func bestSetting(scores [][]HalfScore, skip int) int {
	best, bestLoss := 0, math.Inf(1)
	for g := range scores[0] {
		loss := 0.0
		for i := range scores {
			if i != skip {
				loss += scores[i][g].Loss
			}
		}
		if loss < bestLoss {
			best, bestLoss = g, loss
		}
	}
	return best
}

// entries are the suite entries of the report's second halves.
func (rep LOTOReport) entries() []SuiteEntry {
	out := make([]SuiteEntry, len(rep.Entries))
	for i, e := range rep.Entries {
		out[i] = e.Entry
	}
	return out
}

// DefaultsGrid is the tuner's settings the leave-one-trace-out protocol
// compares: the margin of the miss budget a fixed rule must leave, the
// half-life of a window's days in a candidate's misses, the half-life of
// its days in its cost (a day, or the misses' own), the slack a
// calibrated candidate is allowed and the worst days a window leaves out.
func DefaultsGrid() []DefaultsCandidate {
	const day = 24 * time.Hour
	var grid []DefaultsCandidate
	for _, margin := range []float64{0.1, 0.25, 0.4} {
		for _, half := range []time.Duration{-day, 4 * day} {
			for _, costHalf := range []time.Duration{day, half} {
				for _, slack := range []float64{0.5, 1} {
					for _, trim := range []int{0, 1} {
						grid = append(grid, DefaultsCandidate{
							Name: defaultsName(margin, half, costHalf, slack, trim),
							Tune: tune.Options{Enabled: true, Margin: margin, HalfLife: half, CostHalfLife: costHalf,
								Slack: slack, Trim: trim}})
					}
				}
			}
		}
	}
	return grid
}

// defaultsName names a setting of DefaultsGrid as its table prints it.
func defaultsName(margin float64, half, costHalf time.Duration, slack float64, trim int) string {
	days := func(d time.Duration) string {
		if d < 0 {
			return "none"
		}
		return fmt.Sprintf("%gd", d.Hours()/24)
	}
	return fmt.Sprintf("margin %g, half-life %s, cost's %s, slack %g, trim %d", margin, days(half), days(costHalf), slack, trim)
}
