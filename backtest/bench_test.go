package backtest

import (
	"context"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

// BenchmarkRun30DaysPerMinute replays 30 days of per-minute synthetic demand
// (43,200 steps) through every policy (static, flat and its search,
// reactive, scheduled, predictive, hybrid, oracle) on the M/M/c queue
// model, walk-forward refits included: the forecasting policies refit
// model/auto every three hours (the default) on a 30-minute aggregate
// (max) of the last 28 days. Issue 8's goal is under 5 s an operation on 2
// cores:
//
//	go test ./backtest -run '^$' -bench Run30Days -benchtime 3x -cpu 2
func BenchmarkRun30DaysPerMinute(b *testing.B) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.DefaultSynthetic().Generate(start, time.Minute, 30*24*60)
	tr := Trace{Name: s.Name, Start: s.Start, Step: s.Step, RPS: s.Values}
	cfg := barConfig(tr, 20)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Run(context.Background(), tr, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
