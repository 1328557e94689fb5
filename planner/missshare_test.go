package planner

import (
	"math"
	"testing"
	"time"
)

// missConfig is planConfig's fleet (10 req/s an instance, no service time:
// MissShare is the share beyond throughput) with the default 10 s SLO
// latency, so that on 10 instances the throughput C is 100 req/s and the
// backlog the SLO tolerates, limit = latency·C, is 1,000 requests; the
// backlog cap is 6 × 1,000 = 6,000 requests.
func missConfig() Config {
	c := planConfig()
	c.SLO.Latency = 10 * time.Second
	return c
}

// MissShareOver on one interval: with the fluid backlog b(t) = b0 +
// (rate − C)·t, the share late is the share of the span b stays above
// limit (plus MissShare's share of the rest), and the backlog returned is
// b(span), at least 0 and at most the cap. Every reference number is
// worked out by hand in the case's comment (C = 100 req/s, limit = 1,000,
// cap = 6,000, span 60 s unless said).
func TestMissShareOverOneInterval(t *testing.T) {
	cases := []struct {
		name      string
		rate      float64
		instances int
		span      time.Duration
		backlog   Backlog
		wantMiss  float64
		wantAfter Backlog
	}{
		// slope −50: the backlog stays at 0; MissShare(50, 10) = 0.
		{"capacity above the rate without a backlog misses nothing", 50, 10, time.Minute, 0, 0, 0},
		// slope +50: b reaches limit at 1000/50 = 20 s, so 40 of 60 s
		// are late; b(60) = 3,000. The steady term is dropped (no
		// steady state above capacity).
		{"an overload builds a backlog and misses once it passes the limit", 150, 10, time.Minute, 0, 2.0 / 3, 3000},
		// b0 = 3,000 > limit and growing: late all span; b(60) = 6,000
		// is exactly the cap.
		{"an overload on a backlog above the limit misses all", 150, 10, time.Minute, 3000, 1, 6000},
		// slope −50 from 3,000: b falls to the limit at (1000−3000)/−50
		// = 40 s, late 40 of 60 s; b(60) = 0.
		{"a backlog drains and is late until it falls below the limit", 50, 10, time.Minute, 3000, 2.0 / 3, 0},
		// from 6,000: b reaches the limit at 100 s > 60 s: late all
		// span; b(60) = 6000 − 3000 = 3,000.
		{"a large backlog is late for the whole span while it drains", 50, 10, time.Minute, 6000, 1, 3000},
		// slope 0, b0 = 2,000 > limit: late throughout, b unchanged.
		{"a backlog above the limit at exact capacity stays late", 100, 10, time.Minute, 2000, 1, 2000},
		// slope 0, b0 = 500 ≤ limit: never late, steady term dropped.
		{"a backlog below the limit at exact capacity is on time", 100, 10, time.Minute, 500, 0, 500},
		// slope +900: b reaches the limit at 1000/900 s, late
		// 1 − (10/9)/60 = 0.981481…; b(60) = 54,000 capped at 6,000.
		{"the backlog is capped at six SLO latencies of throughput", 1000, 10, time.Minute, 0, 1 - (10.0/9)/60, 6000},
		// a backlog far past the cap is cut back to it.
		{"a backlog beyond the cap is cut back to it", 150, 10, time.Minute, 1e9, 1, 6000},
		// a negative backlog counts as none: as the first case.
		{"a negative backlog counts as none", 50, 10, time.Minute, -500, 0, 0},
		// span 0 is MissShare, 1 − 100/150 = 1/3, the backlog kept.
		{"no span is the steady share with the backlog kept", 150, 10, 0, 1234, 1.0 / 3, 1234},
		// no instances: all late (MissShare's 1), the backlog kept.
		{"no instances miss everything and keep the backlog", 50, 0, time.Minute, 1234, 1, 1234},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := missConfig()
			miss, after := cfg.MissShareOver(tc.rate, tc.instances, tc.span, tc.backlog)
			if math.Abs(miss-tc.wantMiss) > 1e-12 || math.Abs(float64(after-tc.wantAfter)) > 1e-9 {
				t.Errorf("MissShareOver(%v, %d, %v, %v) = %v, %v; want %v, %v",
					tc.rate, tc.instances, tc.span, tc.backlog, miss, after, tc.wantMiss, tc.wantAfter)
			}
		})
	}
}

