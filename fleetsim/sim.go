package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
)

// Options set up a Sim. Planner holds the fleet (throughput or service
// time, slots, boot delay, and the limits the safety layer enforces),
// prices and SLO.
type Options struct {
	Planner planner.Config
	// Start is when the first tick begins; Tick its length (required).
	Start time.Time
	Tick  time.Duration
	// Initial is how many instances are ready at Start.
	Initial int
	// QueueTimeout drops requests that have waited this long.
	QueueTimeout time.Duration
	// MetricsLag is the age of the newest observation a policy sees: the
	// figures of one tick are read this long after it ends (≤ 0: at
	// once).
	MetricsLag time.Duration
	// BootSpread is the standard deviation of each boot around the boot
	// delay (log-normal); Drain how long a removed instance stays billed
	// (≤ 0: none). WithDefaults fills the zero ones.
	BootSpread, Drain time.Duration
	// SpotShare of the instances above the reserved baseline run on spot,
	// each interrupted at SpotInterruptionsPerHour; Seed and Stream make
	// the interruptions and boot times reproducible.
	SpotShare, SpotInterruptionsPerHour float64
	// SpotStockOutsPerWeek is how often the zone runs out of spot: every
	// spot instance is interrupted at once and replaced on demand, and
	// for SpotStockOutFor new instances launch on demand (simulated).
	SpotStockOutsPerWeek float64
	SpotStockOutFor      time.Duration
	// SpotZones is how many zones the fleet takes spot from, each running
	// out on its own (simulated.Options.SpotZones; 0 or 1: one).
	SpotZones    int
	Seed, Stream uint64
}

// WithDefaults returns o with its zero durations set: a queue timeout of
// a minute, metrics one tick old (negative: none) and drains of the
// expected time for the last of Slots requests in service to finish,
// S·(1 + 1/2 + … + 1/Slots) for exponential service times of mean S
// (negative: none). The backtest's flags and the tuner's twins share
// these.
func (o Options) WithDefaults() Options {
	if o.QueueTimeout == 0 {
		o.QueueTimeout = time.Minute
	}
	if o.MetricsLag == 0 {
		o.MetricsLag = o.Tick
	}
	if o.Drain == 0 {
		h := 0.0
		for k := 1; k <= max(o.Planner.Fleet.Slots, 1); k++ {
			h += 1 / float64(k)
		}
		o.Drain = time.Duration(h * float64(o.Planner.Fleet.MeanServiceTime()))
	}
	return o
}

// Tick is what one simulated tick did.
type Tick struct {
	// At is the tick's start; Gap is true for a tick with no data (no
	// requests arrive).
	At  time.Time
	Gap bool
	// Ready and Desired are the pool's counts during the tick.
	Ready, Desired int
	// Arrived requests arrived; Within of those served in the tick waited
	// at most the SLO's latency; Served and Dropped were served and gave
	// up in the tick (of earlier arrivals too).
	Arrived, Within, Served, Dropped float64
	// OnDemandS and SpotS are the running instance-seconds billed in the
	// tick, StoppedS the warm tier's stopped ones.
	OnDemandS, SpotS, StoppedS float64
	// Short is true when the tick left a backlog, ran over capacity or
	// served more requests late than the SLO allows.
	Short bool
}

// Late is how many requests the tick served past the SLO or dropped.
func (t Tick) Late() float64 { return t.Served + t.Dropped - t.Within }

// Sim is one pool of simulated GPU instances serving a demand, tick by
// tick: a policy reads Latest, decides, Apply passes its decision through
// actuator.Safe to the fleet, and Serve queues the tick's arrivals for
// the ready instances' servers. Not safe for concurrent use.
type Sim struct {
	opts     Options
	clock    time.Time
	fleet    *simulated.Fleet
	safe     *actuator.Safe
	queue    *fluidQueue
	lat      *latencies
	seen     *metricsFeed
	prev     simulated.Usage
	tickS    float64
	serviceS float64
	slots    int
	rps      float64
	ticks    int
	// counts caches the pool's counts at the clock (countsOK): the clock
	// stands still until Serve, which reads them at the new tick's start,
	// and only Apply changes the fleet.
	counts   simulated.Counts
	countsOK bool
}

// pool is the simulated fleet's one pool.
const pool = "sim"

