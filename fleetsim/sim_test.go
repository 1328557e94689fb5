package fleetsim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

var simStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// simConfig is a fleet of one-slot instances serving 10 req/s each
// (0.1 s a request), booting in 10 minutes, with a 10 s SLO at 99.5% and
// 2.5 an instance-hour on demand.
func simConfig() planner.Config {
	c := planner.DefaultConfig()
	c.Fleet = planner.Fleet{RPSPerInstance: 10, Slots: 1, BootDelay: 10 * time.Minute, Limits: planner.Limits{MinInstances: 0, MaxInstances: 100}}
	c.Prices = planner.Prices{OnDemandPerHour: 2.5}
	c.SLO.Latency = 10 * time.Second
	c.SLO.Quantile = 0.995
	return c
}

// newSim is a Sim of simConfig at 5-minute ticks with initial ready
// instances and the options' defaults, after edit.
func newSim(t *testing.T, initial int, edit func(*Options)) *Sim {
	t.Helper()
	o := Options{Planner: simConfig(), Start: simStart, Tick: 5 * time.Minute, Initial: initial}
	if edit != nil {
		edit(&o)
	}
	s, err := New(o.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// WithDefaults fills only the zero durations: a one-minute queue timeout,
// metrics one tick old and a drain of S·(1 + 1/2 + … + 1/Slots); negative
// lag and drain, and every value set, are kept.
func TestOptionsWithDefaults(t *testing.T) {
	slots4 := planner.Config{Fleet: planner.Fleet{ServiceTime: 2 * time.Second, Slots: 4}}
	// 2 s × (1 + 1/2 + 1/3 + 1/4) = 2 s × 25/12 = 4.1666… s.
	const drain4 = 4166666666 * time.Nanosecond
	cases := []struct {
		name                 string
		in                   Options
		timeout, lag, drainD time.Duration
	}{
		{name: "zero durations", in: Options{Planner: slots4, Tick: 5 * time.Minute},
			timeout: time.Minute, lag: 5 * time.Minute, drainD: drain4},
		{name: "throughput sets the service time", in: Options{Planner: simConfig(), Tick: time.Minute},
			timeout: time.Minute, lag: time.Minute, drainD: 100 * time.Millisecond},
		{name: "negative lag and drain mean none", in: Options{Planner: slots4, Tick: time.Minute, MetricsLag: -1, Drain: -1},
			timeout: time.Minute, lag: -1, drainD: -1},
		{name: "set values kept", in: Options{Planner: slots4, Tick: time.Minute, QueueTimeout: 30 * time.Second,
			MetricsLag: 2 * time.Minute, Drain: 45 * time.Second},
			timeout: 30 * time.Second, lag: 2 * time.Minute, drainD: 45 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.WithDefaults()
			if got.QueueTimeout != tc.timeout || got.MetricsLag != tc.lag || (got.Drain-tc.drainD).Abs() > 1 {
				t.Errorf("timeout %v, lag %v, drain %v; want %v, %v, %v", got.QueueTimeout, got.MetricsLag, got.Drain,
					tc.timeout, tc.lag, tc.drainD)
			}
			if got.Tick != tc.in.Tick || got.Initial != tc.in.Initial || got.BootSpread != tc.in.BootSpread {
				t.Errorf("WithDefaults changed a field it has no default for: %+v", got)
			}
		})
	}
}

// New refuses a tick that is not positive and a fleet without a service
// time (neither ServiceTime nor RPSPerInstance).
func TestNewRejectsBadOptions(t *testing.T) {
	noService := simConfig()
	noService.Fleet.RPSPerInstance = 0
	cases := []struct {
		name string
		opts Options
	}{
		{"zero tick", Options{Planner: simConfig()}},
		{"negative tick", Options{Planner: simConfig(), Tick: -time.Minute}},
		{"no service time", Options{Planner: noService, Tick: time.Minute}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if s, err := New(tc.opts); err == nil {
				t.Errorf("New(%+v) = %v, nil; want an error", tc.opts, s)
			}
		})
	}
}

