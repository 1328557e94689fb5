package backtest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/datasets"
)

// With the daily model choice, the backtest's refits, computed a day per
// worker, are those a pool makes in serve, one after the other, each
// re-running the model the refit before it chose that day: the same forecasts, refit by refit, on a trace
// that starts in the evening so that its first day is short.
func TestRefitsMatchOneAfterTheOther(t *testing.T) {
	start := time.Date(2026, 1, 5, 19, 0, 0, 0, time.UTC)
	s := datasets.DefaultSynthetic().Generate(start, time.Minute, 9*24*60)
	tr := Trace{Name: s.Name, Start: s.Start, Step: s.Step, RPS: s.Values}
	cfg := barConfig(tr, 20).withDefaults(tr)
	cfg.Forecast.Settings.ChooseModelDaily = true
	f, err := newForecaster(cfg, tr)
	if err != nil {
		t.Fatal(err)
	}
	made := f.start(context.Background())
	if err := made.wait(); err != nil {
		t.Fatal(err)
	}
	got := made.refits
	ctl, err := control.New(cfg.Planner, cfg.Forecast.Settings)
	if err != nil {
		t.Fatal(err)
	}
	var prev control.Selection
	reused := 0
	for j := range got {
		want, err := ctl.ForecastReusing(f.refitTime(j), f.history(j), prev)
		if err != nil && !errors.Is(err, control.ErrNoHistory) {
			t.Fatal(err)
		}
		if d := want.Selection().Day(); !d.IsZero() && d.Equal(prev.Day()) {
			reused++
		}
		prev = want.Selection()
		g, w := got[j].Forecast.Forecast, want.Forecast.Forecast
		if got[j].Model != want.Model || len(g.Mean) != len(w.Mean) {
			t.Fatalf("refit %d at %s: model %q with %d steps, want %q with %d", j, f.refitTime(j), got[j].Model, len(g.Mean), want.Model, len(w.Mean))
		}
		for k := range g.Mean {
			if g.Mean[k] != w.Mean[k] || g.Upper[k] != w.Upper[k] {
				t.Fatalf("refit %d at %s, step %d: %v..%v, want %v..%v", j, f.refitTime(j), k, g.Mean[k], g.Upper[k], w.Mean[k], w.Upper[k])
			}
		}
	}
	if reused == 0 {
		t.Errorf("no refit re-ran an earlier choice over %d refits", len(got))
	}
}

// The refits are split into runs of one UTC day with the daily model
// choice (a trace starting at 19:00 with 3-hourly refits: 19:00 and 22:00,
// then eight a day), and into single refits without it.
func TestRefitDays(t *testing.T) {
	tr := Trace{Start: time.Date(2026, 1, 5, 19, 0, 0, 0, time.UTC), Step: time.Minute}
	for _, tc := range []struct {
		daily bool
		want  [][2]int
	}{
		{true, [][2]int{{0, 2}, {2, 10}, {10, 12}}},
		{false, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}, {11, 12}}},
	} {
		f := &forecaster{trace: tr, perRefit: 6}
		f.cfg.Forecast.Step = 30 * time.Minute
		f.cfg.Forecast.ChooseModelDaily = tc.daily
		if got := f.days(12); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("daily %v: %v, want %v", tc.daily, got, tc.want)
		}
	}
}

// The refits are made while the replays run; when their making ends
// early, a replay waiting for a refit is let go at once, without it, and
// the run reports why the making ended.
func TestRefitsEndedEarlyLetTheReplaysGo(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.DefaultSynthetic().Generate(start, time.Minute, 9*24*60)
	tr := Trace{Name: s.Name, Start: s.Start, Step: s.Step, RPS: s.Values}
	cfg := barConfig(tr, 20).withDefaults(tr)
	f, err := newForecaster(cfg, tr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	made := f.start(ctx)
	last := len(made.refits) - 1
	if last < 1 {
		t.Fatalf("%d refits, want several", len(made.refits))
	}
	if _, ok := made.get(last); ok {
		t.Errorf("the last refit was made although the making was cancelled first")
	}
	if err := made.wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("wait = %v, want context.Canceled", err)
	}
	b := &bench{trace: tr, cfg: cfg, plans: plans{start: tr.Start, every: cfg.Forecast.RefitEvery, refits: made, source: f}}
	if err := b.replay(context.Background(), nil, cfg); !errors.Is(err, context.Canceled) {
		t.Errorf("replay = %v, want the refits' context.Canceled", err)
	}
}