// A burst carried from interval to interval: three minutes at 150 req/s
// on 10 instances (C = 100) build the backlog to 3,000 and then the 6,000
// cap, the next minutes at 50 req/s drain it by 3,000 a minute, and the
// minutes the drain takes count as late too, though the rate is then
// below capacity.
func TestMissShareOverBuildsAndDrainsABacklog(t *testing.T) {
	steps := []struct {
		rate      float64
		wantMiss  float64
		wantAfter Backlog
	}{
		{150, 2.0 / 3, 3000}, // passes the 1,000 limit at 20 s
		{150, 1, 6000},       // above the limit throughout; at the cap
		{150, 1, 6000},       // held at the cap
		{50, 1, 3000},        // 6,000 → 3,000, above 1,000 all minute
		{50, 2.0 / 3, 0},     // 3,000 → 0, at the limit after 40 s
		{50, 0, 0},           // drained: on time again
	}
	c := missConfig()
	var b Backlog
	for i, s := range steps {
		var miss float64
		miss, b = c.MissShareOver(s.rate, 10, time.Minute, b)
		if math.Abs(miss-s.wantMiss) > 1e-12 || math.Abs(float64(b-s.wantAfter)) > 1e-9 {
			t.Fatalf("minute %d at %v req/s: miss %v, backlog %v; want %v, %v", i+1, s.rate, miss, b, s.wantMiss, s.wantAfter)
		}
	}
}

// Without a backlog and below capacity MissShareOver is MissShare, for
// the throughput model and for Erlang C alike (the fluid backlog stays at
// 0, so only the steady share is left), and it leaves no backlog.
func TestMissShareOverIsMissShareInTheSteadyState(t *testing.T) {
	erlang := missConfig()
	erlang.Fleet.RPSPerInstance = 0
	erlang.Fleet.ServiceTime = time.Second // 1 req/s a slot
	erlang.Fleet.Slots = 4                 // 4 req/s an instance
	erlang.SLO.Latency = 500 * time.Millisecond
	cases := []struct {
		name      string
		c         Config
		rate      float64
		instances int
	}{
		{"throughput well below capacity", missConfig(), 30, 10},
		{"throughput just below capacity", missConfig(), 99.9, 10},
		{"erlang-c lightly loaded", erlang, 10, 4},
		{"erlang-c heavily loaded", erlang, 15.5, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.c.MissShare(tc.rate, tc.instances)
			miss, after := tc.c.MissShareOver(tc.rate, tc.instances, 5*time.Minute, 0)
			if miss != want || after != 0 {
				t.Errorf("MissShareOver = %v, %v; want MissShare's %v and no backlog", miss, after, want)
			}
		})
	}
	// The Erlang-C case must carry a share of its own, or the comparison
	// above says nothing: C(16, 15.5)·e^{−0.5·0.5} is well above 0.
	if m := erlang.MissShare(15.5, 4); !(m > 0.1 && m < 1) {
		t.Errorf("erlang-c MissShare(15.5, 4) = %v, want a share in (0.1, 1)", m)
	}
}

