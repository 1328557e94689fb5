package simulated

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// Name is the back-end's registered name.
const Name = "simulated"

// Options configure a Fleet. The zero value of every field is a fleet whose
// instances boot at once, stop at once and are all on demand.
type Options struct {
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// BootDelay is the mean time from launch until an instance is ready to
	// serve (a GPU node boots and loads its model: minutes).
	BootDelay time.Duration
	// BootSpread is the standard deviation of each instance's boot time,
	// drawn from a log-normal distribution with mean BootDelay; 0: every
	// boot takes exactly BootDelay.
	BootSpread time.Duration
	// Drain is how long a removed ready instance stays billed, serving no
	// new requests, while it finishes the ones in flight; 0: it stops at
	// once.
	Drain time.Duration
	// OnDemandBase is how many instances of a pool are always on demand;
	// SpotShare, in [0, 1], is the share of the instances above it that are
	// launched as spot instances. Both are every pool's at start; SetSpot
	// changes a pool's at run time.
	OnDemandBase int
	SpotShare    float64
	// InterruptionsPerHour is each ready spot instance's interruption rate.
	InterruptionsPerHour float64
	// StockOutsPerWeek is how often, on average, a zone runs out of spot
	// capacity: every spot instance of a pool in that zone is interrupted
	// at once, and for StockOutFor the group launches spot in its other
	// zones, or on demand when none has spot (as with
	// CompensateWithOnDemand), spot there again after. 0: never.
	StockOutsPerWeek float64
	StockOutFor      time.Duration
	// SpotZones is how many zones (or instance types) a pool takes spot
	// from, each running out on its own: launches go to the zone in stock
	// with the fewest spot instances. 0 or 1: one, whose stock-out leaves
	// no spot at all.
	SpotZones int
	// WarmStart is how long a stopped instance of the pool's warm pool
	// (SetWarm) takes to serve once started: its disk keeps the image
	// and the weights, so it is a fraction of BootDelay. A launch starts
	// a stopped instance when the pool holds one, and boots cold
	// otherwise.
	WarmStart time.Duration
	// Rand draws boot times and interruptions; nil: a fixed seed, so runs
	// are reproducible. The fleet serialises its use.
	Rand *rand.Rand
}

// Instance is one simulated machine.
type Instance struct {
	ID         string
	Pool       string
	LaunchedAt time.Time
	ReadyAt    time.Time
	// Spot is true for an interruptible instance.
	Spot bool
	// interruptAt is when a spot instance will be interrupted (zero:
	// never).
	interruptAt time.Time
	// Zone is a spot instance's zone, in [0, Options.SpotZones).
	Zone int
	// standIn marks an on-demand instance launched while the zone was
	// out of the spot its mix asked for: it moves back to spot when spot
	// returns (returnToSpot).
	standIn bool
}

// Usage is what a pool has consumed so far: the billed instance-time of
// on-demand and spot instances (booting and draining ones included, and
// the cold boots that fill the warm pool), the stopped instance-time of
// the warm pool (billed for its disks), and the spot interruptions.
type Usage struct {
	OnDemand, Spot time.Duration
	Stopped        time.Duration
	// WarmStarts counts the launches that started a stopped instance.
	WarmStarts    int
	Interruptions int
	// StockOuts counts the spot stock-outs of the pool's zones (their
	// interruptions are in Interruptions).
	StockOuts int
}

// Billed is the pool's billed instance-time, spot and on demand.
func (u Usage) Billed() time.Duration { return u.OnDemand + u.Spot }

// Counts are a pool's instances by state.
type Counts struct {
	// Booting instances are billed and not yet serving; Ready ones serve;
	// Draining ones finish their in-flight requests after removal.
	Booting, Ready, Draining int
	// Desired is the size the pool is asked to keep (booting and ready).
	Desired int
	// Stopped instances wait in the warm pool, Warming ones boot cold on
	// their way there; Warm is the warm pool's size asked for (SetWarm).
	Stopped, Warming, Warm int
}

// Fleet is a set of simulated pools. It is safe for concurrent use.
type Fleet struct {
	opts Options

	mu    sync.Mutex
	pools map[string]*pool
	seq   int
	rng   *rand.Rand
}

