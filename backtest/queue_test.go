package backtest

import (
	"math"
	"testing"
)

func TestFluidQueue(t *testing.T) {
	cases := []struct {
		name string
		// One tick of 60 s at arrival rate lambda and service rate mu,
		// after an initial backlog of backlog requests that arrived at
		// 1 req/s over the previous backlog seconds.
		lambda, mu, backlog float64
		served, left        float64
		within              float64 // requests served within a 10 s SLO
		p50                 float64 // median wait of the served, seconds
	}{
		// Capacity to spare: everything served on arrival.
		{name: "under capacity", lambda: 1, mu: 2, served: 60, within: 60},
		// Twice the capacity: request j (0..60 served) arrives at j/2 and
		// leaves at j, so waits run 0..30 s uniformly; wait ≤ 10 s for
		// j ≤ 20.
		{name: "overloaded", lambda: 2, mu: 1, served: 60, left: 60, within: 20, p50: 15},
		// 20 requests waiting (they arrived at −20..0 s), then 1 req/s
		// arrivals at 2 req/s service: the backlog drains in 20 s.
		// Backlog request j leaves at j/2 having arrived at j−20: waits
		// 20−j/2 (20..10 s over j in 0..20: none within 10 s but the
		// last). New arrival at s leaves at (20+s)/2 until the queue is
		// empty at s=20: waits 10−s/2, all within.
		{name: "backlog drains", lambda: 1, mu: 2, backlog: 20, served: 80, within: 60},
		// No capacity: nothing served, everything waits.
		{name: "no capacity", lambda: 1, mu: 0, served: 0, left: 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &fluidQueue{}
			lat := newLatencies(10)
			if tc.backlog > 0 {
				q.arrive(-tc.backlog, tc.backlog, 1)
			}
			q.arrive(0, 60, tc.lambda)
			served, _ := q.serve(0, 60, tc.mu, 0, lat)
			if math.Abs(served-tc.served) > 1e-9 || math.Abs(q.len()-tc.left) > 1e-9 {
				t.Errorf("served %.6f, left %.6f; want %v, %v", served, q.len(), tc.served, tc.left)
			}
			if math.Abs(lat.withinSL-tc.within) > 1e-9 {
				t.Errorf("within SLO %.6f, want %v", lat.withinSL, tc.within)
			}
			if tc.p50 > 0 {
				if got := lat.quantile(0.5); math.Abs(got-tc.p50)/tc.p50 > 0.06 {
					t.Errorf("median wait %.3f s, want %v ±6%% (histogram resolution)", got, tc.p50)
				}
			}
		})
	}
}

func TestFluidQueueTimeout(t *testing.T) {
	q := &fluidQueue{}
	q.arrive(0, 60, 1)
	// With no capacity, at t=90 the requests older than a 60 s timeout
	// (those that arrived before t=30) are dropped.
	if got := q.dropOlder(30); math.Abs(got-30) > 1e-9 {
		t.Errorf("dropped %v, want 30", got)
	}
	if got := q.len(); math.Abs(got-30) > 1e-9 {
		t.Errorf("left %v, want 30", got)
	}
	// What is left is the later half: served at once with 1000 req/s, the
	// first of them (arrived at 30) has waited 60 s at t=90.
	lat := newLatencies(10)
	q.serve(90, 150, 1000, 0, lat)
	// Buckets are 12% wide (20 a decade): the top edge of 60's bucket is 63.1.
	if got := lat.quantile(1); got < 59 || got > 63.2 {
		t.Errorf("longest wait %.2f s, want 60 (up to the bucket edge 63.1)", got)
	}
	if got := lat.quantile(0.01); got < 28 || got > 33.5 { // 30 s lies in bucket [28.2, 31.6)
		t.Errorf("shortest waits %.2f s, want about 30", got)
	}
}