// Instances asked for by Apply are billed from the request on and serve
// from the planner's boot delay later; a tick under capacity serves every
// arrival within the SLO, and its cost is the billed instance-seconds at
// the on-demand price.
func TestApplyThenServeBootsAfterTheBootDelay(t *testing.T) {
	s := newSim(t, 2, nil)
	st, changed, err := s.Apply(context.Background(), planner.Step{At: simStart, Desired: 4, Reason: "test"})
	if err != nil || !changed || st.Desired != 4 || st.Reason != "test" {
		t.Fatalf("Apply = %+v, %v, %v; want desired 4 applied as asked", st, changed, err)
	}
	if _, changed, err := s.Apply(context.Background(), planner.Step{Desired: 4}); changed || err != nil {
		t.Errorf("Apply of the current desired count: changed %v, %v; want no change", changed, err)
	}
	if c := s.Counts(); c.Booting != 2 || c.Ready != 2 || c.Desired != 4 {
		t.Errorf("counts after Apply %+v, want 2 booting, 2 ready, 4 desired", c)
	}
	// The boot delay is 10 minutes: two 5-minute ticks on the initial 2,
	// then 4 ready.
	wantReady := []int{2, 2, 4, 4}
	prices := simConfig().Prices
	for i, ready := range wantReady {
		tk := s.Serve(15, true)
		if at := simStart.Add(time.Duration(i) * 5 * time.Minute); !tk.At.Equal(at) || !s.Now().Equal(at.Add(5*time.Minute)) {
			t.Errorf("tick %d at %v, clock %v; want %v and a tick later", i, tk.At, s.Now(), at)
		}
		if tk.Ready != ready || tk.Desired != 4 {
			t.Errorf("tick %d: ready %d, desired %d; want %d, 4", i, tk.Ready, tk.Desired, ready)
		}
		// 15 req/s for 300 s on at least 20 req/s of capacity: all 4,500
		// served at once, none late (a 10 s wait is ~e^-50 likely).
		if tk.Arrived != 4500 || !near(tk.Served, 4500, 1e-6) || !near(tk.Dropped, 0, 1e-6) || !near(tk.Within, 4500, 1e-6) ||
			!near(tk.Late(), 0, 1e-6) || tk.Short || tk.Gap {
			t.Errorf("tick %d: %+v; want 4500 arrived, served and within, none dropped or late", i, tk)
		}
		// 4 instances (2 ready, 2 booting) billed for 300 s at 2.5/h.
		if tk.OnDemandS != 1200 || tk.SpotS != 0 {
			t.Errorf("tick %d billed %v s on demand, %v s spot; want 1200, 0", i, tk.OnDemandS, tk.SpotS)
		}
		if got, want := tk.Cost(prices, 5*time.Minute), 4*2.5*5.0/60; !near(got, want, 1e-9) {
			t.Errorf("tick %d cost %v, want %v", i, got, want)
		}
	}
}

// A step larger than max_step is cut to it, and Apply says so in the
// step's reason.
func TestApplyReportsTheMaxStepCut(t *testing.T) {
	s := newSim(t, 2, func(o *Options) { o.Planner.Fleet.MaxStep = 1 })
	st, changed, err := s.Apply(context.Background(), planner.Step{Desired: 6, Reason: "forecast"})
	if err != nil || !changed {
		t.Fatalf("Apply: changed %v, %v", changed, err)
	}
	if st.Desired != 3 || st.Reason != "forecast (limited to 3 by max_step)" || s.Counts().Desired != 3 {
		t.Errorf("applied %+v, pool desired %d; want 3 with the cut in the reason", st, s.Counts().Desired)
	}
}

// With no ready instance nothing is served: the requests that have waited
// past the queue timeout by the end of the tick are dropped and count as
// late, and the tick is short.
func TestServeWithoutCapacityDropsPastTheTimeout(t *testing.T) {
	s := newSim(t, 0, nil)
	tk := s.Serve(1, true)
	// 300 arrive over 5 minutes at 1 req/s; those of the first 4 minutes
	// have waited over the 1-minute timeout at the tick's end.
	if tk.Arrived != 300 || tk.Served != 0 || !near(tk.Dropped, 240, 1e-9) || tk.Within != 0 || !near(tk.Late(), 240, 1e-9) || !tk.Short {
		t.Errorf("tick %+v, late %v; want 300 arrived, 240 dropped and late, short", tk, tk.Late())
	}
	if tk.OnDemandS != 0 || tk.Cost(simConfig().Prices, 5*time.Minute) != 0 {
		t.Errorf("an empty fleet billed %v s", tk.OnDemandS)
	}
}

// Late is what was served past the SLO plus what was dropped.
func TestTickLate(t *testing.T) {
	tk := Tick{Served: 100, Dropped: 7, Within: 90}
	if got := tk.Late(); got != 17 {
		t.Errorf("late %v, want 100 + 7 - 90 = 17", got)
	}
}

