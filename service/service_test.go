package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// rig is a service over a real embedded store and a fake actuator.
type rig struct {
	svc   *Service
	db    *embedded.Store
	store *flakyStore // what the service reads: db, until a measurement is made to fail
	fake  *actuatortest.Fake
	clock *actuatortest.Clock
	reg   *prometheus.Registry
}

const testPool = "gpu"

// testSpec is the rig's pool: active, 1 to 50 instances of 10 req/s.
func testSpec(name string, mutate func(*poolspec.Pool)) poolspec.Pool {
	p := poolspec.DefaultPool()
	p.Name, p.Backend, p.Mode, p.Fleet.MinInstances, p.Fleet.MaxInstances = name, "fake", poolspec.ModeActive, 1, 50
	p.Demand = poolspec.SeriesRef{Measurement: "requests_rps", Match: map[string]string{"pool": name}}
	p.Fleet.RPSPerInstance, p.Fleet.BootDelay = 10, 10*time.Minute
	if mutate != nil {
		mutate(&p)
	}
	return p
}

// fakeBackend returns a Deps.Backend handing out fake for every pool.
func fakeBackend(fake *actuatortest.Fake) func(context.Context, actuator.PoolConfig) (actuator.Actuator, error) {
	return func(context.Context, actuator.PoolConfig) (actuator.Actuator, error) { return fake, nil }
}

func newRig(t *testing.T, initial int, mutate func(*poolspec.Pool)) *rig {
	t.Helper()
	return newRigWith(t, initial, mutate, func(*Deps) {})
}

