package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// rig is a service over a real embedded store and a fake actuator.
type rig struct {
	svc   *Service
	db    *embedded.Store
	fake  *actuatortest.Fake
	clock *actuatortest.Clock
	reg   *prometheus.Registry
}

const testPool = "gpu"

func newRig(t *testing.T, initial int, mutate func(*PoolConfig)) *rig {
	t.Helper()
	db, err := embedded.Open(filepath.Join(t.TempDir(), "test.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := actuatortest.NewClock(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	pc := PoolConfig{Name: testPool, Backend: "fake", Min: 1, Max: 50,
		Demand:         SeriesRef{Measurement: "requests_rps", Match: map[string]string{"pool": testPool}},
		RPSPerInstance: 10, BootDelay: 10 * time.Minute}
	if mutate != nil {
		mutate(&pc)
	}
	cfg := DefaultConfig()
	cfg.Pools = []PoolConfig{pc}
	fake := actuatortest.New("fake").AddPool(testPool, initial, 1, 50)
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	safe := actuator.NewSafe(fake, actuator.SafetyOptions{Pools: []actuator.PoolConfig{pc.Actuator()},
		Now: clock.Now, Sleep: clock.Sleep, Logger: quiet})
	svc, err := New(cfg, Deps{Store: db, Actuators: map[string]*actuator.Safe{testPool: safe}, Now: clock.Now, Metrics: m, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{svc: svc, db: db, fake: fake, clock: clock, reg: reg}
}

// writeDemand writes per-minute demand for [from, to) from rate(t).
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
	if st.Gate != "reactive" {
		t.Errorf("gate = %q, want reactive with no history", st.Gate)
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
	srv := httptest.NewServer(r.svc.Handler(r.reg, release))
	defer srv.Close()

	if code := get(t, srv.URL+"/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("healthz before any tick = %d, want 503", code)
	}
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := get(t, srv.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("healthz after a tick = %d, want 200", code)
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
