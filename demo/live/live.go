// Package live is 'forecaster demo': the real scaling service, with
// its status page, API and metrics, on demand replayed faster than real
// time. It needs nothing outside the process: four weeks of synthetic
// demand (datasets.DefaultSynthetic, or a recorded trace) go into a
// temporary embedded store, a simulated GPU fleet (actuator/simulated) boots
// instances after the pool's boot delay, and every minute of simulated time
// the collector's part is played (that minute's demand is written to the
// store) and the service ticks. At the default speed a simulated day takes
// a real minute, so within a minute of starting a newcomer watches capacity
// rise before the morning peak and fall after the evening.
//
// The service, the store, the fleet and the actuator's safety layer all
// read one simulated clock; only prewarm_last_successful_tick_timestamp_seconds
// is wall time, for Prometheus to compare with time().
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/open"
)

// Defaults and ranges of Options.
const (
	DefaultListen = "127.0.0.1:8080"
	// DefaultSpeed is a simulated day per real minute.
	DefaultSpeed = 1440.0
	MaxSpeed     = 100_000.0
	// DefaultHistoryDays of demand are in the store before the first tick,
	// so the first plan is a forecast (two weekly seasons and more).
	DefaultHistoryDays = 28
	// MinHistoryDays and MaxHistoryDays bound the history, live and in
	// the offline replay (package demo) alike: two weekly seasons and a
	// day, so that the first plan can be a forecast, to a year.
	MinHistoryDays, MaxHistoryDays = 15, 365
	// PoolName is the demo's one pool.
	PoolName = "demo"
)

// step is the demo's demand resolution and decision interval (simulated).
const step = time.Minute

// Options configure Run; the zero value is the documented default.
type Options struct {
	// Listen is the address of the page, the API and /metrics (default
	// 127.0.0.1:8080; port 0 picks a free one, reported to Ready).
	Listen string
	// Speed is simulated seconds per real second, in [1, 100000]
	// (default 1440: a day a minute). When the machine cannot keep up,
	// the simulated clock runs slower, never skipping a tick.
	Speed float64
	// Trace is a CSV file of demand (a time column and requests/s) to
	// replay instead of synthetic demand: its first HistoryDays (at most
	// all but its last day) go into the store, the rest is replayed.
	Trace string
	// HistoryDays of demand precede the replay (default 28, 15 to 365).
	HistoryDays int
	// Duration stops the demo after that much real time; 0 runs until ctx
	// ends.
	Duration time.Duration
	// Seed of the synthetic demand (default 1).
	Seed uint64
	// Shift changes the synthetic demand's character a week into the
	// replay: smooth daily and weekly rhythms (datasets.DefaultSynthetic)
	// before, short spikes at random times on a flatter day
	// (datasets.SpikySynthetic) after, so the pool's tuner is seen to move
	// to another candidate and the page to say why.
	Shift bool
	// BootDelay is the instances' boot and model-load time (default 10m).
	BootDelay time.Duration
	// WarmStart gives the pool a warm tier of stopped instances that
	// serve this long after they start (the pool's warm_start; 0: none,
	// else below BootDelay).
	WarmStart time.Duration
	// SpotShare runs this share of the instances above the pool's min on
	// spot (the pool's spot.share, in [0, 1]; 0: none). The simulated
	// spot instances are interrupted at backtest's default rate, and the
	// zone runs out of spot StockOutsPerWeek times a week, each time for
	// backtest's default stock-out length, replaced on demand.
	SpotShare float64
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
	// Ready, when set, is called with the address served once listening.
	Ready func(addr string)
}

