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
// (max) of the last 28 days. The goal is under 5 s an operation on 2
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

// BenchmarkYearPerMinute replays a year of per-minute synthetic demand
// (525,600 ticks) through one policy: the reactive rules (the simulator
// alone), the hybrid with its walk-forward refits and no tuner (tune.enabled: false), the same
// with the model chosen once a day (forecast.choose_model_daily), and the
// hybrid with its tuner's twins as well. The simulator's goal is under 10 s a year on 2 cores:
//
//	go test ./backtest -run '^$' -bench YearPerMinute -benchtime 1x -cpu 2
func BenchmarkYearPerMinute(b *testing.B) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.DefaultSynthetic().Generate(start, time.Minute, 365*24*60)
	tr := Trace{Name: s.Name, Start: s.Start, Step: s.Step, RPS: s.Values}
	for _, c := range []struct {
		name, policy       string
		tuned, chooseDaily bool
	}{
		{PolicyReactive, PolicyReactive, false, false},
		{"hybrid-untuned", PolicyHybrid, false, false},
		{"hybrid-untuned-daily", PolicyHybrid, false, true},
		{PolicyHybrid, PolicyHybrid, true, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := barConfig(tr, 20)
			cfg.Tune.Enabled = c.tuned
			cfg.Forecast.Settings.ChooseModelDaily = c.chooseDaily
			for b.Loop() {
				if _, err := Run(context.Background(), tr, cfg, c.policy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFrontierMetro is `forecaster backtest --frontier` over the two
// hourly years of the Metro traffic trace, per-minute ticks: the refits,
// every setting of each policy's grid and the flat fleet's bisections.
// The goal is under 60 s on 2 cores:
//
//	go test ./backtest -run '^$' -bench FrontierMetro -benchtime 1x -cpu 2
func BenchmarkFrontierMetro(b *testing.B) {
	tr := loadTrace(b, "metro_traffic_hourly.csv", 0)
	cfg := barConfig(tr, 20)
	for b.Loop() {
		if _, _, err := RunFrontier(context.Background(), tr, cfg, []float64{0.99, 0.995, 0.999}); err != nil {
			b.Fatal(err)
		}
	}
}