// More instances never make more requests late, whatever the backlog
// carried in, nor leave a backlog that takes longer to serve (backlog/C,
// the wait of the next request). The backlog itself may grow with the
// instances: the cap is in SLO latencies of throughput, so one instance
// (C = 10) keeps at most 600 requests where two keep 1,200.
func TestMissShareOverFallsWithInstances(t *testing.T) {
	c := missConfig()
	for _, rate := range []float64{20, 95, 150, 400} {
		for _, b := range []Backlog{0, 800, 3000, 20000} {
			prevMiss, prevWait := math.Inf(1), math.Inf(1)
			for n := 1; n <= 50; n++ { // 0 instances keep the backlog as it was (see the one-interval test)
				miss, after := c.MissShareOver(rate, n, time.Minute, b)
				wait := float64(after) / (float64(n) * 10)
				if miss > prevMiss+1e-12 || wait > prevWait+1e-9 {
					t.Fatalf("rate %v, backlog %v: %d instances give miss %v, backlog wait %vs; %d gave %v, %vs",
						rate, b, n, miss, wait, n-1, prevMiss, prevWait)
				}
				if miss < 0 || miss > 1 {
					t.Fatalf("rate %v, backlog %v, %d instances: miss %v outside [0, 1]", rate, b, n, miss)
				}
				prevMiss, prevWait = miss, wait
			}
			// 50 instances (500 req/s, limit 5,000) serve every rate
			// here with the backlog under the limit after a minute
			// unless it started above it.
			if b <= 3000 && prevMiss != 0 {
				t.Errorf("rate %v, backlog %v: 50 instances still miss %v", rate, b, prevMiss)
			}
		}
	}
}

// missShareAbove answers exactly what MissShare(rate, n) > share does, on
// every fleet, load and target, including loads whose wait tail sits a
// hair either side of the target, where the shortcut must not decide.
func TestMissShareAboveAgreesWithMissShare(t *testing.T) {
	cases := []struct {
		name    string
		latency time.Duration
		service time.Duration
		slots   int
	}{
		{"one slot, a 10 s SLO", 10 * time.Second, 350 * time.Millisecond, 1},
		{"eight slots, a 2 s SLO", 2 * time.Second, 2 * time.Second, 8},
		{"no wait allowed", 0, time.Second, 1},
		// A latency 10,000 service times long: the tail reaches the target
		// only in a heavy load, where Erlang C is within 0.1% of 1.
		{"a long SLO on short requests", 10 * time.Second, time.Millisecond, 1},
		{"service time unset: the utilisation share", 10 * time.Second, 0, 1},
	}
	shares := []float64{0, 1e-12, 0.001, 0.005, 0.05, 0.5, 1}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := missConfig()
			c.SLO.Latency, c.Fleet.ServiceTime, c.Fleet.Slots = tc.latency, tc.service, tc.slots
			checked := 0
			for n := -1; n <= 40; n++ {
				for _, rate := range []float64{math.NaN(), -1, 0, 0.01, 0.5, 1, 2.7, 3, 10, 28.5, 57, 99.9, 200, math.Inf(1)} {
					for _, share := range shares {
						want := c.MissShare(rate, n) > share
						if got := c.missShareAbove(rate, n, share); got != want {
							t.Fatalf("missShareAbove(%v, %d, %v) = %v; MissShare is %v", rate, n, share, got, c.MissShare(rate, n))
						}
						checked++
					}
				}
			}
			// Loads whose tail is the target itself, give or take a hair.
			if s := tc.service.Seconds(); s > 0 && tc.latency > 0 {
				for _, share := range shares[1 : len(shares)-1] {
					for n := 1; n <= 40; n++ {
						servers := float64(n * tc.slots)
						for _, frac := range []float64{0.999, 1 - 1e-9, 1, 1 + 1e-9, 1.0002, 1.0005, 1.0008, 1.002} {
							a := servers + math.Log(share*frac)*s/tc.latency.Seconds() // tail(a) = share·frac
							rate := a / s
							if got, want := c.missShareAbove(rate, n, share), c.MissShare(rate, n) > share; got != want {
								t.Fatalf("at the edge: missShareAbove(%v, %d, %v) = %v, want %v", rate, n, share, got, want)
							}
							checked++
						}
					}
				}
			}
			t.Logf("%d cases agree", checked)
		})
	}
}
