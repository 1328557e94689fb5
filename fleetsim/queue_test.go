package fleetsim

import (
	"math"
	"math/rand/v2"
	"slices"
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
			lat := newLatencies(10, 0, 1)
			if tc.backlog > 0 {
				q.arrive(-tc.backlog, tc.backlog, 1)
			}
			q.arrive(0, 60, tc.lambda)
			served, _ := q.serve(0, 60, tc.mu, 0, lat)
			if math.Abs(served-tc.served) > 1e-9 || math.Abs(q.len()-tc.left) > 1e-9 {
				t.Errorf("served %.6f, left %.6f; want %v, %v", served, q.len(), tc.served, tc.left)
			}
			if math.Abs(lat.within-tc.within) > 1e-9 {
				t.Errorf("within SLO %.6f, want %v", lat.within, tc.within)
			}
			if tc.p50 > 0 {
				if got := lat.wait.quantile(0.5); math.Abs(got-tc.p50)/tc.p50 > 0.06 {
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
	lat := newLatencies(10, 0, 1)
	q.serve(90, 150, 1000, 0, lat)
	// Buckets are 12% wide (20 a decade): the top edge of 60's bucket is 63.1.
	if got := lat.wait.quantile(1); got < 59 || got > 63.2 {
		t.Errorf("longest wait %.2f s, want 60 (up to the bucket edge 63.1)", got)
	}
	if got := lat.wait.quantile(0.01); got < 28 || got > 33.5 { // 30 s lies in bucket [28.2, 31.6)
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
		// No timeout: nothing is dropped, waits grow to 30 s.
		{name: "no timeout", lambda: 2, mu: 1, served: 60, left: 60, within: 20, maxWait: 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &fluidQueue{}
			lat := newLatencies(10, 0, 1)
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
			if math.Abs(lat.within-tc.within) > 1e-9 {
				t.Errorf("within SLO %.6f, want %v", lat.within, tc.within)
			}
			// Quantiles are capped at the longest wait recorded, which
			// is exact; below it the histogram's buckets are 12% wide.
			if got := lat.wait.quantile(1); math.Abs(got-tc.maxWait) > 1e-9 {
				t.Errorf("longest served wait %.6f s, want %v", got, tc.maxWait)
			}
			if got := lat.wait.quantile(0.999); got > tc.maxWait+1e-9 {
				t.Errorf("P99.9 wait %.3f s above the longest %v", got, tc.maxWait)
			}
		})
	}
}

// One long tick of an M/M/c queue below capacity, no backlog: the share
// within the SLO, the mean queue and the P99 wait and latency are Erlang
// C's. Reference values from an independent implementation (the factorial
// form of Erlang C, scipy's brentq for the latency quantile):
//
//	/usr/bin/python3: C = a^c/c!·c/(c−a) / (Σ_{k<c} a^k/k! + a^c/c!·c/(c−a));
//	within = 1 − C·exp(−(c−a)/S·slo); P99 wait = ln(C/0.01)/((c−a)/S);
//	P99 latency: root of (1−C)·Exp(1/S) + C·Hypo((c−a)/S, 1/S) CDF = 0.99.
//
// The histogram's buckets are 12% wide and interpolated, hence 3% on the
// quantiles.
func TestErlangCRegime(t *testing.T) {
	cases := []struct {
		servers                        int
		lambda, serviceS, sloS         float64
		c, within, p99Wait, p99Lat, lq float64
	}{
		// c − a = 1 = 1/S: the hypoexponential's equal-rates case.
		{5, 4, 1, 1, 0.5541125541, 0.7961533832, 4.014783, 6.079663, 2.216450},
		{6, 4, 1, 1, 0.2847608454, 0.9614618103, 1.674532, 4.854013, 0.569522},
		{20, 36, 0.5, 0.1, 0.5507690048, 0.6308084953, 1.002183, 2.520812, 4.956921},
	}
	for _, tc := range cases {
		lat := newLatencies(tc.sloS, 0, tc.serviceS)
		lat.setRegime(tc.lambda, tc.servers)
		q := &fluidQueue{}
		q.arrive(0, 3600, tc.lambda)
		served, _ := q.serve(0, 3600, float64(tc.servers)/tc.serviceS, 0, lat)
		lat.finish()
		n := tc.lambda * 3600
		if math.Abs(served-n) > 1e-6*n || math.Abs(lat.regime.pWait-tc.c) > 1e-9 {
			t.Errorf("c=%d: served %v of %v, Erlang C %.10f want %.10f", tc.servers, served, n, lat.regime.pWait, tc.c)
		}
		if got := lat.within / n; math.Abs(got-tc.within) > 1e-9 {
			t.Errorf("c=%d: within SLO %.10f, want %.10f", tc.servers, got, tc.within)
		}
		if got := lat.regime.meanQueue(); math.Abs(got-tc.lq) > 1e-5 {
			t.Errorf("c=%d: mean queue %.6f, want %.6f", tc.servers, got, tc.lq)
		}
		if got := lat.wait.quantile(0.99); math.Abs(got-tc.p99Wait) > 0.03*tc.p99Wait {
			t.Errorf("c=%d: P99 wait %.4f s, want %.4f ±3%%", tc.servers, got, tc.p99Wait)
		}
		if got := lat.latency.quantile(0.99); math.Abs(got-tc.p99Lat) > 0.03*tc.p99Lat {
			t.Errorf("c=%d: P99 latency %.4f s, want %.4f ±3%%", tc.servers, got, tc.p99Lat)
		}
		if math.Abs(lat.wait.total-n) > 1e-6*n || math.Abs(lat.latency.total-n) > 1e-6*n {
			t.Errorf("c=%d: distributions hold %v and %v requests, want %v", tc.servers, lat.wait.total, lat.latency.total, n)
		}
	}
}

// The Erlang-C regime agrees with a discrete-event simulation of the same
// M/M/c queue (FIFO, exponential arrivals and service, seeded), an
// implementation that shares nothing with it: the share of requests
// waiting more than the SLO within 5% of its value, the P99 wait within 5%.
func TestErlangCMatchesSimulation(t *testing.T) {
	const servers, lambda, serviceS, sloS = 8, 7.0, 1.0, 0.5
	lat := newLatencies(sloS, 0, serviceS)
	lat.setRegime(lambda, servers)
	lat.onArrival(1)
	lat.finish()
	rng := rand.New(rand.NewPCG(1, 2))
	free := make([]float64, servers) // when each server is next free
	var waits []float64
	now := 0.0
	for k := 0; k < 400000; k++ {
		now += rng.ExpFloat64() / lambda
		s := slices.Index(free, slices.Min(free))
		start := math.Max(now, free[s])
		if k > 20000 { // past the start-up
			waits = append(waits, start-now)
		}
		free[s] = start + rng.ExpFloat64()*serviceS
	}
	late := 0
	for _, w := range waits {
		if w > sloS {
			late++
		}
	}
	simLate := float64(late) / float64(len(waits))
	if got := 1 - lat.within; math.Abs(got-simLate) > 0.05*simLate {
		t.Errorf("share waiting more than %v s: Erlang C %.4f, simulation %.4f", sloS, got, simLate)
	}
	slices.Sort(waits)
	simP99 := waits[int(0.99*float64(len(waits)))]
	if got := lat.wait.quantile(0.99); math.Abs(got-simP99) > 0.05*simP99 {
		t.Errorf("P99 wait: Erlang C %.3f s, simulation %.3f s", got, simP99)
	}
}

// Above capacity the backlog is fluid; once it has drained within the tick
// the arrivals after it wait as Erlang C says, not zero.
func TestBacklogThenErlangC(t *testing.T) {
	lat := newLatencies(10, 0, 1)
	lat.setRegime(4, 5)
	q := &fluidQueue{}
	q.arrive(-20, 20, 1) // 20 waiting since −20 s
	q.arrive(0, 60, 4)
	served, _ := q.serve(0, 60, 5, 0, lat)
	lat.finish()
	// The 5 req/s server clears 20 + 4t by t = 20: 100 served from the
	// queue with waits, 160 after it on arrival, 44.4% of them waiting.
	if math.Abs(served-260) > 1e-9 {
		t.Fatalf("served %v, want 260", served)
	}
	if got := lat.wait.zero; math.Abs(got-160*(1-0.5541125541)) > 1e-6 {
		t.Errorf("%v served without waiting, want 160·(1 − C) = %v", got, 160*(1-0.5541125541))
	}
}
