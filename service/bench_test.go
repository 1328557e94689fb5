package service

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// benchPools is the scale one service must handle within its tick (0.5 s)
// and refit round (10 s) on 2 cores.
const benchPools = 1000

// benchLiveMinutes of per-minute demand follow each pool's history, so a
// benchmark can tick that many times (run with -benchtime 20x).
const benchLiveMinutes = 120

// benchService builds a service over benchPools active pools, each with 28
// days of demand at 30-minute steps in a real embedded store (the forecast
// grid's own step, so a refit reads 1,344 points) and per-minute live
// demand after it, a fake back-end, a state file and metrics: what serve
// runs, minus the network. It returns the service, a clock advancer and
// the heap the service holds per pool after its first refit round.
func benchService(b *testing.B) (*Service, *actuatortest.Clock, *actuatortest.Fake, float64) {
	b.Helper()
	dir := b.TempDir()
	db, err := embedded.Open(filepath.Join(dir, "bench.db"), embedded.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	now := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	clock := actuatortest.NewClock(now)
	fake := actuatortest.New("fake")
	file := poolspec.DefaultFile()
	for i := range benchPools {
		name := fmt.Sprintf("pool-%04d", i)
		scale := 0.5 + float64(i%7)/4 // pools of different sizes
		var pts []store.Point
		add := func(ts time.Time) {
			pts = append(pts, store.Point{Measurement: "requests_rps", Tags: map[string]string{"pool": name}, Value: scale * daily(ts), Time: ts})
		}
		for ts := now.Add(-28 * 24 * time.Hour); ts.Before(now); ts = ts.Add(30 * time.Minute) {
			add(ts)
		}
		for ts := now; ts.Before(now.Add(benchLiveMinutes * time.Minute)); ts = ts.Add(time.Minute) {
			add(ts)
		}
		if err := db.Write(context.Background(), pts); err != nil {
			b.Fatal(err)
		}
		file.Pools = append(file.Pools, testSpec(name, func(p *poolspec.Pool) { p.Fleet.MaxStep, p.Fleet.MinInterval = 4, 5*time.Minute }))
		fake.AddPool(name, 5, 0, 0)
	}
	st, err := state.Open(filepath.Join(dir, "state.db"), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	svc, err := New(context.Background(), &file, Deps{Store: db, Backend: fakeBackend(fake), State: st, Now: clock.Now,
		Metrics: metrics, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := svc.Tick(context.Background()); err != nil { // the first refit round
		b.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPool := float64(after.HeapAlloc-before.HeapAlloc) / benchPools
	return svc, clock, fake, perPool
}

// BenchmarkTick1000 is one tick over 1,000 pools without a refit: live
// reads, a decision and a change through Safe where one is due.
//
//	go test ./service -run '^$' -bench Tick1000 -benchtime 20x -cpu 2
func BenchmarkTick1000(b *testing.B) {
	svc, clock, fake, perPool := benchService(b)
	for _, p := range svc.pools {
		p.nextRefit = clock.Now().Add(365 * 24 * time.Hour) // no refit in the loop
	}
	n := 0
	changes := len(fake.CallsOf(actuator.OpSetDesired))
	cpu := cpuTime()
	for b.Loop() {
		if n++; n >= benchLiveMinutes {
			b.Fatalf("more ticks than the %d minutes of live demand written; use -benchtime 20x", benchLiveMinutes)
		}
		clock.Advance(time.Minute)
		if err := svc.Tick(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(perPool, "heap-B/pool")
	b.ReportMetric(float64(len(fake.CallsOf(actuator.OpSetDesired))-changes)/float64(b.N), "changes/op")
}

// cpuTime is the CPU time (user and system) the process used so far: on a
// machine shared with other work, wall time per op is an upper bound and
// CPU time per op what the work costs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRefitRound1000 is a full refit round: every one of 1,000 pools
// reads 28 days of demand at 30 minutes and refits model/auto and the
// seasonal profile, then decides.
//
//	go test ./service -run '^$' -bench RefitRound1000 -benchtime 3x -cpu 2
func BenchmarkRefitRound1000(b *testing.B) {
	svc, clock, _, _ := benchService(b)
	cpu := cpuTime()
	for b.Loop() {
		for _, p := range svc.pools {
			p.nextRefit = time.Time{}
		}
		clock.Advance(time.Minute)
		if err := svc.Tick(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}