func newRigWith(t *testing.T, initial int, mutate func(*poolspec.Pool), deps func(*Deps)) *rig {
	t.Helper()
	db, err := embedded.Open(filepath.Join(t.TempDir(), "test.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := actuatortest.NewClock(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{testSpec(testPool, mutate)}
	fake := actuatortest.New("fake").AddPool(testPool, initial, 1, 50)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	flaky := &flakyStore{Querier: db}
	d := Deps{Store: flaky, Backend: fakeBackend(fake), Safety: actuator.SafetyOptions{Sleep: clock.Sleep},
		Now: clock.Now, Metrics: m, Logger: quietLogger()}
	deps(&d)
	svc, err := New(context.Background(), &cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{svc: svc, db: db, store: flaky, fake: fake, clock: clock, reg: reg}
}

// flakyStore is a real store whose queries of the measurements in down
// fail as an unreachable server's do.
type flakyStore struct {
	store.Querier
	mu   sync.Mutex
	down map[string]bool
}

func (f *flakyStore) fail(measurement string, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down == nil {
		f.down = map[string]bool{}
	}
	f.down[measurement] = down
}

func (f *flakyStore) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	f.mu.Lock()
	down := f.down[q.Measurement]
	f.mu.Unlock()
	if down {
		return nil, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
	}
	return f.Querier.Query(ctx, q)
}

// writeDemand writes per-minute demand for [from, to) from rate(t).
// openState opens the state file at path, closed when the test ends (a
// test may close it sooner to restart on the same file).
func openState(t *testing.T, path string) *state.DB {
	t.Helper()
	st, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// serveFleet replaces the rig's service with one whose pool (testSpec,
// then mutate) runs on fleet, starting with 2 instances (a pool the fleet
// already has keeps its own), with metrics and state (nil: none).
func (r *rig) serveFleet(t *testing.T, fleet *simulated.Fleet, metrics *Metrics, st *state.DB, mutate func(*poolspec.Pool)) {
	t.Helper()
	r.serveFleetAs(t, fleet, fleet, metrics, st, mutate)
}

// serveFleetAs is serveFleet with act, which drives fleet, as the pool's
// back-end.
func (r *rig) serveFleetAs(t *testing.T, fleet *simulated.Fleet, act actuator.Actuator, metrics *Metrics, st *state.DB, mutate func(*poolspec.Pool)) {
	t.Helper()
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{testSpec(testPool, mutate)}
	deps := Deps{Store: r.store, Now: r.clock.Now, Metrics: metrics, Logger: quietLogger(),
		Backend: func(_ context.Context, c actuator.PoolConfig) (actuator.Actuator, error) {
			if fleet.Counts(c.Name) == (simulated.Counts{}) {
				fleet.AddPool(c.Name, 2, c.MinInstances, c.MaxInstances)
			}
			return act, nil
		}, State: st}
	svc, err := New(context.Background(), &cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	r.svc = svc
}

func (r *rig) writeDemand(t *testing.T, from, to time.Time, rate func(time.Time) float64) {
	t.Helper()
	var pts []store.Point
	for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
		pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": testPool}, Value: rate(ts), Time: ts})
	}
	if err := r.db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
}

// daily is a demand with a strong daily cycle: 20 req/s at night, 200 at 14:00.
func daily(ts time.Time) float64 {
	h := float64(ts.Hour()) + float64(ts.Minute())/60
	return 110 - 90*math.Cos(2*math.Pi*(h-2)/24)
}

func TestTickPrewarmsBeforeThePeak(t *testing.T) {
	r := newRig(t, 2, nil)
	now := r.clock.Now()
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	// At 11:00 the forecast for 11:10 onwards (boot delay 10m) must be in
	// force: the fleet is asked for what ~11:30's demand needs, before it
	// arrives, though the last minute's demand needs fewer.
	r.clock.Advance(11 * time.Hour)
	r.writeDemand(t, now, r.clock.Now(), daily)
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := r.svc.Status()[0]
	nowNeeds := int(math.Ceil(daily(r.clock.Now()) / 10))
	if st.Desired <= nowNeeds {
		t.Errorf("desired %d, want more than the %d the current demand needs (pre-warm); reason %q", st.Desired, nowNeeds, st.Reason)
	}
	if got := r.fake.Pool(testPool).Desired; got != st.Desired {
		t.Errorf("actuator desired = %d, want %d applied", got, st.Desired)
	}
	if st.Gate == "" || st.Model == "" || len(st.Plan) == 0 {
		t.Errorf("status lacks the refit: %+v", st)
	}
	if !strings.Contains(st.Reason, "forecast") {
		t.Errorf("reason %q should name the forecast term", st.Reason)
	}
}

func TestTickWithoutHistoryFallsBackToReactive(t *testing.T) {
	r := newRig(t, 2, nil)
	// Only the last 5 minutes exist, at 3× the fleet's capacity.
	r.writeDemand(t, r.clock.Now().Add(-5*time.Minute), r.clock.Now(), func(time.Time) float64 { return 60 })
	for i := 0; i < 6; i++ {
		if err := r.svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(time.Minute)
		r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), func(time.Time) float64 { return 60 })
	}
	st := r.svc.Status()[0]
	if st.Desired <= 2 {
		t.Errorf("desired %d: sustained overload should scale out reactively; reason %q", st.Desired, st.Reason)
	}
	// No forecast without history: the controller warms up (the peak seen
	// so far beside the reactive rules, control.Controller.Decide).
	if st.Gate != "warm-up" {
		t.Errorf("gate = %q, want warm-up with no history", st.Gate)
	}
}

func TestActuatorFailureIsReportedAndIsolated(t *testing.T) {
	r := newRig(t, 2, nil)
	r.writeDemand(t, r.clock.Now().Add(-24*time.Hour), r.clock.Now(), daily)
	r.fake.OnScale = func(string, int, int) error { return errors.New("boom: " + actuator.ErrRejected.Error()) }
	err := r.svc.Tick(context.Background())
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Tick error = %v, want the actuator's", err)
	}
	if st := r.svc.Status()[0]; !strings.Contains(st.Error, "boom") {
		t.Errorf("status error = %q, want it recorded", st.Error)
	}
	if got := testCounter(t, r.reg, "prewarm_pool_decision_failures_total"); got != 1 {
		t.Errorf("failures metric = %v, want 1", got)
	}
}