type pool struct {
	name      string
	min, max  int
	desired   int
	instances []Instance // booting and ready, in launch order
	draining  []drain
	schedule  planner.Schedule
	used      Usage // of instances no longer running
	// running sums the launch times (since origin) of the instances
	// running (booting, ready and draining), per kind, so billing reads in
	// O(1): billed = n·now − Σ launch.
	running [2]struct {
		n         int64
		launchSum time.Duration
	}
	origin time.Time
	// interrupts counts the instances with an interruption scheduled.
	interrupts int
	// spot is the pool's spot mix (Options' at start, SetSpot's after).
	spot planner.Spot
	// nextStockOut is when a zone next runs out of spot (zero: never);
	// outUntil[z] is when zone z has spot again (none launches there
	// before).
	nextStockOut time.Time
	outUntil     []time.Time
	// asOf is when the pool was last reconciled; a scheduled step found
	// due later takes effect at its own time, but never before asOf.
	asOf time.Time
	// ready caches the ready and booting counts: they stay valid until
	// the instances change or the clock reaches the next boot's end.
	ready readyCache
	// warm is the warm pool's size asked for (SetWarm); stopped holds the
	// stop times of its instances, oldest first, and warming the cold
	// boots on their way into it. The fleet settles the warm pool at
	// settleAt (zero: settled), just after a decision, so that the sizes
	// a decision asks for at one instant are settled together.
	warm     int
	stopped  []time.Time
	warming  []Instance
	settleAt time.Time
	// returning holds the spot instances booting to take over from the
	// on-demand stand-ins of a stock-out: each joins the pool once ready
	// and a stand-in leaves (returnToSpot).
	returning []Instance
}

// readyCache is a pool's ready and booting counts as of at, valid while
// ok, until nextReady (the earliest end of a boot still running; zero
// when none is).
type readyCache struct {
	ok             bool
	at, nextReady  time.Time
	ready, booting int
}

// drain is a removed instance finishing its in-flight work until until.
type drain struct {
	Instance
	until time.Time
}

var (
	_ actuator.Actuator   = (*Fleet)(nil)
	_ actuator.WarmPooler = (*Fleet)(nil)
	_ actuator.SpotMixer  = (*Fleet)(nil)
)

// New returns an empty fleet.
func New(opts Options) *Fleet {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.SpotShare = math.Min(math.Max(opts.SpotShare, 0), 1)
	rng := opts.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	return &Fleet{opts: opts, pools: map[string]*pool{}, rng: rng}
}

// AddPool adds a pool with ready instances already running and bounds
// [min, max] (max 0: unbounded). Adding an existing pool resets it.
func (f *Fleet) AddPool(name string, ready, min, max int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	p := &pool{name: name, min: min, max: max, desired: ready, asOf: now, origin: now,
		spot:     planner.Spot{Share: f.opts.SpotShare, BaseOnDemand: f.opts.OnDemandBase}.Normal(),
		outUntil: make([]time.Time, f.zones())}
	f.scheduleStockOut(p, now)
	for range ready {
		f.launch(p, now, now)
	}
	f.pools[name] = p
}

// scheduleStockOut draws the pool's next spot stock-out after from; none
// without spot or stock-outs (and then draws nothing, so runs without
// them keep their draws).
func (f *Fleet) scheduleStockOut(p *pool, from time.Time) {
	rate := f.opts.StockOutsPerWeek
	if rate <= 0 || !p.spot.Tier() {
		return
	}
	const week = 7 * 24 * time.Hour
	p.nextStockOut = from.Add(time.Duration(f.rng.ExpFloat64() / rate * float64(week)))
}

