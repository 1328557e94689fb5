package service

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
)

// countingHandler counts the log records whose message holds a text.
type countingHandler struct {
	text string
	n    *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.text) {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// Warm starts that take longer than a cold boot cannot be put in force as
// the plan's warm_start (it must stay below boot_delay): the pool keeps
// its setting and says so once, not at every decision after.
func TestUnusableStartTimesAreReportedOnce(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute, WarmStart: 12 * time.Minute})
	r.serveFleet(t, fleet, nil, nil, func(p *poolspec.Pool) {
		p.Backend, p.Mode, p.LearnBootDelay, p.Fleet.WarmStart = simulated.Name, poolspec.ModeActive, true, 90*time.Second
		p.Forecast.Step, p.Forecast.RefitEvery, p.Forecast.Horizon, p.Forecast.History = time.Minute, time.Hour, 30*time.Minute, 3*time.Hour
		p.Forecast.Periods, p.Gating.MinSeasons, p.ScaleInOnForecast, p.Tune.Enabled = []time.Duration{40 * time.Minute}, 1, true, false
	})
	var refused atomic.Int64
	r.svc.log = slog.New(countingHandler{text: "measured ones could not be put in force", n: &refused})
	r.writeDemand(t, r.clock.Now().Add(-3*time.Hour), r.clock.Now(), swings)
	r.tickEvery(t, 30*time.Second, 6*120, swings)
	st := r.svc.Status()[0].StartTimes
	if st == nil || st.Warm == nil || !st.Warm.Enough || st.Warm.P90 < 10*time.Minute {
		t.Fatalf("start times %+v: want enough warm starts measured at a boot or more", st)
	}
	if got := r.svc.pools[0].plan.Fleet.WarmStart; got != 90*time.Second {
		t.Errorf("the plan's warm start is %v, want warm_start's 90s kept", got)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("the refusal was logged %d times over %d decisions, want once", n, 6*120)
	}
}