func TestHandler(t *testing.T) {
	r := newRig(t, 2, nil)
	r.writeDemand(t, r.clock.Now().Add(-24*time.Hour), r.clock.Now(), daily)
	release := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{Gatherer: r.reg, Release: release}))
	defer srv.Close()

	if code := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz before any tick = %d, want 503", code)
	}
	if code := get(t, srv.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz before any tick = %d, want 200 (alive)", code)
	}
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("readyz after a tick = %d, want 200", code)
	}
	resp, err := http.Get(srv.URL + "/api/v1/pools")
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Pools []PoolStatus }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Pools) != 1 || body.Pools[0].Name != testPool {
		t.Errorf("pools = %+v, err %v", body, err)
	}
	resp.Body.Close()
	resp, err = http.Post(srv.URL+"/api/v1/release", "application/json", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != http.StatusTeapot {
		t.Errorf("release not routed to the hook: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if code := get(t, srv.URL+"/metrics"); code != http.StatusOK {
		t.Errorf("metrics = %d", code)
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func testCounter(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// When the store cannot be read the pool keeps its capacity: the tick fails
// (and says why), nothing is scaled in, and the plan in force still applies.
func TestStoreDownHoldsCapacity(t *testing.T) {
	r := newRig(t, 2, nil)
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-15*24*time.Hour), start.Add(14*time.Hour), daily)
	r.clock.Advance(14 * time.Hour) // the daily peak: ~20 instances
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := r.fake.Pool(testPool).Desired
	r.store.fail("requests_rps", true)
	for range 30 { // long enough for the reactive scale-in (20m) had demand read as 0
		r.clock.Advance(time.Minute)
		err := r.svc.Tick(context.Background())
		if err == nil || !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("Tick error = %v, want the store's", err)
		}
	}
	st := r.svc.Status()[0]
	if got := r.fake.Pool(testPool).Desired; got < before {
		t.Errorf("desired fell from %d to %d while the store was down; reason %q", before, got, st.Reason)
	}
	if !strings.Contains(st.Error, "store unavailable") {
		t.Errorf("status error = %q, want the store's", st.Error)
	}
	r.store.fail("requests_rps", false)
	r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), daily)
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatalf("after the store came back: %v", err)
	}
	if st := r.svc.Status()[0]; st.Error != "" {
		t.Errorf("status error %q not cleared", st.Error)
	}
}