// stockOut empties one zone of spot at at: it interrupts the pool's spot
// instances there and keeps spot launches out of it for StockOutFor; the
// group replaces them in another zone in stock, else on demand. With
// one zone no draw picks it, so runs with one keep their draws.
func (f *Fleet) stockOut(p *pool, at time.Time) {
	zone := 0
	if len(p.outUntil) > 1 {
		zone = f.rng.IntN(len(p.outUntil))
	}
	p.outUntil[zone] = at.Add(f.opts.StockOutFor)
	p.used.StockOuts++
	for k := len(p.instances) - 1; k >= 0; k-- {
		if in := p.instances[k]; in.Spot && in.Zone == zone {
			p.unschedule(in)
			p.stop(in, at)
			p.used.Interruptions++
			p.remove(k)
		}
	}
	p.returning = slices.DeleteFunc(p.returning, func(in Instance) bool {
		if in.Zone == zone {
			p.stop(in, at)
			return true
		}
		return false
	})
	f.scheduleStockOut(p, at)
	f.reconcile(p, later(at, p.asOf))
}

// zones is how many zones each pool takes spot from: Options.SpotZones,
// at least one.
func (f *Fleet) zones() int {
	if f.opts.SpotZones > 1 {
		return f.opts.SpotZones
	}
	return 1
}

// spotZone is the zone in stock at now with the fewest spot instances
// (booting, ready or on their way back to spot), -1 when every zone is
// out.
func (p *pool) spotZone(now time.Time) int {
	best, fewest := -1, 0
	for z, until := range p.outUntil {
		if now.Before(until) {
			continue
		}
		n := 0
		if len(p.outUntil) > 1 {
			for _, in := range p.instances {
				if in.Spot && in.Zone == z {
					n++
				}
			}
			for _, in := range p.returning {
				if in.Zone == z {
					n++
				}
			}
		}
		if best < 0 || n < fewest {
			best, fewest = z, n
		}
	}
	return best
}

// Name returns "simulated".
func (f *Fleet) Name() string { return Name }

// Capacity reports the pool's instances (booting and ready; draining ones
// no longer count), how many serve, the stopped instances of its warm
// pool, its desired size and bounds. An unknown pool is
// actuator.ErrRejected.
func (f *Fleet) Capacity(ctx context.Context, name string) (actuator.Capacity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return actuator.Capacity{}, err
	}
	return actuator.Capacity{Current: len(p.instances), Ready: p.counts(f.opts.Now()).Ready, ReadyKnown: true,
		Stopped: len(p.stopped), StoppedKnown: true, Desired: p.desired, Min: p.min, Max: p.max}, nil
}

// SetDesired launches or removes instances to reach desired. Values
// outside the pool's bounds are rejected, as a cloud API would.
func (f *Fleet) SetDesired(ctx context.Context, name string, desired int, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	if desired < p.min || (p.max > 0 && desired > p.max) {
		return fmt.Errorf("simulated: pool %q: desired %d outside [%d, %d]: %w", name, desired, p.min, p.max, actuator.ErrRejected)
	}
	p.desired = desired
	f.reconcile(p, f.opts.Now())
	return nil
}

// PublishSchedule replaces the pool's scheduled steps; each takes effect
// when the clock reaches its time.
func (f *Fleet) PublishSchedule(ctx context.Context, name string, steps planner.Schedule) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	now := f.opts.Now()
	p.schedule = slices.Clone(steps)
	p.asOf = later(now, p.asOf) // steps already past take effect now, not back-dated
	f.advance(p, now)
	return nil
}

// SetWarm asks the pool to keep warm stopped instances ready to start
// (capped so that the running and the stopped stay within the pool's
// max). A launch starts a stopped instance first, in Options.WarmStart;
// a scale-in stops a removed ready instance into the warm pool while it
// has room; the fleet fills the rest with cold boots that stop once
// ready, and terminates stopped instances beyond it. It settles just
// after now, so a SetDesired at the same instant is settled with it: a
// scale-out that starts stopped instances and lowers the warm pool by as
// many boots nothing. A negative size is actuator.ErrRejected.
func (f *Fleet) SetWarm(ctx context.Context, name string, warm int, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	if warm < 0 {
		return fmt.Errorf("simulated: pool %q: warm pool %d is negative: %w", name, warm, actuator.ErrRejected)
	}
	p.warm = warm
	if p.settleAt.IsZero() {
		p.settleAt = later(f.opts.Now(), p.asOf).Add(time.Nanosecond)
	}
	return nil
}

