package report

import (
	"context"
	"fmt"

	"github.com/prewarm/prewarm/backtest"
)

// ReserveAtAdvice sets each suite case's reserved base
// (prices.reserved_instances) to what a plan report advises on the case's
// first half alone, looking as far ahead as the second half lasts (at most
// MaxHorizon): the commitment a team would buy before the half the suite
// scores, with nothing of that half known. Every policy of the case, the
// baseline and the oracle then replay on that base. lambda is the spot
// interruption rate the advice assumes. It returns the bases, in the
// order of cases.
func ReserveAtAdvice(ctx context.Context, cases []backtest.SuiteCase, lambda float64) ([]int, error) {
	bases := make([]int, len(cases))
	for i := range cases {
		k, err := adviseOnFirstHalf(ctx, cases[i], lambda)
		if err != nil {
			return nil, fmt.Errorf("%s: the reserved base's advice on the first half: %w", cases[i].Trace.Name, err)
		}
		cases[i].Config.Planner.Prices.ReservedInstances = k
		bases[i] = k
	}
	return bases, nil
}

// adviseOnFirstHalf builds the plan report on the case's first half and
// returns its reserved base.
func adviseOnFirstHalf(ctx context.Context, c backtest.SuiteCase, lambda float64) (int, error) {
	mid := backtest.SplitPoint(c.Trace)
	n := int(mid.Sub(c.Trace.Start) / c.Trace.Step)
	if n <= 0 {
		return 0, fmt.Errorf("trace of %v is too short to split into two halves of whole days", c.Trace.End().Sub(c.Trace.Start))
	}
	first := c.Trace
	first.RPS = first.RPS[:n]
	horizon := min(max(c.Trace.End().Sub(mid), MinHorizon), MaxHorizon)
	in := Input{Trace: first, Backtest: c.Config, Title: c.Trace.Name, Horizon: horizon,
		WarmUp: min(DefaultWarmUp, first.End().Sub(first.Start)/2), SpotInterruptionsPerHour: lambda, PlanOnly: true}
	in.Backtest.Planner.Prices.ReservedInstances = 0 // nothing committed yet
	rep, err := Build(ctx, in)
	if err != nil {
		return 0, err
	}
	return rep.Reserved.Recommended, nil
}
