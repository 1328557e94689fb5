package report

import (
	"context"
	"slices"
	"testing"

	"github.com/prewarm/prewarm/backtest"
)

// The reserved base a suite case replays on is the advice of a report
// made on its first half: it sets prices.reserved_instances of the
// case, whatever was committed before, and it does not move when the
// second half changes, which the advice must not see.
func TestReserveAtAdviceReadsTheFirstHalfOnly(t *testing.T) {
	in := syntheticInput(t, 28)
	base := backtest.SuiteCase{Trace: in.Trace, Config: in.Backtest}
	mid := int(backtest.SplitPoint(in.Trace).Sub(in.Trace.Start) / in.Trace.Step)
	cases := []struct {
		name string
		edit func(*backtest.SuiteCase)
	}{
		{"as recorded", func(*backtest.SuiteCase) {}},
		{"a base committed before", func(c *backtest.SuiteCase) { c.Config.Planner.Prices.ReservedInstances = 17 }},
		{"a second half ten times as busy", func(c *backtest.SuiteCase) {
			c.Trace.RPS = slices.Clone(c.Trace.RPS)
			for i := mid; i < len(c.Trace.RPS); i++ {
				c.Trace.RPS[i] *= 10
			}
		}},
	}
	var want int
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			suite := []backtest.SuiteCase{c}
			bases, err := ReserveAtAdvice(context.Background(), suite, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			got := bases[0]
			if suite[0].Config.Planner.Prices.ReservedInstances != got {
				t.Errorf("the case replays on %d reserved, the advice was %d", suite[0].Config.Planner.Prices.ReservedInstances, got)
			}
			if i == 0 {
				if want = got; want <= 0 || want >= 20 {
					t.Fatalf("advice %d: want a base between none and the peak's 20 on a daily cycle", want)
				}
				return
			}
			if got != want {
				t.Errorf("advice %d, want %d as on the recorded trace: the advice must read the first half alone", got, want)
			}
		})
	}
}