// SetSpot sets the pool's spot mix from now on: spot.Share of the
// instances above spot.BaseOnDemand launch on spot (those running keep
// their kind), and while the zone is out of spot the group launches them
// on demand (planner.SpotFallbackOnDemand) or waits for spot to return
// (planner.SpotFallbackNone, the pool then runs short). A pool's spot
// stock-outs start with its tier and stop without one. A mix outside its
// ranges (planner.Spot.Check) is actuator.ErrRejected.
func (f *Fleet) SetSpot(ctx context.Context, name string, spot planner.Spot, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return err
	}
	spot = spot.Normal()
	if err := spot.Check(math.MaxInt); err != nil { // the safety layer bounds the base by the pool's max
		return fmt.Errorf("simulated: pool %q: %v: %w", name, err, actuator.ErrRejected)
	}
	now := f.opts.Now()
	p.spot = spot
	switch {
	case !spot.Tier():
		p.nextStockOut = time.Time{}
	case p.nextStockOut.IsZero():
		f.scheduleStockOut(p, later(now, p.asOf))
	}
	f.reconcile(p, now)
	return nil
}

// Release removes the instance at once (an idle instance has nothing in
// flight) and lowers its pool's desired size by one so it is not replaced.
// An unknown instance is actuator.ErrRejected.
func (f *Fleet) Release(ctx context.Context, instanceID, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	for _, name := range f.sortedPools() {
		p := f.pools[name]
		f.advance(p, now)
		for i, in := range p.instances {
			if in.ID == instanceID {
				p.unschedule(in)
				p.stop(in, now)
				p.remove(i)
				if p.desired > p.min {
					p.desired--
				}
				f.reconcile(p, now)
				return nil
			}
		}
	}
	return fmt.Errorf("simulated: instance %q not found: %w", instanceID, actuator.ErrRejected)
}

// Instances returns the pool's booting and ready instances in launch order.
func (f *Fleet) Instances(name string) []Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return nil
	}
	return slices.Clone(p.instances)
}

// Ready counts the pool's instances whose boot has finished.
func (f *Fleet) Ready(name string) int {
	return f.Counts(name).Ready
}

// Counts returns the pool's instances by state (all zero for an unknown
// pool).
func (f *Fleet) Counts(name string) Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return Counts{}
	}
	return p.counts(f.opts.Now())
}

// counts returns the pool's instances by state at now.
func (p *pool) counts(now time.Time) Counts {
	r := &p.ready
	if !r.ok || now.Before(r.at) || (r.booting > 0 && !now.Before(r.nextReady)) {
		*r = readyCache{ok: true, at: now}
		for _, in := range p.instances {
			if now.Before(in.ReadyAt) {
				r.booting++
				if r.booting == 1 || in.ReadyAt.Before(r.nextReady) {
					r.nextReady = in.ReadyAt
				}
			} else {
				r.ready++
			}
		}
	}
	return Counts{Draining: len(p.draining), Desired: p.desired, Booting: r.booting, Ready: r.ready,
		Stopped: len(p.stopped), Warming: len(p.warming), Warm: p.warm}
}

// remove deletes the k-th instance from the booting and ready ones.
func (p *pool) remove(k int) {
	p.instances = slices.Delete(p.instances, k, k+1)
	p.ready.ok = false
}

// Billed is the instance-time the pool has used so far (launch to the end
// of its drain, or to now for running instances): what the cloud would
// bill.
func (f *Fleet) Billed(name string) time.Duration { return f.Usage(name).Billed() }

// Usage returns the pool's billed instance-time by kind and its spot
// interruptions so far.
func (f *Fleet) Usage(name string) Usage {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return Usage{}
	}
	return p.usage(f.opts.Now())
}

// Snapshot returns Counts and Usage at one instant, with one pass over
// the pool's due events: what a simulator reads at the end of each tick.
func (f *Fleet) Snapshot(name string) (Counts, Usage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.pool(name)
	if err != nil {
		return Counts{}, Usage{}
	}
	now := f.opts.Now()
	return p.counts(now), p.usage(now)
}

