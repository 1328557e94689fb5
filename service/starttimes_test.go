package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
)

// A fleet that boots in 20 minutes under a pool whose boot_delay says 10:
// the status measures the starts and says boot_delay is too short.
func TestStatusMeasuresStartTimes(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 20 * time.Minute})
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{testSpec(testPool, func(p *poolspec.Pool) { p.Backend = simulated.Name; p.Mode = poolspec.ModeActive })}
	svc, err := New(context.Background(), &cfg, Deps{Store: r.store, Now: r.clock.Now, Logger: quietLogger(),
		Backend: func(_ context.Context, c actuator.PoolConfig) (actuator.Actuator, error) {
			fleet.AddPool(c.Name, 2, c.MinInstances, c.MaxInstances)
			return fleet, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = svc
	high := func(time.Time) float64 { return 150 }
	r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now(), high)
	r.tickEvery(t, time.Minute, 40, high)
	ps := r.svc.Status()[0]
	st := ps.StartTimes
	if st == nil || !st.Enough || st.Median < 18*time.Minute || st.Median > 22*time.Minute || st.Configured != 10*time.Minute ||
		!strings.Contains(st.Verdict, "asked for too late") {
		t.Fatalf("start times %+v, want a median near the fleet's 20m and boot_delay 10m called too short", st)
	}
	t.Logf("%s", st.Verdict)
}