// Cost bills the reserved baseline all the tick whether used or not, the
// on-demand instance-seconds above it and spot ones at the spot price.
func TestTickCost(t *testing.T) {
	prices := planner.Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.6, ReservedInstances: 1, SpotPerHour: 1}
	cases := []struct {
		name string
		tick Tick
		p    planner.Prices
		want float64
	}{
		// 3 instances for 5 minutes: 1 reserved, 2 on demand.
		{"above the reserved", Tick{OnDemandS: 900}, prices, 300.0/3600*1.6 + 600.0/3600*2.5},
		// Reserved 5 but only 2 running: the 5 are paid all the same.
		{"below the reserved", Tick{OnDemandS: 600}, planner.Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.6, ReservedInstances: 5},
			1500.0 / 3600 * 1.6},
		{"spot", Tick{OnDemandS: 300, SpotS: 600}, prices, 300.0/3600*1.6 + 600.0/3600*1},
		{"nothing billed", Tick{}, planner.Prices{OnDemandPerHour: 2.5}, 0},
		{"stopped instances of the warm tier", Tick{OnDemandS: 300, StoppedS: 1200}, planner.Prices{OnDemandPerHour: 2.5, StoppedPerHour: 0.075},
			300.0/3600*2.5 + 1200.0/3600*0.075},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tick.Cost(tc.p, 5*time.Minute); !near(got, tc.want, 1e-12) {
				t.Errorf("cost %v, want %v", got, tc.want)
			}
		})
	}
}

// A Sim with a reserved baseline and a spot share bills its instances by
// kind, and Cost of each tick prices them as the by-hand reference.
func TestServeBillsReservedOnDemandAndSpot(t *testing.T) {
	cfg := simConfig()
	cfg.Prices = planner.Prices{OnDemandPerHour: 2.5, ReservedPerHour: 1.6, ReservedInstances: 1, SpotPerHour: 0.9}
	s := newSim(t, 1, func(o *Options) { o.Planner = cfg; o.SpotShare = 1 })
	if _, _, err := s.Apply(context.Background(), planner.Step{Desired: 3}); err != nil {
		t.Fatal(err)
	}
	tk := s.Serve(5, true)
	// 1 reserved on demand, the 2 above it spot, 300 s each.
	if tk.OnDemandS != 300 || tk.SpotS != 600 {
		t.Fatalf("billed %v s on demand, %v s spot; want 300, 600", tk.OnDemandS, tk.SpotS)
	}
	if got, want := tk.Cost(cfg.Prices, 5*time.Minute), 1*1.6/12+2*0.9/12; !near(got, want, 1e-9) {
		t.Errorf("cost %v, want %v", got, want)
	}
}

// With a warm tier Apply keeps the warm pool the step asks for: its
// stopped instances are billed apart, and a rise starts them in the warm
// start.
func TestApplyKeepsTheWarmTier(t *testing.T) {
	cfg := simConfig()
	cfg.Fleet.WarmStart = cfg.Fleet.BootDelay / 5
	s := newSim(t, 1, func(o *Options) { o.Planner = cfg })
	ctx := context.Background()
	if _, _, err := s.Apply(ctx, planner.Step{Desired: 1, Warm: 2}); err != nil {
		t.Fatal(err)
	}
	var stoppedS float64
	for s.Now().Before(s.opts.Start.Add(cfg.Fleet.BootDelay + time.Minute)) {
		stoppedS += s.Serve(1, true).StoppedS
	}
	if c := s.Counts(); c.Stopped != 2 || c.Warm != 2 || stoppedS <= 0 {
		t.Fatalf("a boot after asking for 2 warm: %+v, %v stopped seconds; want 2 stopped and billed", c, stoppedS)
	}
	if _, _, err := s.Apply(ctx, planner.Step{Desired: 3, Warm: 0}); err != nil {
		t.Fatal(err)
	}
	for end := s.Now().Add(cfg.Fleet.WarmStart); s.Now().Before(end); {
		s.Serve(1, true)
	}
	if c := s.Counts(); c.Ready != 3 || c.Stopped != 0 || s.WarmStarts() != 2 {
		t.Errorf("a warm start after rising to 3: %+v, %d warm starts; want 3 ready from 2 warm starts", c, s.WarmStarts())
	}
}

// Latest shows a tick's figures only once the metrics lag has passed
// since the tick ended: nothing before that, then the newest visible
// tick's; a tick with no data reads as no observation.
func TestLatestRespectsTheMetricsLag(t *testing.T) {
	tick := 5 * time.Minute
	cases := []struct {
		name string
		lag  time.Duration // Options.MetricsLag (0: the default, a tick)
		// seen[i] is the demand Latest shows after i+1 ticks of demand
		// 1, 2, 3, 4 req/s (0: no observation).
		seen []float64
	}{
		{"default lag of a tick", 0, []float64{0, 1, 2, 3}},
		{"no lag", -1, []float64{1, 2, 3, 4}},
		{"two ticks", 2 * tick, []float64{0, 0, 1, 2}},
		{"between ticks", tick + time.Minute, []float64{0, 0, 1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 2, func(o *Options) { o.MetricsLag = tc.lag })
			if _, ok := s.Latest(); ok {
				t.Fatal("an observation before any tick")
			}
			for i, want := range tc.seen {
				s.Serve(float64(i+1), true)
				obs, ok := s.Latest()
				if want == 0 {
					if ok {
						t.Errorf("after tick %d: observation %+v before the lag has passed", i, obs)
					}
					continue
				}
				// The tick that measured demand want ended at start + want ticks.
				end := simStart.Add(time.Duration(want) * tick)
				if !ok || obs.DemandRPS != want || !obs.At.Equal(end) || obs.Span != tick {
					t.Errorf("after tick %d: %+v, %v; want demand %v at %v over a tick", i, obs, ok, want, end)
				}
			}
		})
	}
}