// usage is the pool's billed instance-time by kind at now.
func (p *pool) usage(at time.Time) Usage {
	now := at.Sub(p.origin)
	u := p.used
	u.OnDemand += time.Duration(p.running[0].n)*now - p.running[0].launchSum
	u.Spot += time.Duration(p.running[1].n)*now - p.running[1].launchSum
	for _, since := range p.stopped {
		u.Stopped += at.Sub(since)
	}
	return u
}

// PoolOptions are the pool options Factory reads; register them with it.
var PoolOptions = actuator.OptionSet{
	{Name: "initial", Kind: actuator.KindInt, PoolBounds: true, Help: "the ready instances at start (default: the pool's min)"},
}

// Factory returns an actuator.Factory that adds each configured pool to
// this fleet (PoolOptions: "initial", the ready instances at start) and
// returns the fleet, so the demo can watch every pool in one place.
func (f *Fleet) Factory() actuator.Factory {
	return func(ctx context.Context, cfg actuator.PoolConfig, opts actuator.OptionValues) (actuator.Actuator, error) {
		initial := cfg.MinInstances
		if opts.Set("initial") {
			initial = opts.Int("initial")
		}
		f.AddPool(cfg.Name, initial, cfg.MinInstances, cfg.MaxInstances)
		return f, nil
	}
}

// pool looks a pool up after applying the events that fell due. f.mu held.
func (f *Fleet) pool(name string) (*pool, error) {
	p, ok := f.pools[name]
	if !ok {
		return nil, fmt.Errorf("simulated: pool %q not found: %w", name, actuator.ErrRejected)
	}
	f.advance(p, f.opts.Now())
	return p, nil
}

// advance applies, in time order and each at its own time, every event due
// by now: scheduled steps, the ends of drains and spot interruptions (the
// group replaces an interrupted instance at once). So instances a step
// launched and a later step removed are billed for the time between them
// even when nobody looked at the fleet in between.
func (f *Fleet) advance(p *pool, now time.Time) {
	for {
		kind, at, k := p.nextEvent(now)
		switch kind {
		case eventNone:
			return
		case eventStep:
			st := p.schedule[0]
			p.schedule = p.schedule[1:]
			d := max(st.Desired, p.min)
			if p.max > 0 {
				d = min(d, p.max)
			}
			p.desired = d
			f.reconcile(p, later(st.At, p.asOf))
		case eventDrained:
			p.retire(p.draining[k].Instance, at)
			p.draining = slices.Delete(p.draining, k, k+1)
		case eventInterrupted:
			p.unschedule(p.instances[k])
			p.stop(p.instances[k], at)
			p.used.Interruptions++
			p.remove(k)
			f.reconcile(p, later(at, p.asOf))
		case eventStockOut:
			f.stockOut(p, at)
		case eventRestock:
			f.reconcile(p, at)
		case eventWarmed:
			in := p.warming[k]
			p.warming = slices.Delete(p.warming, k, k+1)
			p.stop(in, at)
			if len(p.stopped) < p.warmTarget() {
				p.park(at)
			}
		case eventSettle:
			p.settleAt = time.Time{}
			f.settle(p, at)
		case eventReturned:
			in := p.returning[k]
			p.returning = slices.Delete(p.returning, k, k+1)
			f.takeOver(p, in, at)
		}
	}
}

type eventKind int

const (
	eventNone eventKind = iota
	eventStep
	eventDrained
	eventInterrupted
	eventStockOut
	eventRestock
	eventWarmed
	eventSettle
	eventReturned
)

