package backtest_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// The backtest's hybrid is what `forecaster serve` does. The same demand
// (four days of synthetic demand per minute, from a Monday) is replayed
// through service.Service on a simulated clock (each minute's demand
// written to an embedded store before the next tick, a simulated fleet as
// the back-end: what forecaster demo does) and through the backtest's hybrid
// with the same pool's settings. Both must ask for the same instances at
// every minute: the same refits at the same times, the same gate, the same
// warm-up, the same calibration and the same reactive rules on the same
// signals.
//
// Two signals differ by design and are kept out of the comparison's way:
// the service derives utilisation from demand over every instance that
// exists (booting ones included: the back-ends cannot tell them apart),
// the simulator measures it on the ready ones; and the service here reads
// no queue series (0), where the simulator has a queue. The pool's
// utilisation thresholds are therefore set where neither reading crosses
// them (scale out above 100%, scale in below 1%) and its queue threshold
// out of reach; the SLO rule, which both read from the same demand and
// count, stays on. The tuner runs on both sides, its twins fed the same
// observations.
func TestBacktestHybridIsTheService(t *testing.T) {
	if testing.Short() {
		t.Skip("ticks the service 5,760 times")
	}
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	demand := datasets.DefaultSynthetic().Generate(start, time.Minute, 4*24*60)

	pool := poolspec.DefaultPool()
	pool.Name, pool.Backend, pool.Mode = "gpu", simulated.Name, poolspec.ModeActive
	pool.Fleet.MinInstances, pool.Fleet.MaxInstances, pool.Fleet.RPSPerInstance, pool.Fleet.BootDelay = 1, 40, 20, 10*time.Minute
	pool.Fleet.MaxStep, pool.Fleet.MinInterval = 3, 5*time.Minute
	pool.Reactive.ScaleOutUtilisation, pool.Reactive.ScaleInUtilisation = 1, 0.01
	pool.Reactive.ScaleOutQueue = 1e9
	pool.Tune.Enabled = false
	pool.Demand = poolspec.SeriesRef{Measurement: poolspec.DefaultDemandMeasurement, Match: map[string]string{store.TagPool: "gpu"}}
	plan, err := pool.Planner()
	if err != nil {
		t.Fatal(err)
	}
	initial := min(max(plan.InstancesFor(demand.Values[0]), pool.Fleet.MinInstances), pool.Fleet.MaxInstances)

	// The backtest.
	cfg := backtest.DefaultConfig()
	cfg.Planner = plan
	cfg.Forecast.Settings = pool.Settings()
	// The test's collector writes each minute's demand as soon as the
	// minute ends, so the service reads it at the next tick: no lag
	// beyond the tick on the backtest's side either.
	cfg.MetricsLag = -1
	cfg.Tune.Enabled = false
	tr := backtest.Trace{Name: "synthetic", Start: demand.Start, Step: demand.Step, RPS: demand.Values}
	rep, err := backtest.Run(context.Background(), tr, cfg, backtest.PolicyHybrid)
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Policies[0].Capacity

	// The service, minute by minute.
	db, err := embedded.Open(filepath.Join(t.TempDir(), "store.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := actuatortest.NewClock(start)
	fleet := simulated.New(simulated.Options{Now: clock.Now, BootDelay: pool.Fleet.BootDelay})
	file := poolspec.DefaultFile()
	file.Interval = time.Minute
	file.Pools = []poolspec.Pool{pool}
	quiet := slog.New(slog.DiscardHandler)
	svc, err := service.New(context.Background(), &file, service.Deps{
		Store: db,
		Backend: func(_ context.Context, c actuator.PoolConfig) (actuator.Actuator, error) {
			fleet.AddPool(c.Name, initial, c.MinInstances, c.MaxInstances)
			return fleet, nil
		},
		Safety: actuator.SafetyOptions{Sleep: clock.Sleep},
		Now:    clock.Now, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	differ, first := 0, ""
	for i := range demand.Len() {
		now := demand.Time(i)
		clock.Advance(now.Sub(clock.Now()))
		if i > 0 { // the minute before now has passed: the collector wrote it
			pt := store.Point{Measurement: poolspec.DefaultDemandMeasurement, Tags: map[string]string{store.TagPool: "gpu"},
				Value: demand.Values[i-1], Time: demand.Time(i - 1)}
			if err := db.Write(ctx, []store.Point{pt}); err != nil {
				t.Fatal(err)
			}
		}
		// Minute 0 has no demand yet: the tick holds, and says so.
		if err := svc.Tick(ctx); err != nil && (i > 0 || !strings.Contains(err.Error(), "no ")) {
			t.Fatalf("tick at %s: %v", now.Format(time.RFC3339), err)
		}
		got := fleet.Counts("gpu").Desired
		if w := int(want[i].Desired + 0.5); got != w {
			if differ == 0 {
				st, _ := svc.PoolStatus("gpu")
				first = now.Format("Mon 15:04") + ": service " + st.Reason
			}
			differ++
		}
	}
	h := rep.Policies[0]
	t.Logf("%d minutes, %d changes by the backtest's hybrid (minutes per level: %v); %d minutes differ",
		demand.Len(), len(h.Decisions), h.ForecastMinutes, differ)
	if planned := h.ForecastMinutes["model"] + h.ForecastMinutes["profile"]; len(h.Decisions) < 30 || planned < 600 {
		t.Errorf("setup: %d changes and %v minutes on a forecast plan in four days; want a pool that follows a forecast",
			len(h.Decisions), planned)
	}
	if differ > 0 {
		t.Errorf("the service and the backtest ask for different instances in %d of %d minutes; first at %s", differ, demand.Len(), first)
	}
}