// A collector that stops writing is not zero demand: the pool is held, not
// scaled in, and the error names the missing series.
func TestSilentCollectorHoldsCapacity(t *testing.T) {
	r := newRig(t, 30, nil) // far more than the night needs
	r.writeDemand(t, r.clock.Now().Add(-2*time.Hour), r.clock.Now(), func(time.Time) float64 { return 5 })
	var err error
	for range 40 {
		r.clock.Advance(time.Minute) // and nothing written
		err = r.svc.Tick(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "no requests_rps{pool=gpu} sample in the last 1m0s") {
		t.Errorf("Tick error = %v, want the missing series named", err)
	}
	if got := r.fake.Pool(testPool).Desired; got != 30 {
		t.Errorf("desired = %d, want 30 held while no demand is reported; reason %q", got, r.svc.Status()[0].Reason)
	}
	if st := r.svc.Status()[0]; !strings.HasPrefix(st.Reason, "hold 30: live signals unavailable") {
		t.Errorf("reason = %q, want the hold explained", st.Reason)
	}
}

// One pool's failure does not stop the next pool's decision.
func TestFailingPoolDoesNotStopOthers(t *testing.T) {
	db, err := embedded.Open(filepath.Join(t.TempDir(), "test.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	var pts []store.Point
	for ts := now.Add(-10 * time.Minute); ts.Before(now); ts = ts.Add(time.Minute) {
		for _, m := range []string{"broken_rps", "fine_rps"} {
			pts = append(pts, store.Point{Measurement: m, Tags: map[string]string{"pool": "x"}, Value: 100, Time: ts})
		}
	}
	if err := db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	cfg := poolspec.DefaultFile()
	fake := actuatortest.New("fake").AddPool("broken", 3, 1, 50).AddPool("fine", 3, 1, 50)
	for _, name := range []string{"broken", "fine"} {
		cfg.Pools = append(cfg.Pools, testSpec(name, func(p *poolspec.Pool) {
			p.Demand = poolspec.SeriesRef{Measurement: name + "_rps", Match: map[string]string{"pool": "x"}}
		}))
	}
	flaky := &flakyStore{Querier: db}
	flaky.fail("broken_rps", true)
	svc, err := New(context.Background(), &cfg, Deps{Store: flaky, Backend: fakeBackend(fake), Now: func() time.Time { return now }, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Tick(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "pool broken: ") {
		t.Fatalf("Tick error = %v, want pool broken's", err)
	}
	st := svc.Status()
	if st[0].Error == "" || st[1].Error != "" {
		t.Errorf("errors = %q, %q; want only the broken pool's", st[0].Error, st[1].Error)
	}
	if st[1].DemandRPS != 100 || st[1].Reason == "" {
		t.Errorf("fine pool = %+v, want a decision on 100 req/s", st[1])
	}
}

func TestObserve(t *testing.T) {
	tests := []struct {
		name      string
		gpuUtil   []float64 // one GPU per value, percent; nil: none written
		queue     float64
		demand    float64
		instances int
		wantUtil  float64
	}{
		{"measured: the mean over the GPUs", []float64{60, 70, 80, 70}, 0, 100, 10, 0.7},
		{"measured, queue waiting", []float64{50}, 3, 100, 10, 1},
		{"no GPU sample: derived from demand", nil, 0, 50, 10, 0.5},
		{"derived, clipped at 1", nil, 0, 500, 10, 1},
		{"derived, queue waiting", nil, 2, 10, 10, 1},
		{"derived, no instances but demand", nil, 0, 10, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 2, func(pc *poolspec.Pool) {
				pc.Utilisation = &poolspec.SeriesRef{Measurement: "gpu_util", Match: map[string]string{"pool": testPool}}
				pc.Queue = &poolspec.SeriesRef{Measurement: "queue", Match: map[string]string{"pool": testPool}, Aggregate: store.Last}
			})
			at := r.clock.Now().Add(-30 * time.Second)
			pts := []store.Point{
				{Measurement: "requests_rps", Tags: map[string]string{"pool": testPool}, Value: tt.demand, Time: at},
				{Measurement: "queue", Tags: map[string]string{"pool": testPool}, Value: tt.queue, Time: at},
			}
			for i, u := range tt.gpuUtil {
				pts = append(pts, store.Point{Measurement: "gpu_util", Tags: map[string]string{"pool": testPool, "gpu": fmt.Sprint(i)}, Value: u, Time: at})
			}
			if err := r.db.Write(context.Background(), pts); err != nil {
				t.Fatal(err)
			}
			p := r.svc.pools[0]
			obs, err := r.svc.observe(context.Background(), p, r.clock.Now(), tt.instances, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(obs.Utilisation-tt.wantUtil) > 1e-9 || obs.DemandRPS != tt.demand || obs.Queue != tt.queue {
				t.Errorf("obs = %+v, want utilisation %v, demand %v, queue %v", obs, tt.wantUtil, tt.demand, tt.queue)
			}
		})
	}
}

func TestEpochFloor(t *testing.T) {
	at := time.Date(2026, 11, 2, 10, 17, 42, 5, time.UTC)
	tests := []struct {
		step time.Duration
		want time.Time
	}{
		{30 * time.Minute, time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)},
		{time.Hour, time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)},
		// 7m and 5h do not divide a day: time.Truncate (from year 1) gives
		// 10:16 and 06:00, off the store's windows (from 1970). Reference:
		// floor of the Unix time, e.g. python3 -c 'import datetime as d; t=int(d.datetime(2026,11,2,10,17,42,tzinfo=d.timezone.utc).timestamp()); print(d.datetime.fromtimestamp(t-t%420, d.timezone.utc))'
		{7 * time.Minute, time.Date(2026, 11, 2, 10, 17, 0, 0, time.UTC)},
		{5 * time.Hour, time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := epochFloor(at, tt.step); !got.Equal(tt.want) {
			t.Errorf("epochFloor(%v, %v) = %v, want %v", at, tt.step, got, tt.want)
		}
	}
}

// Status and the HTTP API may be read while a tick runs (go test -race).
func TestStatusDuringTick(t *testing.T) {
	r := newRig(t, 2, nil)
	r.writeDemand(t, r.clock.Now().Add(-3*24*time.Hour), r.clock.Now(), daily)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{Gatherer: r.reg}))
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			r.svc.Tick(context.Background())
		}
	}()
	for {
		select {
		case <-done:
			if st := r.svc.Status()[0]; st.Reason == "" {
				t.Errorf("no decision recorded: %+v", st)
			}
			return
		default:
			for _, path := range []string{"/api/v1/pools", "/healthz", "/metrics"} {
				get(t, srv.URL+path)
			}
		}
	}
}