// nextEvent returns the earliest event due by now (eventNone when none):
// its kind, its time and, for drains and interruptions, the index of the
// instance concerned.
func (p *pool) nextEvent(now time.Time) (eventKind, time.Time, int) {
	kind, at, k := eventNone, now, -1
	consider := func(e eventKind, t time.Time, i int) {
		if !t.After(now) && (kind == eventNone || t.Before(at)) {
			kind, at, k = e, t, i
		}
	}
	if len(p.schedule) > 0 {
		consider(eventStep, p.schedule[0].At, 0)
	}
	for i, d := range p.draining {
		consider(eventDrained, d.until, i)
	}
	if p.interrupts > 0 {
		for i, in := range p.instances {
			if !in.interruptAt.IsZero() {
				consider(eventInterrupted, in.interruptAt, i)
			}
		}
	}
	if !p.nextStockOut.IsZero() {
		consider(eventStockOut, p.nextStockOut, -1)
	}
	for _, until := range p.outUntil {
		if until.After(p.asOf) {
			// Launches that waited for spot, and on-demand instances
			// that stood in for it, move to spot when it returns.
			consider(eventRestock, until, -1)
		}
	}
	for i, in := range p.warming {
		consider(eventWarmed, in.ReadyAt, i)
	}
	for i, in := range p.returning {
		consider(eventReturned, in.ReadyAt, i)
	}
	if !p.settleAt.IsZero() {
		consider(eventSettle, p.settleAt, -1)
	}
	return kind, at, k
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reconcile launches or removes instances at now to match desired. A
// launch starts a stopped instance of the warm pool when there is one,
// else takes over a cold boot on its way into the warm pool, else boots
// cold. It removes booting instances first, then ready
// spot ones, then ready on-demand ones, newest first each; a removed
// ready instance drains for Options.Drain, then stops into the warm pool
// while it has room.
func (f *Fleet) reconcile(p *pool, now time.Time) {
	p.asOf = later(now, p.asOf)
	for len(p.instances) < p.desired {
		if p.waitsForSpot(now) {
			break // the restock event launches the rest
		}
		if len(p.stopped) > 0 {
			p.unpark(now)
			p.used.WarmStarts++
			f.launch(p, now, now.Add(f.startTime(f.opts.WarmStart)))
			continue
		}
		if n := len(p.warming); n > 0 {
			// A cold boot on its way into the warm pool serves instead
			// once it is up: sooner than a new one. It joins the group
			// as a launch does (spot or on demand), billed so from now.
			in := p.warming[0]
			p.warming = p.warming[1:]
			p.stop(in, now)
			f.launch(p, now, in.ReadyAt)
			continue
		}
		f.launch(p, now, now.Add(f.startTime(f.opts.BootDelay)))
	}
	for len(p.instances) > p.desired {
		f.removeInstance(p, p.victim(now), now)
	}
	f.returnToSpot(p, now)
}

// removeInstance takes the k-th instance out of the pool at now: a ready
// one drains for Options.Drain, then retires; a booting one retires at
// once.
func (f *Fleet) removeInstance(p *pool, k int, now time.Time) {
	in := p.instances[k]
	p.remove(k)
	p.unschedule(in)
	if f.opts.Drain > 0 && !now.Before(in.ReadyAt) {
		in.interruptAt = time.Time{} // a draining instance is on its way out
		p.draining = append(p.draining, drain{Instance: in, until: now.Add(f.opts.Drain)})
		return
	}
	p.retire(in, now)
}

// returnToSpot moves the on-demand instances that stood in for spot
// during a stock-out back to spot once the zone has spot again, as
// SkyServe's dynamic on-demand fallback and Anyscale's on-demand-to-spot
// fallback do: for each, while the mix asks for more spot, a spot
// instance boots and the stand-in leaves when it is ready (takeOver), so
// the pool never runs short. Without the move a steady fleet would stay
// on demand after its first stock-out. Spot instances booting for this
// beyond what is left to move stop.
func (f *Fleet) returnToSpot(p *pool, now time.Time) {
	if !p.spot.Tier() || p.spotZone(now) < 0 {
		p.cancelReturns(len(p.returning), now)
		return
	}
	spots, standIns := p.kinds()
	n := max(min(p.spot.OnSpot(p.desired)-spots, standIns), 0)
	p.cancelReturns(len(p.returning)-n, now)
	for len(p.returning) < n {
		zone := p.spotZone(now)
		if zone < 0 {
			break
		}
		in := f.newInstance(p, now, now.Add(f.startTime(f.opts.BootDelay)))
		in.Spot, in.Zone = true, zone
		p.returning = append(p.returning, in)
		p.start(in)
	}
}

// cancelReturns stops the n newest spot instances booting to take over
// from stand-ins.
func (p *pool) cancelReturns(n int, at time.Time) {
	for ; n > 0 && len(p.returning) > 0; n-- {
		k := len(p.returning) - 1
		p.stop(p.returning[k], at)
		p.returning = p.returning[:k]
	}
}

// takeOver adds in, a spot instance booted to return the pool to spot,
// to the pool at at, when it is ready, and removes the newest stand-in (a
// booting one first); with no stand-in left or the mix's spot met, in
// stops.
func (f *Fleet) takeOver(p *pool, in Instance, at time.Time) {
	spots, standIns := p.kinds()
	if standIns == 0 || spots >= p.spot.OnSpot(p.desired) {
		p.stop(in, at)
		return
	}
	leaving := -1 // the newest booting stand-in, else the newest
	for k := len(p.instances) - 1; k >= 0; k-- {
		if x := p.instances[k]; x.standIn {
			if at.Before(x.ReadyAt) {
				leaving = k
				break
			}
			if leaving < 0 {
				leaving = k
			}
		}
	}
	if in.interruptAt = f.interruption(at); !in.interruptAt.IsZero() {
		p.interrupts++
	}
	f.removeInstance(p, leaving, at)
	p.instances = append(p.instances, in)
	p.ready.ok = false
}

// kinds counts the pool's booting and ready instances on spot, and the
// on-demand ones standing in for spot.
func (p *pool) kinds() (spots, standIns int) {
	for _, in := range p.instances {
		switch {
		case in.Spot:
			spots++
		case in.standIn:
			standIns++
		}
	}
	return spots, standIns
}

// retire stops a removed instance at at: into the warm pool when it had
// finished booting and the pool has room, else for good.
func (p *pool) retire(in Instance, at time.Time) {
	p.stop(in, at)
	if !at.Before(in.ReadyAt) && len(p.stopped)+len(p.warming) < p.warmTarget() {
		p.park(at)
	}
}

// park adds a stopped instance to the warm pool at at; unpark takes the
// newest out at at (to start it, or for good), billing its stopped time.
func (p *pool) park(at time.Time) { p.stopped = append(p.stopped, at) }

func (p *pool) unpark(at time.Time) {
	n := len(p.stopped)
	p.used.Stopped += at.Sub(p.stopped[n-1])
	p.stopped = p.stopped[:n-1]
}

// warmTarget is the warm pool's size asked for, within what the pool's
// max leaves above its desired size.
func (p *pool) warmTarget() int {
	if p.max > 0 {
		return min(p.warm, max(p.max-p.desired, 0))
	}
	return p.warm
}

// settle brings the warm pool to its target at at: the instances
// draining count towards it (they stop into it), stopped ones beyond it
// are terminated, newest first, then cold boots still on their way; a
// shortfall is filled with cold boots that stop once ready.
func (f *Fleet) settle(p *pool, at time.Time) {
	target := p.warmTarget()
	have := len(p.stopped) + len(p.warming) + len(p.draining)
	for ; have > target && len(p.stopped) > 0; have-- {
		p.unpark(at)
	}
	for ; have > target && len(p.warming) > 0; have-- {
		n := len(p.warming)
		p.stop(p.warming[n-1], at)
		p.warming = p.warming[:n-1]
	}
	for ; have < target; have++ {
		in := f.newInstance(p, at, at.Add(f.startTime(f.opts.BootDelay)))
		p.warming = append(p.warming, in)
		p.start(in)
	}
}

// victim picks the instance a scale-in removes, newest first among
// equals: a booting one (it serves nobody yet), then one of the kind
// above its share of the desired size (planner.Spot.OnSpot), on demand
// when both are, since it costs more; so a scale-in keeps the mix.
func (p *pool) victim(now time.Time) int {
	spotFirst := false
	if p.spot.Tier() { // without one every instance is on demand
		spots, _ := p.kinds()
		want := p.spot.OnSpot(p.desired)
		spotFirst = spots > want && len(p.instances)-spots <= p.desired-want
	}
	rank := func(in Instance) int {
		switch {
		case now.Before(in.ReadyAt):
			return 0 // booting: serves nobody yet
		case in.Spot == spotFirst:
			return 1
		}
		return 2
	}
	best := len(p.instances) - 1
	for i := len(p.instances) - 2; i >= 0; i-- {
		if rank(p.instances[i]) < rank(p.instances[best]) {
			best = i
		}
	}
	return best
}

// launch adds an instance launched at at and ready at readyAt: spot while
// the pool's spot instances are below SpotShare of those above the
// on-demand base.
func (f *Fleet) launch(p *pool, at, readyAt time.Time) {
	in := f.newInstance(p, at, readyAt)
	if p.spot.Tier() {
		switch short, zone := p.spotShort(), p.spotZone(at); {
		case short && zone >= 0:
			in.Spot, in.Zone = true, zone
			in.interruptAt = f.interruption(readyAt)
		case short:
			in.standIn = true
		}
	}
	p.instances = append(p.instances, in)
	p.ready.ok = false
	p.start(in)
}

// interruption draws when a spot instance ready at readyAt is
// interrupted, at Options.InterruptionsPerHour (zero: never).
func (f *Fleet) interruption(readyAt time.Time) time.Time {
	rate := f.opts.InterruptionsPerHour
	if rate <= 0 {
		return time.Time{}
	}
	return readyAt.Add(time.Duration(f.rng.ExpFloat64() / rate * float64(time.Hour)))
}

// spotShort reports whether the pool runs fewer spot instances than its
// mix asks of its desired size (planner.Spot.OnSpot).
func (p *pool) spotShort() bool {
	spots, _ := p.kinds()
	return spots < p.spot.OnSpot(p.desired)
}

// waitsForSpot reports whether the pool's next launch must wait for spot
// to return: it is out of stock at now, the mix asks for more spot and
// lost spot capacity is not replaced on demand.
func (p *pool) waitsForSpot(now time.Time) bool {
	return !p.spot.OnDemandFallback() && p.spotZone(now) < 0 && p.spotShort()
}

// newInstance names a new instance of p, launched at at and ready at
// readyAt (on demand).
func (f *Fleet) newInstance(p *pool, at, readyAt time.Time) Instance {
	f.seq++
	return Instance{ID: fmt.Sprintf("sim-%s-%04d", p.name, f.seq), Pool: p.name, LaunchedAt: at, ReadyAt: readyAt}
}

// startTime draws one instance's start time of mean d (BootDelay for a
// cold boot, WarmStart for a warm start): d, or a log-normal draw with
// that mean and BootSpread's share of BootDelay as its standard deviation.
func (f *Fleet) startTime(d time.Duration) time.Duration {
	mean, sd := d.Seconds(), f.opts.BootSpread.Seconds()
	if boot := f.opts.BootDelay.Seconds(); boot > 0 {
		sd *= mean / boot
	}
	if sd <= 0 || mean <= 0 {
		return d
	}
	sigma2 := math.Log1p(sd * sd / (mean * mean))
	mu := math.Log(mean) - sigma2/2
	return time.Duration(math.Exp(mu+math.Sqrt(sigma2)*f.rng.NormFloat64()) * float64(time.Second))
}

// start and stop keep the running sums as an instance starts and stops
// billing (stop also bills it, up to end).
func (p *pool) start(in Instance) {
	r := &p.running[kind(in)]
	r.n++
	r.launchSum += in.LaunchedAt.Sub(p.origin)
	if !in.interruptAt.IsZero() {
		p.interrupts++
	}
}

func (p *pool) stop(in Instance, end time.Time) {
	r := &p.running[kind(in)]
	r.n--
	r.launchSum -= in.LaunchedAt.Sub(p.origin)
	p.used.add(in, end)
}

// unschedule forgets in's interruption, which will not happen.
func (p *pool) unschedule(in Instance) {
	if !in.interruptAt.IsZero() {
		p.interrupts--
	}
}

func kind(in Instance) int {
	if in.Spot {
		return 1
	}
	return 0
}

// add bills in from its launch to end.
func (u *Usage) add(in Instance, end time.Time) {
	d := max(end.Sub(in.LaunchedAt), 0)
	if in.Spot {
		u.Spot += d
	} else {
		u.OnDemand += d
	}
}

func (f *Fleet) sortedPools() []string {
	names := make([]string, 0, len(f.pools))
	for n := range f.pools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