// New returns a Sim at opts.Start with opts.Initial instances ready.
func New(opts Options) (*Sim, error) {
	c := opts.Planner
	serviceS := c.Fleet.MeanServiceTime().Seconds()
	if opts.Tick <= 0 || !(serviceS > 0) {
		return nil, fmt.Errorf("fleetsim: tick %v and service time %vs must be positive", opts.Tick, serviceS)
	}
	s := &Sim{opts: opts, clock: opts.Start, tickS: opts.Tick.Seconds(), serviceS: serviceS, slots: max(c.Fleet.Slots, 1)}
	s.rps = float64(s.slots) / serviceS
	now := func() time.Time { return s.clock }
	s.fleet = simulated.New(simulated.Options{Now: now, BootDelay: c.Fleet.BootDelay, BootSpread: opts.BootSpread,
		Drain: max(opts.Drain, 0), OnDemandBase: c.Prices.ReservedInstances, SpotShare: opts.SpotShare,
		InterruptionsPerHour: opts.SpotInterruptionsPerHour, StockOutsPerWeek: opts.SpotStockOutsPerWeek, StockOutFor: opts.SpotStockOutFor,
		SpotZones: opts.SpotZones, WarmStart: c.Fleet.WarmStart, Rand: rand.New(rand.NewPCG(opts.Seed, opts.Stream))})
	s.fleet.AddPool(pool, opts.Initial, c.Fleet.MinInstances, c.Fleet.MaxInstances)
	s.safe = newSafe(s.fleet, opts, now)
	s.queue = &fluidQueue{}
	s.lat = newLatencies(c.SLO.Latency.Seconds(), opts.QueueTimeout.Seconds(), serviceS)
	s.seen = newMetricsFeed(opts.MetricsLag)
	return s, nil
}

// Now is the start of the next tick.
func (s *Sim) Now() time.Time { return s.clock }

// Counts returns the pool's instances by state now.
func (s *Sim) Counts() simulated.Counts {
	if !s.countsOK {
		s.counts, s.countsOK = s.fleet.Counts(pool), true
	}
	return s.counts
}

// Latest returns the newest observation a policy can see now (MetricsLag
// old); ok is false before the first and for a tick with no data.
func (s *Sim) Latest() (planner.Observation, bool) { return s.seen.latest(s.clock) }

// Apply asks the pool for st.Desired through the safety layer (bounds,
// max_step, min_interval) and, with a warm tier, for st.Warm stopped
// instances. It returns the step as applied (its reason says when
// max_step cut it) and whether the pool's desired count changed. A
// change refused by min_interval is not an error.
func (s *Sim) Apply(ctx context.Context, st planner.Step) (planner.Step, bool, error) {
	counts := s.Counts()
	if s.opts.Planner.Fleet.WarmTier() && st.Warm != counts.Warm {
		s.countsOK = false
		if err := s.fleet.SetWarm(ctx, pool, st.Warm, st.Reason); err != nil {
			return st, false, err
		}
	}
	current := counts.Desired
	if st.Desired == current {
		return st, false, nil
	}
	s.countsOK = false
	if err := s.safe.SetDesired(ctx, pool, st.Desired, st.Reason); err != nil && !errors.Is(err, actuator.ErrRateLimited) {
		return st, false, err
	}
	got := s.Counts().Desired
	if got == current {
		return st, false, nil
	}
	if got != st.Desired {
		st.Reason = fmt.Sprintf("%s (limited to %d by max_step)", st.Reason, got)
		st.Desired = got
	}
	return st, true, nil
}

// Serve runs one tick of demand at raw requests/s (NaN: no data) on the
// instances ready now and advances the clock by a tick. scored false
// keeps the tick out of the wait and latency distributions (its counts
// are still returned).
func (s *Sim) Serve(raw float64, scored bool) Tick {
	at := s.clock
	counts := s.Counts()
	gap := math.IsNaN(raw)
	lambda := Rate(raw)
	servers := counts.Ready * s.slots
	capacity := float64(counts.Ready) * s.rps
	lat := s.lat
	lat.off = !scored
	lat.setRegime(lambda, servers)
	before, droppedBefore := lat.within, lat.erlangDropped
	t0 := float64(s.ticks) * s.tickS
	timeoutS := s.opts.QueueTimeout.Seconds()
	s.queue.arrive(t0, s.tickS, lambda)
	served, dropped := s.queue.serve(t0, t0+s.tickS, capacity, timeoutS, lat)
	if timeoutS > 0 {
		dropped += s.queue.dropOlder(t0 + s.tickS - timeoutS)
	}
	lat.addDropped(timeoutS, dropped)
	dropped += lat.erlangDropped - droppedBefore
	waiting := s.queue.len()

	s.ticks++
	s.clock = at.Add(s.opts.Tick)
	// The next tick starts where this one ends: its counts are these.
	var use simulated.Usage
	s.counts, use = s.fleet.Snapshot(pool)
	s.countsOK = true
	onDemandS, spotS := (use.OnDemand - s.prev.OnDemand).Seconds(), (use.Spot - s.prev.Spot).Seconds()
	stoppedS := (use.Stopped - s.prev.Stopped).Seconds()
	s.prev = use

	arrived := lambda * s.tickS
	within := lat.within - before
	quantile := s.opts.Planner.SLO.Quantile
	short := !gap && (waiting > eps || lambda > capacity*(1+1e-9) ||
		(arrived > 0 && 1-within/arrived > 1-quantile+1e-9))
	obs := planner.Observation{At: s.clock, Span: s.opts.Tick, DemandRPS: lambda,
		Queue: waiting + lat.regime.meanQueue(), Utilisation: utilisation(served, capacity*s.tickS, lambda, waiting)}
	s.seen.push(obs, !gap)
	return Tick{At: at, Gap: gap, Ready: counts.Ready, Desired: counts.Desired, Arrived: arrived, Within: within,
		Served: served, Dropped: dropped, OnDemandS: onDemandS, SpotS: spotS, StoppedS: stoppedS, Short: short}
}

