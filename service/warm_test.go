package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store/embedded"
)

// With warm_start the live loop keeps the warm tier the decisions ask
// for: a boot after each change the simulated fleet holds that many
// stopped (or on their way), and the morning's rise starts them in the
// warm start rather than a cold boot.
func TestServeKeepsTheWarmTier(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute, WarmStart: 90 * time.Second})
	r.serveFleet(t, fleet, nil, nil, func(p *poolspec.Pool) {
		p.Backend, p.Mode = simulated.Name, poolspec.ModeActive
		p.Fleet.WarmStart = 90 * time.Second
	})
	now := r.clock.Now() // midnight: the daily cycle rises towards 14:00
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	var kept, asked int
	for range 12 * 60 {
		r.tickEvery(t, time.Minute, 1, daily)
		st := r.svc.Status()[0]
		c := fleet.Counts(testPool)
		if c.Warm != st.Warm {
			t.Fatalf("%s: the fleet keeps %d warm, the decision asked for %d", r.clock.Now().Format("15:04"), c.Warm, st.Warm)
		}
		if st.Warm > 0 {
			asked++
			if c.Stopped+c.Warming+c.Draining >= min(st.Warm, st.Limits.MaxInstances-c.Desired) {
				kept++
			}
		}
	}
	u := fleet.Usage(testPool)
	if asked == 0 || u.WarmStarts == 0 || u.Stopped == 0 {
		t.Fatalf("warm asked at %d decisions, %d warm starts, %v stopped: want a warm tier in use", asked, u.WarmStarts, u.Stopped)
	}
	if float64(kept) < 0.95*float64(asked) {
		t.Errorf("the warm tier was at the planned size after %d of %d decisions that asked for one, want 95%%", kept, asked)
	}
	t.Logf("%d decisions asked for a warm tier, %d warm starts, %.1f stopped instance-hours", asked, u.WarmStarts, u.Stopped.Hours())
	r.checkNowCard(t, "warm-tier.png", fmt.Sprintf("Warm tier: %d kept stopped, each serving 90s after it starts", r.svc.Status()[0].Warm))
}

// A pool whose back-end keeps no stopped instances cannot plan warm
// starts: the service refuses it and names the key.
func TestWarmStartNeedsAWarmBackend(t *testing.T) {
	db, err := embedded.Open(filepath.Join(t.TempDir(), "test.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{testSpec(testPool, func(p *poolspec.Pool) { p.Fleet.WarmStart = time.Minute })}
	fake := actuatortest.New("fake").AddPool(testPool, 2, 1, 50)
	_, err = New(context.Background(), &cfg, Deps{Store: db, Backend: fakeBackend(fake), Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "warm_start") {
		t.Fatalf("New with warm_start on a back-end without a warm tier: %v, want an error naming warm_start", err)
	}
}
