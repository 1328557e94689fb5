package planner

import (
	"math"
	"testing"
	"time"
)

func TestInstancesForUtilisation(t *testing.T) {
	cases := []struct {
		name   string
		rps    float64
		target float64
		rate   float64
		want   int
	}{
		{"zero demand needs nothing", 10, 0.8, 0, 0},
		{"NaN demand needs nothing", 10, 0.8, math.NaN(), 0},
		{"exact fit at target", 10, 0.8, 16, 2},
		{"float noise does not add one", 10, 0.8, 16.000000000001, 2},
		{"just over target rounds up", 10, 0.8, 16.1, 3},
		{"full utilisation", 10, 1, 95, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Fleet.RPSPerInstance = tc.rps
			c.TargetUtilisation = tc.target
			if got := c.InstancesFor(tc.rate); got != tc.want {
				t.Errorf("InstancesFor(%v) = %d, want %d", tc.rate, got, tc.want)
			}
		})
	}
}

// Reference values from the textbook formula evaluated independently:
//
//	python3 -c "from math import factorial as f
//	C=lambda c,a: (a**c/f(c)*c/(c-a))/(sum(a**k/f(k) for k in range(c))+a**c/f(c)*c/(c-a))
//	print(C(2,1), C(11,10), C(5,3))"
//	→ 0.3333333333333333 0.6821182046893324 0.23615160349854228
func TestErlangC(t *testing.T) {
	cases := []struct {
		name string
		c    int
		a    float64
		want float64
	}{
		{"two servers one erlang", 2, 1, 1.0 / 3},
		{"eleven servers ten erlangs", 11, 10, 0.6821182046893324},
		{"five servers three erlangs", 5, 3, 0.23615160349854228},
		{"unstable queue always waits", 3, 3, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErlangC(tc.c, tc.a); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("ErlangC(%d, %v) = %.15f, want %.15f", tc.c, tc.a, got, tc.want)
			}
		})
	}
}

// The smallest c with C(c,a)·exp(−(c−a)·T/S) ≤ 1−q, brute-forced with the
// formula above: servers(10,1,0.5,0.99)=15, servers(100,0.2,0.05,0.95)=26,
// servers(2,5,10,0.99)=12.
func TestErlangCServers(t *testing.T) {
	cases := []struct {
		name                     string
		lambda, service, wait, q float64
		want                     int
	}{
		{"ten per second, 1s service, P99 wait 0.5s", 10, 1, 0.5, 0.99, 15},
		{"hundred per second, 200ms service, P95 wait 50ms", 100, 0.2, 0.05, 0.95, 26},
		{"slow generation: 2/s, 5s service, P99 wait 10s", 2, 5, 10, 0.99, 12},
		{"no demand", 0, 1, 1, 0.99, 0},
		// Degenerate inputs must end, not loop: no wait allowed needs
		// C(c,a) ≤ 0.01, which is c=19 at a=10 (the formula above, searched upwards
		// from c=11).
		{"NaN wait bound means none allowed", 10, 1, math.NaN(), 0.99, 19},
		{"negative wait bound means none allowed", 10, 1, -5, 0.99, 19},
		{"infinite load", math.Inf(1), 1, 1, 0.99, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErlangCServers(tc.lambda, tc.service, tc.wait, tc.q); got != tc.want {
				t.Errorf("ErlangCServers = %d, want %d", got, tc.want)
			}
		})
	}
}

// A runaway forecast must not make the Erlang-C search walk up to a
// billion servers: past MaxInstances the answer is "more than max".
func TestInstancesForErlangCBeyondMax(t *testing.T) {
	c := DefaultConfig()
	c.Sizing = SizingErlangC
	c.Fleet.ServiceTime = 5 * time.Second
	c.Fleet.MaxInstances = 50
	for _, rate := range []float64{10, 1e9, 1e300} {
		if got := c.InstancesFor(rate); got != 51 {
			t.Errorf("InstancesFor(%g req/s) = %d, want 51 (beyond max 50)", rate, got)
		}
	}
}