func (o Options) withDefaults() (Options, error) {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Speed == 0 {
		o.Speed = DefaultSpeed
	}
	if o.HistoryDays == 0 {
		o.HistoryDays = DefaultHistoryDays
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	o.BootDelay = o.bootDelay()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, o.Check()
}

// Check reports the first option outside its range (zero values are the
// defaults and valid).
func (o Options) Check() error {
	switch {
	case o.Speed != 0 && (math.IsNaN(o.Speed) || o.Speed < 1 || o.Speed > MaxSpeed):
		return fmt.Errorf("--speed %v: want simulated seconds per real second in [1, %v]", o.Speed, MaxSpeed)
	case o.Duration < 0:
		return fmt.Errorf("--duration %v must not be negative", o.Duration)
	case o.Shift && o.Trace != "":
		return fmt.Errorf("--shift changes the synthetic demand: it does not go with --trace")
	case math.IsNaN(o.SpotShare) || o.SpotShare < 0 || o.SpotShare > 1:
		return fmt.Errorf("--spot-share %v: want a share in [0, 1]", o.SpotShare)
	case o.WarmStart < 0 || (o.WarmStart > 0 && o.WarmStart >= o.bootDelay()):
		return fmt.Errorf("--warm-start %v: want 0 (no warm tier) or a start below --boot (%v)", o.WarmStart, o.bootDelay())
	}
	return CheckShared(o.HistoryDays, o.BootDelay)
}

// bootDelay is BootDelay with its default.
func (o Options) bootDelay() time.Duration {
	if o.BootDelay == 0 {
		return planner.DefaultConfig().Fleet.BootDelay
	}
	return o.BootDelay
}

// StockOutsPerWeek is how often the demo's simulated zone runs out of
// spot, with SpotShare set: once a week, the case the tiers' backtest
// suite measures.
const StockOutsPerWeek = 1

// CheckShared reports the first of the settings the live demo and the
// offline replay (package demo) share that is out of its range, naming
// its flag: --history-days MinHistoryDays to MaxHistoryDays, --boot 0 to
// planner.MaxDelay. Zero values are the defaults.
func CheckShared(historyDays int, bootDelay time.Duration) error {
	switch {
	case historyDays != 0 && (historyDays < MinHistoryDays || historyDays > MaxHistoryDays):
		return fmt.Errorf("--history-days %d: want %d to %d", historyDays, MinHistoryDays, MaxHistoryDays)
	case bootDelay < 0 || bootDelay > planner.MaxDelay:
		return fmt.Errorf("--boot %v: want 0 to %gh", bootDelay, planner.MaxDelay.Hours())
	}
	return nil
}

// clock is the simulated clock, read by every part of the demo and by
// the HTTP handlers concurrently.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}

func (c *clock) Now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Run runs the demo until ctx ends or opts.Duration has passed, printing
// where to look and a line per simulated hour to w.
func Run(ctx context.Context, opts Options, w io.Writer) error {
	opts, err := opts.withDefaults()
	if err != nil {
		return err
	}
	demand, from, err := loadDemand(opts)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "prewarm-demo-")
	if err != nil {
		return fmt.Errorf("creating the demo's temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	db, err := open.EmbeddedFile(filepath.Join(dir, "store.db")).Open(ctx, open.Options{Embedded: embedded.Options{NoSync: true}})
	if err != nil {
		return fmt.Errorf("opening the demo's embedded store: %w", err)
	}
	defer db.Close()
	if err := writeDemand(ctx, db, demand, 0, from); err != nil {
		return err
	}

	rig, err := newRig(ctx, opts, dir, db, demand, from)
	if err != nil {
		return err
	}
	defer rig.close()

	lis, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s (--listen): %w", opts.Listen, err)
	}
	notice := fmt.Sprintf("Demo: synthetic demand replayed on a simulated clock, ×%.0f (a simulated day per %s of real time); the fleet is simulated.",
		opts.Speed, dayTakes(opts.Speed))
	if opts.Trace != "" {
		notice = fmt.Sprintf("Demo: %s replayed on a simulated clock, ×%.0f; the fleet is simulated.", filepath.Base(opts.Trace), opts.Speed)
	}
	srv := &http.Server{Handler: rig.svc.Handler(service.HTTPOptions{Gatherer: rig.reg, Notice: notice}), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	addr := lis.Addr().String()
	fmt.Fprintf(w, "prewarm demo: %d days of %s demand in a temporary embedded store (peak %.0f req/s); pool %q of 1 to %d instances\n"+
		"of %.0f req/s each, booting in %v, on a simulated fleet. Replaying from %s at ×%.0f.\n\n"+
		"  Status page:  http://%s/\n  API:          http://%s/api/v1/pools\n  Metrics:      http://%s/metrics\n\n",
		opts.HistoryDays, demandName(opts), rig.peak, PoolName, rig.pool.Fleet.MaxInstances, rig.pool.Fleet.RPSPerInstance, opts.BootDelay,
		demand.Time(from).Format("Mon 2 Jan 15:04 MST"), opts.Speed, addr, addr, addr)
	if opts.Ready != nil {
		opts.Ready(addr)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	loopErr := rig.replay(ctx, demand, from, w)
	select {
	case err := <-served:
		return errors.Join(loopErr, fmt.Errorf("HTTP server on %s: %w", addr, err))
	default:
	}
	return loopErr
}

// dayTakes is how long a simulated day takes at speed, for people.
func dayTakes(speed float64) string {
	d := time.Duration(float64(24*time.Hour) / speed).Round(time.Second)
	switch {
	case d == time.Minute:
		return "minute"
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

func demandName(o Options) string {
	if o.Trace != "" {
		return filepath.Base(o.Trace)
	}
	return "synthetic"
}

// loadDemand returns the demand at one-minute steps and the index of the
// first replayed minute: the trace's, or synthetic demand starting
// HistoryDays before a Monday 03:00 UTC about a week ago, so the replay
// soon reaches a weekday's morning ramp.
func loadDemand(o Options) (datasets.Series, int, error) {
	history := o.HistoryDays * 24 * 60
	if o.Trace == "" {
		start := replayStart(time.Now()).Add(-time.Duration(history) * step)
		return synthetic(o, start, history, history+7*24*60), history, nil
	}
	s, err := datasets.LoadCSV(o.Trace, datasets.CSVOptions{SkipBad: true})
	if err != nil {
		return s, 0, fmt.Errorf("--trace: %w", err)
	}
	if s.Index {
		return s, 0, fmt.Errorf("--trace %s: its time column is an index (0, 1, 2, ...), not dates", o.Trace)
	}
	s, err = perMinute(s)
	if err != nil {
		return s, 0, fmt.Errorf("--trace %s: %w", o.Trace, err)
	}
	if s.Len() < 2*24*60 {
		return s, 0, fmt.Errorf("--trace %s: %v of demand; the demo needs at least two days", o.Trace, s.End().Sub(s.Start))
	}
	return s, min(history, s.Len()-24*60), nil
}

// replayStart is the Monday 03:00 UTC at least a week before now.
func replayStart(now time.Time) time.Time {
	d := now.UTC().AddDate(0, 0, -7)
	d = time.Date(d.Year(), d.Month(), d.Day(), 3, 0, 0, 0, time.UTC)
	for d.Weekday() != time.Monday {
		d = d.AddDate(0, 0, -1)
	}
	return d
}

// perMinute puts a trace on the one-minute grid the demo ticks on:
// coarser steps are interpolated linearly (a collector would see a smooth
// rate), finer ones averaged.
func perMinute(s datasets.Series) (datasets.Series, error) {
	switch {
	case s.Step == step:
		return s, nil
	case s.Step < step:
		return datasets.Resample(s, step, datasets.AggregateMean)
	}
	k := int(s.Step / step)
	if s.Step%step != 0 {
		return s, fmt.Errorf("step %v is not a whole number of minutes", s.Step)
	}
	out := datasets.Series{Name: s.Name, Start: s.Start, Step: step, Values: make([]float64, 0, s.Len()*k)}
	for i, v := range s.Values {
		next := v
		if i+1 < s.Len() && !math.IsNaN(s.Values[i+1]) {
			next = s.Values[i+1]
		}
		for j := range k {
			out.Values = append(out.Values, v+(next-v)*float64(j)/float64(k))
		}
	}
	return out, nil
}

// writeDemand writes demand.Values[from:to] as the pool's request rate,
// as the collector would (missing minutes are left out).
func writeDemand(ctx context.Context, db store.Writer, demand datasets.Series, from, to int) error {
	const batch = 10_000
	points := make([]store.Point, 0, min(batch, max(to-from, 0)))
	tags := map[string]string{"pool": PoolName}
	for i := from; i < to; i++ {
		if v := demand.Values[i]; !math.IsNaN(v) {
			points = append(points, store.Point{Measurement: poolspec.DefaultDemandMeasurement, Tags: tags, Value: v, Time: demand.Time(i)})
		}
		if len(points) == batch || (i == to-1 && len(points) > 0) {
			if err := db.Write(ctx, points); err != nil {
				return fmt.Errorf("writing demand to the demo's store: %w", err)
			}
			points = points[:0]
		}
	}
	return nil
}

// rig is the demo's service, fleet and metrics.
type rig struct {
	opts  Options
	clock *clock
	db    store.Writer
	fleet *simulated.Fleet
	svc   *service.Service
	reg   *prometheus.Registry
	pool  poolspec.Pool
	peak  float64
	close func()
	// from is the first replayed minute of the demand.
	from int
}

// poolSpec sizes the demo pool for the demand: one instance serves a
// twentieth of the history's 99th percentile, and max leaves a fifth of
// headroom over what that percentile needs at the target utilisation. Its
// tiers are the options': a warm tier, and spot above the pool's min.
func poolSpec(demand datasets.Series, history int, opts Options) (poolspec.Pool, float64) {
	vals := slices.DeleteFunc(slices.Clone(demand.Values[:history]), func(v float64) bool { return math.IsNaN(v) })
	slices.Sort(vals)
	p99 := 1.0
	if len(vals) > 0 {
		p99 = max(vals[int(0.99*float64(len(vals)-1))], 1)
	}
	p := poolspec.DefaultPool()
	p.Name, p.Backend, p.Mode = PoolName, simulated.Name, poolspec.ModeActive
	p.Fleet.RPSPerInstance = math.Ceil(p99 / 20)
	p.Fleet.MinInstances, p.Fleet.MaxInstances, p.Fleet.MaxStep = 1, int(math.Ceil(1.2*p99/(p.Fleet.RPSPerInstance*p.TargetUtilisation))), 8
	p.Fleet.BootDelay, p.Fleet.WarmStart = opts.BootDelay, opts.WarmStart
	p.Fleet.Spot = planner.Spot{Share: opts.SpotShare, BaseOnDemand: p.Fleet.MinInstances, Fallback: planner.SpotFallbackOnDemand}
	p.Demand = poolspec.SeriesRef{Measurement: poolspec.DefaultDemandMeasurement, Match: map[string]string{"pool": PoolName}}
	return p, p99
}

func newRig(ctx context.Context, opts Options, dir string, db store.Store, demand datasets.Series, from int) (*rig, error) {
	pool, p99 := poolSpec(demand, from, opts)
	clk := newClock(demand.Time(from))
	fleet := simulated.New(fleetOptions(opts, clk))
	file := poolspec.DefaultFile()
	file.Interval = step
	file.Pools = []poolspec.Pool{pool}
	file.AuditLog = filepath.Join(dir, "audit.jsonl")

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector("forecaster"))
	metrics, err := service.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	actMetrics, err := actuator.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	audit, err := os.OpenFile(file.AuditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the demo's audit log: %w", err)
	}
	st, err := state.Open(filepath.Join(dir, "state.db"), state.Options{Logger: opts.Logger})
	if err != nil {
		audit.Close()
		return nil, err
	}
	closeAll := func() { st.Close(); audit.Close() }
	initial := int(math.Ceil(demand.Values[max(from-1, 0)] / (pool.Fleet.RPSPerInstance * pool.TargetUtilisation)))
	initial = min(max(initial, pool.Fleet.MinInstances), pool.Fleet.MaxInstances)
	svc, err := service.New(ctx, &file, service.Deps{
		Store: db,
		Backend: func(_ context.Context, cfg actuator.PoolConfig) (actuator.Actuator, error) {
			fleet.AddPool(cfg.Name, initial, cfg.MinInstances, cfg.MaxInstances)
			return fleet, nil
		},
		Safety: actuator.SafetyOptions{Audit: actuator.NewSyncWriter(audit), Metrics: actMetrics, Sleep: sleepNot},
		State:  st, Now: clk.Now, Logger: opts.Logger, Metrics: metrics,
	})
	if err != nil {
		closeAll()
		return nil, err
	}
	return &rig{opts: opts, clock: clk, db: db, fleet: fleet, svc: svc, reg: reg, pool: pool, peak: p99, close: closeAll, from: from}, nil
}

// fleetOptions are the simulated fleet's: the boot and warm start, and
// with a spot tier its interruptions and stock-outs.
func fleetOptions(opts Options, clk *clock) simulated.Options {
	o := simulated.Options{Now: clk.Now, BootDelay: opts.BootDelay, WarmStart: opts.WarmStart}
	if opts.SpotShare > 0 {
		o.InterruptionsPerHour, o.StockOutsPerWeek, o.StockOutFor = backtest.DefaultSpotInterruptions, StockOutsPerWeek, backtest.DefaultSpotStockOutFor
	}
	return o
}

// sleepNot is the safety layer's retry backoff in the demo: the simulated
// fleet never fails transiently, and a real sleep would stall the clock.
func sleepNot(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// replay ticks the service every simulated minute, paced to opts.Speed,
// writing each minute's demand first, until ctx ends or the demand does
// (synthetic demand is extended a week at a time and never ends).
func (r *rig) replay(ctx context.Context, demand datasets.Series, from int, w io.Writer) error {
	const line = "%-14s  %12s  %5s  %7s  %-8s  %-22s  %s\n"
	fmt.Fprintf(w, line, "simulated time", "demand req/s", "ready", "desired", "gate", "policy", "speed")
	began, simBegan := time.Now(), demand.Time(from)
	lastLine, lastLineAt := began, simBegan
	for i := from; ; i++ {
		if i >= demand.Len() {
			if r.opts.Trace != "" {
				fmt.Fprintf(w, "The trace ends at %s; the page stays up until the demo is stopped.\n", demand.End().Format(time.RFC3339))
				<-ctx.Done()
				return nil
			}
			demand = r.extend(demand)
		}
		sim := demand.Time(i).Add(step) // minute i has passed: its demand is known
		due := began.Add(time.Duration(float64(sim.Sub(simBegan)) / r.opts.Speed))
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := writeDemand(ctx, r.db, demand, i, i+1); err != nil {
			if ctx.Err() != nil {
				return nil // stopped while writing: a stop, not a failure
			}
			return err
		}
		r.clock.set(sim)
		if err := r.svc.Tick(ctx); err != nil {
			r.opts.Logger.Warn("demo tick failed", "err", err)
		}
		if sim.Minute() == 0 {
			st, _ := r.svc.PoolStatus(PoolName)
			speed := float64(sim.Sub(lastLineAt)) / float64(time.Since(lastLine))
			lastLine, lastLineAt = time.Now(), sim
			fmt.Fprintf(w, line, sim.Format("Mon 2 Jan 15:04"), fmt.Sprintf("%.0f", demand.Values[i]), fmt.Sprint(st.Ready),
				fmt.Sprint(st.Desired), st.Gate, st.Tuning.Candidate, fmt.Sprintf("×%.0f", speed))
		}
	}
}

// extend returns the synthetic demand a week longer (the generator gives
// the same values for the steps it gave before).
func (r *rig) extend(demand datasets.Series) datasets.Series {
	return synthetic(r.opts, demand.Start, r.from, demand.Len()+7*24*60)
}

// synthetic is n minutes of the demo's demand from start: the smooth
// generator, or with Options.Shift the spiky one from a week after
// minute from (the first replayed) on.
func synthetic(o Options, start time.Time, from, n int) datasets.Series {
	gen := datasets.DefaultSynthetic()
	gen.Seed = o.Seed
	s := gen.Generate(start, step, n)
	if shift := from + ShiftAfterDays*24*60; o.Shift && shift < n {
		spiky := datasets.SpikySynthetic()
		// Spikes of 2 to 2.4 times the level on top of it: a level of a
		// third keeps them within the pool's max, sized for the smooth
		// history.
		spiky.Seed, spiky.PeakRPS = o.Seed, gen.PeakRPS/3
		copy(s.Values[shift:], spiky.Generate(start, step, n).Values[shift:])
	}
	return s
}

// ShiftAfterDays is how far into the replay Options.Shift changes the
// demand.
const ShiftAfterDays = 7