// Finish closes the wait and latency distributions and returns their
// 99th percentiles in seconds (dropped requests at the queue timeout).
// Call it once, after the last tick.
func (s *Sim) Finish() (p99WaitS, p99LatencyS float64) {
	s.lat.finish()
	return s.lat.wait.quantile(0.99), s.lat.latency.quantile(0.99)
}

// WarmStarts is how many launches so far started a stopped instance of
// the warm tier.
func (s *Sim) WarmStarts() int { return s.fleet.Usage(pool).WarmStarts }

// Interruptions is how many spot instances were interrupted so far, and
// in how many zone-wide stock-outs.
func (s *Sim) Interruptions() (interrupted, stockOuts int) {
	u := s.fleet.Usage(pool)
	return u.Interruptions, u.StockOuts
}

// newSafe wraps the fleet in the safety layer serve uses, with the pool's
// limits and the simulated clock; it logs nothing.
func newSafe(fleet *simulated.Fleet, opts Options, now func() time.Time) *actuator.Safe {
	cfg := actuator.PoolConfig{Name: pool, Backend: simulated.Name, Limits: opts.Planner.Fleet.Limits}
	return actuator.NewSafe(fleet, actuator.SafetyOptions{
		Pools:    []actuator.PoolConfig{cfg},
		Now:      now,
		Logger:   slog.New(slog.DiscardHandler),
		NewToken: func() string { return "sim" },
		Sleep:    func(context.Context, time.Duration) error { return nil },
		Retry:    actuator.RetryPolicy{AttemptTimeout: -1},
	})
}

// utilisation is the busy share of the ready servers over a tick (1 while
// requests wait or nothing can serve arrivals).
func utilisation(served, capacityRequests, lambda, waiting float64) float64 {
	switch {
	case waiting > eps:
		return 1
	case capacityRequests > 0:
		return math.Min(1, served/capacityRequests)
	case lambda > 0:
		return 1
	}
	return 0
}

// metricsFeed delays observations by the metrics lag: what the tick that
// ended at At measured is seen from At + lag on. The pending observations
// are queue[head:]; the consumed front is reclaimed once it is at least
// half the slice, so the memory stays bounded by twice the live part and
// a push costs O(1) amortised.
type metricsFeed struct {
	lag     time.Duration
	queue   []fedObservation
	head    int
	current fedObservation
	// compactAbove is the pending length that starts a compaction.
	compactAbove int
}

type fedObservation struct {
	obs planner.Observation
	ok  bool
}

func newMetricsFeed(lag time.Duration) *metricsFeed {
	return &metricsFeed{lag: max(lag, 0), compactAbove: 64}
}

func (m *metricsFeed) push(obs planner.Observation, ok bool) {
	if m.head > 0 && 2*m.head >= len(m.queue) {
		n := copy(m.queue, m.queue[m.head:])
		clear(m.queue[n:])
		m.queue, m.head = m.queue[:n], 0
	}
	m.queue = append(m.queue, fedObservation{obs: obs, ok: ok})
	if len(m.queue)-m.head > m.compactAbove {
		// Nobody has read the feed for a while (a fixed fleet): what is
		// visible at the newest observation's time supersedes the rest.
		// The next compaction waits until the pending part doubles, so a
		// long lag costs no scan per tick.
		m.latest(obs.At)
		m.compactAbove = max(64, 2*(len(m.queue)-m.head))
	}
}

// latest returns the newest observation visible at now; ok is false
// before the first, and for a tick with no data.
func (m *metricsFeed) latest(now time.Time) (planner.Observation, bool) {
	for m.head < len(m.queue) && !m.queue[m.head].obs.At.Add(m.lag).After(now) {
		m.current = m.queue[m.head]
		m.head++
	}
	return m.current.obs, m.current.ok
}

// Rate reads a demand value as a rate: a gap (NaN) or a negative value
// has no arrivals.
func Rate(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return v
}

// Cost bills the tick at the prices, per second: the sum of Bill's parts.
func (t Tick) Cost(p planner.Prices, tick time.Duration) float64 {
	b := t.Bill(p, tick)
	return b.Reserved + b.OnDemand + b.Spot + b.Stopped
}

// Bill is a tick's cost by tier, in the prices' currency.
type Bill struct{ Reserved, OnDemand, Spot, Stopped float64 }

// Bill prices the tick's parts, per second: the reserved baseline all the
// time (used or not), the on-demand instances above it, the spot
// instances at the spot price and the warm tier's stopped instances at
// the stopped price. It is the one place a simulated fleet is billed: the
// backtest's totals and the tuner's replays both read it.
func (t Tick) Bill(p planner.Prices, tick time.Duration) Bill {
	reservedS := float64(p.ReservedInstances) * tick.Seconds()
	return Bill{Reserved: reservedS / 3600 * p.ReservedPerHour, OnDemand: math.Max(t.OnDemandS-reservedS, 0) / 3600 * p.OnDemandPerHour,
		Spot: t.SpotS / 3600 * p.SpotPerHour, Stopped: t.StoppedS / 3600 * p.StoppedPerHour}
}