// What the actuator's safety layer refuses: a rate-limited change is not a
// failure (the next tick tries again); an open breaker is, and capacity
// stays where it is.
func TestActuatorRefusals(t *testing.T) {
	t.Run("rate limited", func(t *testing.T) {
		// Floors of 5 from 00:00 and 9 from 00:03 (boot 1m): the second
		// change falls within min_interval.
		r := newRig(t, 2, func(pc *poolspec.Pool) {
			pc.Fleet.MinInterval, pc.Fleet.BootDelay = time.Hour, time.Minute
			pc.Windows = "daily 00:00-00:03 at least 5\ndaily 00:03-01:00 at least 9"
		})
		for i := range 6 {
			r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), func(time.Time) float64 { return 1 })
			if err := r.svc.Tick(context.Background()); err != nil {
				t.Fatalf("tick %d: %v", i, err)
			}
			r.clock.Advance(time.Minute)
		}
		if got := len(r.fake.CallsOf(actuator.OpSetDesired)); got != 1 || r.fake.Pool(testPool).Desired != 5 {
			t.Errorf("%d changes applied within min_interval (desired %d), want 1 (5)", got, r.fake.Pool(testPool).Desired)
		}
		if st := r.svc.Status()[0]; st.Error != "" || st.Wished != 9 || st.Desired != 5 || st.Outcome != OutcomeRateLimited {
			t.Errorf("status = %+v: want 9 wished, 5 applied, rate limited and no error (rate limiting is not a failure)", st)
		}
	})
	t.Run("breaker open", func(t *testing.T) {
		r := newRig(t, 2, func(pc *poolspec.Pool) { pc.Windows = "daily 00:00-23:00 at least 6" })
		r.fake.OnScale = func(string, int, int) error { return fmt.Errorf("provider down: %w", actuator.ErrTransient) }
		var err error
		for i := range 8 {
			r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), func(time.Time) float64 { return 100 + float64(i) })
			err = r.svc.Tick(context.Background())
			r.clock.Advance(time.Minute)
		}
		if !errors.Is(err, actuator.ErrCircuitOpen) {
			t.Errorf("Tick error = %v, want the open breaker", err)
		}
		if got := r.fake.Pool(testPool).Desired; got != 2 {
			t.Errorf("desired = %d, want 2 left alone", got)
		}
	})
}

// Holding a pool whose back-end cannot report its size leaves it alone
// rather than setting it to the 0 it reads as.
func TestHoldLeavesUnknownCapacityAlone(t *testing.T) {
	r := newRig(t, 7, nil)
	r.fake.OnCapacity = func(string) error { return actuator.ErrNotImplemented }
	r.store.fail("requests_rps", true)
	if err := r.svc.Tick(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Tick error = %v, want the store's", err)
	}
	if calls := r.fake.CallsOf(actuator.OpSetDesired); len(calls) != 0 || r.fake.Pool(testPool).Desired != 7 {
		t.Errorf("set_desired calls %v, desired %d: want the pool of 7 left alone", calls, r.fake.Pool(testPool).Desired)
	}
}