// No request is served after waiting past the timeout: it is dropped.
func TestFluidQueueServeDropsPastTimeout(t *testing.T) {
	cases := []struct {
		name                  string
		backlog, lambda, mu   float64 // backlog arrived at 1 req/s over [−backlog, 0)
		timeout               float64
		served, dropped, left float64
		within, maxWait       float64 // within the 10 s SLO; longest served wait
	}{
		// Arrivals at 2/s, service 1/s, timeout 10 s: request x (x ≤ 20)
		// waits x/2 and leaves at x; from t=20 the head stays 10 s old,
		// 40 are served at 10 s and the other 40 arrivals of [10, 50) give
		// up; the 20 of [50, 60) still wait.
		{name: "overload holds the wait at the timeout", lambda: 2, mu: 1, timeout: 10,
			served: 60, dropped: 40, left: 20, within: 60, maxWait: 10},
		// 100 queued since −100 s, 30 s timeout: 70 have given up when the
		// server (2/s) reaches them at 0; the last 30 wait 30..15 s.
		{name: "stale backlog is dropped, not served", backlog: 100, mu: 2, timeout: 30,
			served: 30, dropped: 70, within: 0, maxWait: 30},
		// No timeout: the old behaviour, waits grow to 30 s.
		{name: "no timeout", lambda: 2, mu: 1, served: 60, left: 60, within: 20, maxWait: 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &fluidQueue{}
			lat := newLatencies(10)
			if tc.backlog > 0 {
				q.arrive(-tc.backlog, tc.backlog, 1)
			}
			q.arrive(0, 60, tc.lambda)
			served, dropped := q.serve(0, 60, tc.mu, tc.timeout, lat)
			if math.Abs(served-tc.served) > 1e-9 || math.Abs(dropped-tc.dropped) > 1e-9 ||
				math.Abs(q.len()-tc.left) > 1e-9 {
				t.Errorf("served %.6f dropped %.6f left %.6f; want %v, %v, %v",
					served, dropped, q.len(), tc.served, tc.dropped, tc.left)
			}
			if math.Abs(lat.withinSL-tc.within) > 1e-9 {
				t.Errorf("within SLO %.6f, want %v", lat.withinSL, tc.within)
			}
			// Quantiles are capped at the longest wait recorded, which
			// is exact; below it the histogram's buckets are 12% wide.
			if got := lat.quantile(1); math.Abs(got-tc.maxWait) > 1e-9 {
				t.Errorf("longest served wait %.6f s, want %v", got, tc.maxWait)
			}
			if got := lat.quantile(0.999); got > tc.maxWait+1e-9 {
				t.Errorf("P99.9 wait %.3f s above the longest %v", got, tc.maxWait)
			}
		})
	}
}

func TestFleetBootAndRelease(t *testing.T) {
	f := &fleet{bootTicks: 10}
	f.setDesired(3, 0)
	if f.ready() != 0 || f.total() != 3 {
		t.Fatalf("right after asking: ready %d total %d, want 0 and 3", f.ready(), f.total())
	}
	f.advance(9)
	if f.ready() != 0 {
		t.Errorf("ready after 9 of 10 boot ticks: %d", f.ready())
	}
	f.advance(10)
	if f.ready() != 3 {
		t.Errorf("ready after the boot delay: %d, want 3", f.ready())
	}
	f.setDesired(5, 10)
	f.setDesired(4, 11) // releases a booting one first
	if f.ready() != 3 || len(f.pending) != 1 {
		t.Errorf("after 5 then 4: ready %d booting %d, want 3 and 1", f.ready(), len(f.pending))
	}
	f.setDesired(1, 12)
	if f.ready() != 1 || len(f.pending) != 0 {
		t.Errorf("after 1: ready %d booting %d, want 1 and 0", f.ready(), len(f.pending))
	}
}

func TestBillingPerSecond(t *testing.T) {
	f := &fleet{bootTicks: 10, reserved: 1, spotShare: 0.5}
	f.setDesired(5, 0) // 1 reserved, 4 burst of which 2 spot
	var b billing
	b.bill(f, 90, 1.5, 2.5, 1.0) // 90 seconds, booting instances billed
	h := 90.0 / 3600
	want := 1*h*1.5 + 2*h*2.5 + 2*h*1.0
	if math.Abs(b.cost()-want) > 1e-12 || math.Abs(b.instanceSeconds-450) > 1e-9 {
		t.Errorf("cost %.6f for %v instance-seconds, want %.6f for 450", b.cost(), b.instanceSeconds, want)
	}
}
