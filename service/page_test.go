package service

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/service/ui/uitest"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// The status page of a service with pools in every state (active and
// limited by max_step, forecast-only, paused, failing) renders in headless
// Chromium without a problem, lists every pool with its alerts, and draws
// the selected pool's charts.
func TestStatusPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium; skipped with -short")
	}
	chromium.Find(t)
	dir := t.TempDir()
	db, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := state.Open(filepath.Join(dir, "state.db"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := actuatortest.NewClock(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC))
	pools := []struct {
		name  string
		mode  poolspec.Mode
		scale float64
	}{{"sd-xl", poolspec.ModeActive, 1}, {"llm-chat", poolspec.ModeForecastOnly, 0.6}, {"batch-embed", poolspec.ModePaused, 0.3}, {"broken", poolspec.ModeActive, 0.5}}
	cfg := poolspec.DefaultFile()
	fake := actuatortest.New("fake")
	write := func(from, to time.Time) {
		var pts []store.Point
		for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
			for _, p := range pools {
				pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": p.name}, Value: p.scale * noisyDaily(ts), Time: ts})
			}
		}
		if err := db.Write(context.Background(), pts); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pools {
		cfg.Pools = append(cfg.Pools, testSpec(p.name, func(ps *poolspec.Pool) { ps.Mode, ps.Fleet.MaxStep = p.mode, 4 }))
		fake.AddPool(p.name, 3, 1, 50)
	}
	write(clock.Now().Add(-15*24*time.Hour), clock.Now())
	flaky := &brokenPool{Querier: db, broken: "broken"}
	svc, err := New(context.Background(), &cfg, Deps{Store: flaky, Backend: fakeBackend(fake), State: st, Now: clock.Now, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 { // six hours of the morning ramp, the last 20 minutes with pool broken's store failing
		from := clock.Now()
		clock.Advance(6 * time.Minute)
		write(from, clock.Now())
		flaky.down.Store(i >= 56)
		svc.Tick(context.Background())
	}
	srv := httptest.NewServer(svc.Handler(HTTPOptions{}))
	defer srv.Close()
	r := uitest.Check(t, srv.URL, time.Second)
	t.Log(r)
	if r.PoolRows != len(pools) {
		t.Errorf("the pools table has %d rows, want %d", r.PoolRows, len(pools))
	}
	for _, s := range []string{"demand-chart/demand", "demand-chart/forecast", "demand-chart/band", "capacity-chart/ready", "capacity-chart/planned"} {
		if r.Points[s] < 2 || r.PathBytes[s] < 20 {
			t.Errorf("%s: %d points in %d bytes of path", s, r.Points[s], r.PathBytes[s])
		}
	}
	// Six hours are too few for a reactive or flat fleet to have met the
	// SLO over enough days: the page claims no saving, least of all one
	// against a static fleet.
	if !strings.Contains(r.Saving, "no saving figure yet") || strings.Contains(r.Saving, "saved") {
		t.Errorf("the cost card says %q; want no saving figure before a baseline exists", r.Saving)
	}
	if a, ok := alertOf(svc, "broken", AlertDecisionsFailing); !ok || !a.Firing {
		t.Errorf("pool broken: alert %+v, want %s firing", a, AlertDecisionsFailing)
	}
	chromium.SaveScreenshot(t, "service-pools.png", r.Screenshot)
	// Older decisions load into the table, which then holds them through
	// the refreshes instead of linking to raw JSON.
	before, after, note := uitest.OlderDecisions(t, srv.URL)
	if after <= before || !strings.Contains(note, "older decisions shown") {
		t.Errorf("decisions: %d rows, %d after showing older ones, note %q; want more rows kept and a note", before, after, note)
	}
}

// brokenPool fails the queries of one pool's series while down.
type brokenPool struct {
	store.Querier
	broken string
	down   atomic.Bool
}

func (b *brokenPool) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	if b.down.Load() && q.Match["pool"] == b.broken {
		return nil, store.ErrUnavailable
	}
	return b.Querier.Query(ctx, q)
}

// A forecast-only pool on dryrun, started on two weeks of imported history
// a third of the live demand: the dry-run fleet, which nothing was applied
// to, reads no size, so neither the status, the alerts nor the page claim
// a shortage; the model's unchecked first forecast does not size the pool
// below the live demand, and the page says a cold start is in charge.
func TestDryRunForecastOnlyPoolAtColdStart(t *testing.T) {
	dir := t.TempDir()
	db, err := embedded.Open(filepath.Join(dir, "store.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := actuatortest.NewClock(time.Date(2026, 11, 2, 6, 0, 0, 0, time.UTC))
	write := func(from, to time.Time, rps func(time.Time) float64) {
		var pts []store.Point
		for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
			pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": "api"}, Value: rps(ts), Time: ts})
		}
		if err := db.Write(context.Background(), pts); err != nil {
			t.Fatal(err)
		}
	}
	write(clock.Now().Add(-14*24*time.Hour), clock.Now(), func(ts time.Time) float64 { return daily(ts) / 3 })
	cfg := poolspec.DefaultFile()
	cfg.Pools = append(cfg.Pools, testSpec("api", func(p *poolspec.Pool) { p.Mode, p.Backend = poolspec.ModeForecastOnly, dryrun.Name }))
	svc, err := New(context.Background(), &cfg, Deps{Store: db, Now: clock.Now, Logger: quietLogger(),
		Backend: func(ctx context.Context, pc actuator.PoolConfig) (actuator.Actuator, error) {
			return dryrun.Factory(quietLogger())(ctx, pc, actuator.OptionValues{})
		}})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		from := clock.Now()
		clock.Advance(time.Minute)
		write(from, clock.Now(), daily)
		if err := svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := svc.PoolStatus("api")
	plan, err := cfg.Pools[0].Planner()
	if err != nil {
		t.Fatal(err)
	}
	if need := plan.InstancesFor(float64(st.DemandRPS)); st.Wished < need {
		t.Errorf("wished %d (%s) for %v req/s, which needs %d", st.Wished, st.Reason, st.DemandRPS, need)
	}
	if !strings.Contains(st.GateReason, "Cold start: ") || !strings.Contains(st.Reason, "cold start") {
		t.Errorf("gate %s (%s), decision %q: want both to say a cold start is in charge", st.Gate, st.GateReason, st.Reason)
	}
	if f := st.Forecast; !(f.Upper-f.Lower > 0) {
		t.Errorf("forecast band %v–%v: want a width", f.Lower, f.Upper)
	}
	if st.CurrentKnown || st.CapacityShortSeconds != 0 {
		t.Errorf("dry-run pool: current known %v, short %vs; want no size and no shortage", st.CurrentKnown, st.CapacityShortSeconds)
	}
	if a, ok := alertOf(svc, "api", AlertCapacityShort); ok {
		t.Errorf("alert %+v on a dry-run pool nothing was applied to", a)
	}
	if testing.Short() {
		return
	}
	chromium.Find(t)
	srv := httptest.NewServer(svc.Handler(HTTPOptions{}))
	defer srv.Close()
	r := uitest.Check(t, srv.URL, time.Second)
	for _, want := range []string{"Short: – (dry run: nothing applied)", "Ready / booting: dry run: nothing applied", "Cold start: none of the model's forecasts"} {
		if !strings.Contains(r.Now, want) {
			t.Errorf("the Now card lacks %q:\n%s", want, r.Now)
		}
	}
	if !strings.Contains(r.Gates, "cold start") {
		t.Errorf("the pools table's gate says %q, want a cold start badge", r.Gates)
	}
	if r.Points["capacity-chart/ready"] > 0 {
		t.Errorf("the capacity chart draws %d ready points for a pool with no size", r.Points["capacity-chart/ready"])
	}
	chromium.SaveScreenshot(t, "dryrun-cold-start.png", r.Screenshot)
}