// A tick with no data (NaN) serves nothing, is neither short nor
// observed: Latest reports no observation for it once it is visible.
func TestGapTickIsNotObserved(t *testing.T) {
	s := newSim(t, 2, func(o *Options) { o.MetricsLag = -1 })
	s.Serve(5, true)
	if _, ok := s.Latest(); !ok {
		t.Fatal("no observation after a tick with data")
	}
	tk := s.Serve(math.NaN(), true)
	if !tk.Gap || tk.Arrived != 0 || tk.Served != 0 || tk.Short {
		t.Errorf("gap tick %+v; want a gap with no arrivals, not short", tk)
	}
	if obs, ok := s.Latest(); ok {
		t.Errorf("observation %+v for a gap", obs)
	}
}

// Finish returns the 99th percentiles of the scored ticks' waits and
// latencies: under capacity, no wait to speak of and the service time's
// tail (an exponential of mean 0.1 s: 0.1·ln 100 = 0.46 s); with no
// capacity, the dropped requests at the queue timeout.
func TestFinishReturnsP99s(t *testing.T) {
	t.Run("under capacity", func(t *testing.T) {
		s := newSim(t, 4, nil)
		for range 12 {
			s.Serve(10, true)
		}
		wait, latency := s.Finish()
		// Histogram buckets are 12% wide.
		if wait > 0.05 || latency < 0.4 || latency > 0.53 {
			t.Errorf("p99 wait %.3f s, latency %.3f s; want ~0 and 0.46", wait, latency)
		}
	})
	t.Run("no capacity", func(t *testing.T) {
		s := newSim(t, 0, nil)
		for range 3 {
			s.Serve(1, true)
		}
		wait, latency := s.Finish()
		// Most requests are dropped at the 60 s timeout (bucket up to 63.1).
		if wait < 59 || wait > 63.2 || latency < wait {
			t.Errorf("p99 wait %.2f s, latency %.2f s; want the 60 s timeout", wait, latency)
		}
	})
	t.Run("unscored ticks left out", func(t *testing.T) {
		s := newSim(t, 0, nil)
		for range 3 {
			s.Serve(1, false)
		}
		if _, _, err := s.Apply(context.Background(), planner.Step{Desired: 4}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			s.Serve(0, false)
		}
		for range 12 {
			s.Serve(10, true)
		}
		if wait, _ := s.Finish(); wait > 0.05 {
			t.Errorf("p99 wait %.2f s counts the unscored ticks without capacity", wait)
		}
	})
}

// The metrics feed keeps only what a later Latest could still return: a
// fixed fleet that never reads it serves any number of ticks with the
// feed bounded by a small multiple of the lag, and the next Latest is still the newest visible tick.
func TestMetricsFeedIsBoundedWhenNeverRead(t *testing.T) {
	tick := time.Minute
	cases := []struct {
		name string
		lag  time.Duration
	}{
		{"no lag", -1},
		{"a tick", 0},
		{"a hundred ticks", 100 * tick},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 100000
			if testing.Short() {
				n = 5000
			}
			s := newSim(t, 2, func(o *Options) { o.Tick = tick; o.MetricsLag = tc.lag })
			lagTicks := max(int(s.seen.lag/tick), 0)
			for i := range n {
				s.Serve(float64(i%7), true)
			}
			// Compaction waits until the queue doubles, so it holds at most
			// twice what is still hidden behind the lag.
			if got, limit := len(s.seen.queue), 2*(max(lagTicks, 64)+1); got > limit {
				t.Errorf("feed holds %d observations after %d ticks, want at most %d", got, n, limit)
			}
			if got, limit := cap(s.seen.queue), 4*(max(lagTicks, 64)+1); got > limit {
				t.Errorf("feed's capacity %d after %d ticks, want at most %d", got, n, limit)
			}
			// The newest visible tick is n−1−lagTicks (0-based): demand
			// (n−1−lagTicks) mod 7.
			k := n - 1 - lagTicks
			obs, ok := s.Latest()
			if !ok || obs.DemandRPS != float64(k%7) || !obs.At.Equal(simStart.Add(time.Duration(k+1)*tick)) {
				t.Errorf("Latest %+v, %v; want demand %d of the tick ending %v", obs, ok, k%7, simStart.Add(time.Duration(k+1)*tick))
			}
		})
	}
}