func TestInstancesForErlangCUsesSlots(t *testing.T) {
	c := DefaultConfig()
	c.Sizing = SizingErlangC
	c.Fleet.ServiceTime = 5 * time.Second
	c.Fleet.Slots = 4
	c.SLO = SLO{Latency: 10 * time.Second, Quantile: 0.99}
	c.TargetUtilisation = 1
	// 12 servers (see TestErlangCServers) in slots of 4.
	if got := c.InstancesFor(2); got != 3 {
		t.Errorf("InstancesFor(2 req/s) = %d, want 3 instances of 4 slots", got)
	}
	// At most 50% busy: 2 req/s of 0.8 req/s instances need 5.
	c.TargetUtilisation = 0.5
	if got := c.InstancesFor(2); got != 5 {
		t.Errorf("InstancesFor(2 req/s) at 50%% = %d, want 5: the utilisation cap", got)
	}
}

// MissShare is Erlang C's tail at the SLO: with 12 servers of 5 s for 2
// req/s (a = 10), P(wait > 10 s) = C(12, 10)·exp(−2·10/5), C(12, 10) =
// 0.449 (python3, the factorial form of TestErlangC: 0.4493882...).
func TestMissShare(t *testing.T) {
	c := DefaultConfig()
	c.Fleet.ServiceTime = 5 * time.Second
	c.Fleet.Slots = 4
	c.SLO.Latency = 10 * time.Second
	cases := []struct {
		rate      float64
		instances int
		want      float64
	}{
		{2, 3, ErlangC(12, 10) * math.Exp(-4)},
		{0, 3, 0},
		{2, 0, 1},
		{2.4, 3, 1}, // a = 12 servers' worth: unstable
	}
	for _, tc := range cases {
		if got := c.MissShare(tc.rate, tc.instances); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MissShare(%v, %d) = %v, want %v", tc.rate, tc.instances, got, tc.want)
		}
	}
	if math.Abs(ErlangC(12, 10)-0.4493882) > 1e-6 {
		t.Errorf("ErlangC(12, 10) = %v, want 0.4493882", ErlangC(12, 10))
	}
	// Without a service time: the share beyond the throughput.
	c.Fleet.ServiceTime, c.Fleet.RPSPerInstance = 0, 10
	if got := c.MissShare(40, 3); math.Abs(got-0.25) > 1e-12 {
		t.Errorf("MissShare without a service time = %v, want 0.25", got)
	}
}

// SizeForPeak makes the peak need exactly the instances asked for: with
// utilisation sizing by the formula, with Erlang C by bisection, where a
// long service time makes the SLO, not the utilisation, the binding limit.
func TestSizeForPeak(t *testing.T) {
	cases := []struct {
		name   string
		sizing string
		peak   float64
		slots  int
	}{
		{"utilisation", SizingUtilisation, 1291, 1},
		{"erlang-c, short requests: the utilisation cap binds", SizingErlangC, 21.8, 1},
		{"erlang-c, long requests: the SLO binds", SizingErlangC, 0.121, 1},
		{"erlang-c, four slots", SizingErlangC, 0.121, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Sizing, c.Fleet.Slots = tc.sizing, tc.slots
			sized, err := c.SizeForPeak(tc.peak, 20)
			if err != nil {
				t.Fatal(err)
			}
			if got := sized.InstancesFor(tc.peak); got != 20 {
				t.Errorf("the peak needs %d instances, want 20", got)
			}
			weaker := sized
			weaker.Fleet.RPSPerInstance *= 0.99
			weaker.Fleet.ServiceTime = time.Duration(float64(sized.Fleet.ServiceTime) / 0.99)
			if got := weaker.InstancesFor(tc.peak); got <= 20 {
				t.Errorf("1%% weaker instances still serve the peak on %d: not the weakest", got)
			}
			if s := sized.Fleet.ServiceTime.Seconds() * sized.Fleet.RPSPerInstance; math.Abs(s-float64(max(tc.slots, 1))) > 1e-6 {
				t.Errorf("service time × req/s = %v, want the %d slots", s, tc.slots)
			}
			if tc.sizing == SizingUtilisation && math.Abs(sized.Fleet.RPSPerInstance-tc.peak/16) > 1e-9 {
				t.Errorf("utilisation: %v req/s, want peak/(20·0.8)", sized.Fleet.RPSPerInstance)
			}
		})
	}
	if _, err := DefaultConfig().SizeForPeak(0, 20); err == nil {
		t.Error("a zero peak was sized")
	}
}
