package service

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/remote"
)

// hungListener accepts connections on loopback, reads what they send and
// never answers: a store or an API server that is up but hung.
func hungListener(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + lis.Addr().String()
}

// routedStore reads the measurement hung through hung, the rest from db.
type routedStore struct {
	db, hung store.Querier
}

func (r routedStore) Query(ctx context.Context, q store.Query) ([]store.Series, error) {
	if q.Measurement == "hung_rps" {
		return r.hung.Query(ctx, q)
	}
	return r.db.Query(ctx, q)
}

// isolationRig runs three pools on the real clock with a 1 s interval:
// "hung" reads its demand from a store that never answers, "kube" is
// scaled through kubescale against an API server that never answers, and
// "fine" reads and scales normally. Each has a floor of 3 and starts at 1.
func isolationRig(t *testing.T, stuck *actuatortest.Fake) (*Service, *actuatortest.Fake) {
	t.Helper()
	db, err := embedded.Open(filepath.Join(t.TempDir(), "db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Now()
	var pts []store.Point
	for _, m := range []string{"hung_rps", "kube_rps", "fine_rps", "stuck_rps"} {
		for ts := now.Add(-time.Minute); ts.Before(now.Add(10 * time.Second)); ts = ts.Add(100 * time.Millisecond) {
			pts = append(pts, store.Point{Measurement: m, Tags: map[string]string{"pool": "x"}, Value: 5, Time: ts})
		}
	}
	if err := db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	hungStore, err := remote.New(hungListener(t), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fake := actuatortest.New("fake").AddPool("hung", 1, 0, 0).AddPool("fine", 1, 0, 0)
	kubes := actuator.NewRegistry()
	if err := kubes.Register(kubescale.Name, kubescale.NewFactory(func(string) string { return "" }, quietLogger(), nil), kubescale.PoolOptions); err != nil {
		t.Fatal(err)
	}
	hungAPI := hungListener(t)
	file := poolspec.DefaultFile()
	file.Interval = time.Second
	names := []string{"hung", "kube", "fine"}
	if stuck != nil {
		names = append(names, "stuck")
	}
	for _, name := range names {
		file.Pools = append(file.Pools, testSpec(name, func(p *poolspec.Pool) {
			p.Demand = poolspec.SeriesRef{Measurement: name + "_rps", Match: map[string]string{"pool": "x"}}
			p.Windows = "daily 00:00-24:00 at least 3"
			if name == "kube" {
				p.Backend, p.Options = kubescale.Name, map[string]string{"api_server": hungAPI, "namespace": "ns", "workload": "w", "token_file": ""}
			}
		}))
	}
	backend := func(ctx context.Context, pc actuator.PoolConfig) (actuator.Actuator, error) {
		switch pc.Name {
		case "kube":
			return kubes.New(ctx, kubescale.Name, pc)
		case "stuck":
			return stuck, nil
		}
		return fake, nil
	}
	svc, err := New(context.Background(), &file, Deps{Store: routedStore{db: db, hung: hungStore}, Backend: backend,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return svc, fake
}

// A store that hangs fails that pool's live read, yet its schedule floor
// is applied within the interval; a back-end that hangs fails that pool's
// decision; the other pool decides within its interval all the same.
func TestHungStoreAndBackendDoNotStallOtherPools(t *testing.T) {
	svc, fake := isolationRig(t, nil)
	for tick := range 3 {
		began := time.Now()
		err := svc.Tick(context.Background())
		took := time.Since(began)
		if took > 3*time.Second { // generous for a loaded CI machine; a stalled tick takes minutes
			t.Errorf("tick %d took %v, want about one interval (1s) at most", tick, took)
		}
		if err == nil {
			t.Fatalf("tick %d: no error, want the hung pools' failures", tick)
		}
		st := map[string]PoolStatus{}
		for _, s := range svc.Status() {
			st[s.Name] = s
		}
		t.Logf("tick %d: %v; hung %v, kube %v, fine %v", tick, took.Round(time.Millisecond),
			time.Duration(st["hung"].DecidedIn).Round(time.Millisecond), time.Duration(st["kube"].DecidedIn).Round(time.Millisecond),
			time.Duration(st["fine"].DecidedIn).Round(time.Millisecond))
		if fine := st["fine"]; fine.Error != "" || fine.Outcome == OutcomeFailed || time.Duration(fine.DecidedIn) > 900*time.Millisecond {
			t.Errorf("tick %d: fine pool %+v, want a decision well within the interval", tick, fine)
		}
		if hung := st["hung"]; !strings.Contains(hung.Error, "reading live signals") || !strings.Contains(hung.Error, "store unavailable") {
			t.Errorf("tick %d: hung-store pool error %q, want its live read timed out", tick, hung.Error)
		}
		if kube := st["kube"]; !strings.Contains(kube.Error, "deadline exceeded") {
			t.Errorf("tick %d: hung back-end pool error %q, want the deadline", tick, kube.Error)
		}
	}
	// The hung store's pool was held, and its floor of 3 applied.
	if got := fake.Pool("hung").Desired; got != 3 {
		t.Errorf("hung-store pool at %d, want its floor of 3 applied while the store hangs", got)
	}
	if got := fake.Pool("fine").Desired; got != 3 {
		t.Errorf("fine pool at %d, want 3", got)
	}
}

// A back-end call that ignores its context (a stuck SDK) keeps only its own
// pool from deciding: the tick ends on time, and later ticks skip that pool
// and say so while the others decide.
func TestStuckBackendIsSkipped(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := actuatortest.New("stuck").AddPool("stuck", 1, 0, 0)
	stuck.OnCapacity = func(string) error { <-release; return nil }
	svc, fake := isolationRig(t, stuck)
	for tick := range 2 {
		began := time.Now()
		svc.Tick(context.Background())
		if took := time.Since(began); took > 3*time.Second {
			t.Errorf("tick %d took %v, want about one interval", tick, took)
		}
	}
	var st PoolStatus
	for _, s := range svc.Status() {
		if s.Name == "stuck" {
			st = s
		}
	}
	if !strings.Contains(st.Error, "still running") || st.DecidingSince.IsZero() {
		t.Errorf("stuck pool status %+v, want it skipped as still running", st)
	}
	if fake.Pool("fine").Desired != 3 {
		t.Errorf("fine pool at %d, want 3", fake.Pool("fine").Desired)
	}
}

// SIGTERM (ctx cancelled) during a tick: the decisions in flight finish,
// none starts after it, and no failure is reported for the pools skipped.
func TestStopFinishesDecisionsInFlight(t *testing.T) {
	gate := make(chan struct{})
	fake := actuatortest.New("fake")
	file := poolspec.DefaultFile()
	file.Workers = 2
	for _, name := range []string{"a", "b", "c", "d"} {
		fake.AddPool(name, 1, 0, 0)
		file.Pools = append(file.Pools, testSpec(name, func(p *poolspec.Pool) { p.Windows = "daily 00:00-24:00 at least 3" }))
	}
	var calls sync.WaitGroup
	calls.Add(2)
	fake.OnScale = func(pool string, _, _ int) error {
		calls.Done()
		<-gate // a slow back-end: the change takes a while
		return nil
	}
	db, err := embedded.Open(filepath.Join(t.TempDir(), "db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pts []store.Point
	for _, p := range file.Pools {
		pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": p.Name}, Value: 5, Time: time.Now()})
	}
	if err := db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
	svc, err := New(context.Background(), &file, Deps{Store: db, Backend: fakeBackend(fake), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Tick(ctx) }()
	calls.Wait() // two decisions are in the back-end
	cancel()     // SIGTERM
	time.Sleep(50 * time.Millisecond)
	close(gate)
	err = <-done
	if err != nil {
		t.Errorf("Tick = %v: the decisions in flight must finish, not fail with the signal", err)
	}
	if n := len(fake.CallsOf(actuator.OpSetDesired)); n != 2 {
		t.Errorf("%d changes, want the 2 in flight finished and none started after the stop", n)
	}
	for _, st := range svc.Status() {
		if st.Outcome == OutcomeFailed || st.Error != "" {
			t.Errorf("pool %s failed: %s", st.Name, st.Error)
		}
	}
}

// A panic in one pool's decision (here its back-end's) fails that pool as
// an internal error, with the stack in the log; the process lives and the
// other pools decide.
func TestPanicInOnePoolIsAnInternalErrorOfThatPool(t *testing.T) {
	fake := actuatortest.New("fake")
	file := poolspec.DefaultFile()
	for _, name := range []string{"broken", "fine"} {
		fake.AddPool(name, 1, 0, 0)
		file.Pools = append(file.Pools, testSpec(name, func(p *poolspec.Pool) {
			p.Mode = poolspec.ModeActive
			p.Windows = "daily 00:00-24:00 at least 3"
		}))
	}
	fake.OnCapacity = func(pool string) error {
		if pool == "broken" {
			panic("index out of range in a back-end library")
		}
		return nil
	}
	db, err := embedded.Open(filepath.Join(t.TempDir(), "db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var log strings.Builder
	svc, err := New(context.Background(), &file, Deps{Store: db, Backend: fakeBackend(fake),
		Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	err = svc.Tick(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pool broken: internal error: index out of range") {
		t.Fatalf("Tick = %v, want the broken pool's internal error", err)
	}
	for _, st := range svc.Status() {
		switch st.Name {
		case "broken":
			if st.Outcome != OutcomeFailed || !strings.Contains(st.Error, "internal error") {
				t.Errorf("broken pool status %+v, want failed with the internal error", st)
			}
		case "fine":
			// No demand is written, so it holds on its floor: applied.
			if st.Outcome != OutcomeApplied || strings.Contains(st.Error, "internal") || fake.Pool("fine").Desired != 3 {
				t.Errorf("fine pool (%s, %q) at %d, want its floor of 3 applied", st.Outcome, st.Error, fake.Pool("fine").Desired)
			}
		}
	}
	if !strings.Contains(log.String(), "please report it") || !strings.Contains(log.String(), "goroutine") {
		t.Errorf("log lacks the internal error's stack:\n%s", log.String())
	}
}

// syncWriter serialises writes from the pools' goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
