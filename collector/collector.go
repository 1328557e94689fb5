package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/internal/backoff"
	"github.com/prewarm/prewarm/store"
)

// Input is a Source and the tags added to every point it returns (a point's
// own tags win).
type Input struct {
	Source Source
	Tags   map[string]string
}

// Observer sees the accepted points of every cycle, e.g. the alert engine.
// Observe must not keep or modify points.
type Observer interface {
	Observe(at time.Time, points []store.Point)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(at time.Time, points []store.Point)

// Observe calls f.
func (f ObserverFunc) Observe(at time.Time, points []store.Point) { f(at, points) }

// Clock tells the wall time (which stamps points) and a monotonic elapsed
// time; a gap between the two reveals a clock jump.
type Clock interface {
	Now() time.Time
	Elapsed() time.Duration
}

type systemClock struct{ start time.Time }

func (c systemClock) Now() time.Time         { return time.Now() }
func (c systemClock) Elapsed() time.Duration { return time.Since(c.start) }

// SystemClock is the machine's clock.
func SystemClock() Clock { return systemClock{start: time.Now()} }

// Config wires a Collector. Inputs, Store and Buffer are required.
type Config struct {
	Inputs []Input
	Store  store.Writer
	Buffer *buffer.Buffer
	// Interval between collection cycles; zero means 10s.
	Interval time.Duration
	// GatherTimeout bounds each source's Gather; zero means Interval. A
	// Gather still running a little after it (one that ignores its context)
	// is abandoned: the source counts as down and is skipped until that
	// Gather returns.
	GatherTimeout time.Duration
	// Tags are added to every point that lacks them (e.g. host).
	Tags map[string]string
	// HostPools maps a point's host tag to its pool when the point has no
	// pool tag, for dcgm-exporters scraped across many hosts.
	HostPools map[string]string
	// Observers see each cycle's accepted points.
	Observers []Observer
	// Metrics, if set, receives the collector's health.
	Metrics *Metrics
	Logger  *slog.Logger
	// Clock defaults to SystemClock().
	Clock Clock
	// ClockJumpTolerance is how far wall and monotonic time may drift apart
	// between cycles before the cycle is dropped as a clock jump; zero means 2s.
	ClockJumpTolerance time.Duration
	// MaxFutureSkew bounds how far ahead of the clock a source's own
	// timestamp may be; zero means 1 minute.
	MaxFutureSkew time.Duration
	// WriteBatchPoints caps one store write; zero means 5000.
	WriteBatchPoints int
	// RetryBackoff is the first wait after a failed write, doubling up to
	// MaxRetryBackoff; zeros mean 500ms and 5s.
	RetryBackoff, MaxRetryBackoff time.Duration
	// RejectRetries is how often a batch the store rejects (an error
	// wrapping neither store.ErrUnavailable nor store.ErrMisconfigured) is
	// retried before it is dropped; zero means 3. A rejected write of
	// several batches is first retried one batch at a time, so that only
	// the batch the store refuses is dropped.
	RejectRetries int
	// FlushTimeout bounds the final flush when Run stops; zero means 5s.
	FlushTimeout time.Duration
	// MaxSeries bounds the distinct series the collector tracks (and so
	// writes) at once, over all sources, and MaxSeriesPerSource those of
	// one source; zeros mean DefaultMaxSeries and DefaultMaxSeriesPerSource.
	// A point of a new series past either bound is rejected (reasons
	// series_limit and source_series_limit), so that a source whose label
	// values churn (a request ID, a pod name per request) cannot grow the
	// collector's and the store's memory without bound. A series unseen for
	// an hour is forgotten and frees its place.
	MaxSeries, MaxSeriesPerSource int
	// UnreadyAfter is how many Intervals points may wait in the buffer
	// without any write reaching the store before Ready reports false;
	// zero means DefaultUnreadyAfter.
	UnreadyAfter int
}

// The series bounds' defaults (Config.MaxSeries, MaxSeriesPerSource): a
// GPU fleet exports tens of series per device, so 10,000 a source covers
// a few hundred devices behind one exporter.
const (
	DefaultMaxSeries          = 100_000
	DefaultMaxSeriesPerSource = 10_000
)

// DefaultUnreadyAfter is Config.UnreadyAfter's default: three intervals
// (30 s at the default interval) ride out a store restart.
const DefaultUnreadyAfter = 3

// Collector runs collection cycles and writes their points; see the package
// documentation.
type Collector struct {
	cfg Config
	log *slog.Logger

	mu         sync.Mutex // guards the validation state below
	lastWall   time.Time
	lastMono   time.Duration
	lastSeen   map[string]seriesSeen // series key -> newest accepted time and its source
	perSource  map[string]int        // source -> series in lastSeen
	lastPrune  time.Time
	loggedOnce map[string]bool // source+reason already logged
	sourceUp   map[string]bool
	// totals since New, for the summary Run logs when it stops.
	totals struct{ cycles, accepted, dropped, rejected int }

	// gathering[i] is set while Inputs[i]'s Gather runs, so that a Gather
	// that ignores its context and hangs (a stuck driver call) is never
	// called again concurrently and does not stall the cycle or shutdown.
	gathering []atomic.Bool

	started time.Time // when New ran: the baseline before any write
	// lastWrite is the Unix nanosecond time of the last write the store
	// accepted (0: none yet), read by Ready from any goroutine.
	lastWrite atomic.Int64
	lastErr   atomic.Pointer[string] // the last failed write's error

	// state is the writer's view of the store, used by one goroutine at a
	// time (the write loop, then Flush).
	state struct {
		corrupt  int64 // spool points lost to damaged records, as last counted
		down     bool  // logged as down; log again when it is back
		rejected int   // consecutive rejections of the head batch
		// narrow is how many batches, from the head, are still written one
		// at a time because a write of several was rejected: the bad batch
		// alone is then dropped, not the good ones sent with it.
		narrow int
	}
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Collector, error) {
	if cfg.Store == nil || cfg.Buffer == nil {
		return nil, errors.New("collector: Store and Buffer are required")
	}
	if len(cfg.Inputs) == 0 {
		return nil, errors.New("collector: no sources configured (enable --nvml, --dcgm-url or --scrape)")
	}
	seen := map[string]bool{}
	for _, in := range cfg.Inputs {
		if seen[in.Source.Name()] {
			return nil, fmt.Errorf("collector: two sources named %q", in.Source.Name())
		}
		seen[in.Source.Name()] = true
	}
	setDefault(&cfg.Interval, 10*time.Second)
	setDefault(&cfg.GatherTimeout, cfg.Interval)
	setDefault(&cfg.ClockJumpTolerance, 2*time.Second)
	setDefault(&cfg.MaxFutureSkew, time.Minute)
	setDefault(&cfg.RetryBackoff, 500*time.Millisecond)
	setDefault(&cfg.MaxRetryBackoff, 5*time.Second)
	setDefault(&cfg.FlushTimeout, 5*time.Second)
	if cfg.WriteBatchPoints <= 0 {
		cfg.WriteBatchPoints = 5000
	}
	if cfg.RejectRetries <= 0 {
		cfg.RejectRetries = 3
	}
	if cfg.UnreadyAfter <= 0 {
		cfg.UnreadyAfter = DefaultUnreadyAfter
	}
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = DefaultMaxSeries
	}
	if cfg.MaxSeriesPerSource <= 0 {
		cfg.MaxSeriesPerSource = DefaultMaxSeriesPerSource
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock()
	}
	return &Collector{
		cfg: cfg, log: cfg.Logger, started: cfg.Clock.Now(),
		lastSeen: map[string]seriesSeen{}, perSource: map[string]int{}, loggedOnce: map[string]bool{}, sourceUp: map[string]bool{},
		gathering: make([]atomic.Bool, len(cfg.Inputs)),
	}, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Run collects every Interval and writes until ctx is done, then flushes
// what it can within FlushTimeout and closes the buffer (which spools what
// is left, if it has a spool) and every source that is an io.Closer.
func (c *Collector) Run(ctx context.Context) error {
	writerDone := make(chan struct{})
	wctx, stopWriter := context.WithCancel(context.Background())
	go func() {
		defer close(writerDone)
		c.writeLoop(wctx)
	}()

	ticker := time.NewTicker(c.cfg.Interval)
	defer ticker.Stop()
	c.Cycle(ctx)
	for {
		select {
		case <-ctx.Done():
			stopWriter()
			<-writerDone
			fctx, cancel := context.WithTimeout(context.Background(), c.cfg.FlushTimeout)
			flushErr := c.Flush(fctx)
			cancel()
			if flushErr != nil {
				c.log.Warn("final flush incomplete; unwritten points stay in the buffer", "err", flushErr)
			}
			st := c.cfg.Buffer.Stats()
			unwritten := st.MemoryPoints + int(st.SpoolPoints)
			errs := []error{c.cfg.Buffer.Close()}
			for _, in := range c.cfg.Inputs {
				if cl, ok := in.Source.(io.Closer); ok {
					errs = append(errs, cl.Close())
				}
			}
			c.logStopped(unwritten)
			return errors.Join(errs...)
		case <-ticker.C:
			c.Cycle(ctx)
		}
	}
}

// logStopped writes the run's summary: its cycles, the points accepted,
// dropped and rejected, and those left unwritten in the buffer (on disk
// with a spool, for the next start).
func (c *Collector) logStopped(unwritten int) {
	c.mu.Lock()
	t := c.totals
	c.mu.Unlock()
	c.log.Info("collector stopped", "cycles", t.cycles, "accepted", t.accepted, "dropped", t.dropped,
		"rejected", t.rejected, "unwritten", unwritten)
}

// CycleResult summarises one cycle.
type CycleResult struct {
	// Accepted counts the points now held in the buffer (with a spool: on
	// disk).
	Accepted int
	// Dropped counts valid points the buffer could not keep (full, disk
	// full); they are in dropped_points_total.
	Dropped  int
	Rejected map[string]int // by reason
}

// Cycle gathers every source once, validates and tags the points, passes
// them to the observers and queues them for writing.
func (c *Collector) Cycle(ctx context.Context) CycleResult {
	now := c.cfg.Clock.Now()
	mono := c.cfg.Clock.Elapsed()
	results := c.gatherAll(ctx)

	res := CycleResult{Rejected: map[string]int{}}
	c.mu.Lock()
	jumped := c.detectClockJump(now, mono)
	c.pruneSeries(now)
	var accepted []store.Point
	for i, in := range c.cfg.Inputs {
		ok := c.acceptInput(in, results[i], now, jumped, &res)
		accepted = append(accepted, ok...)
	}
	res.Accepted = len(accepted)
	c.totals.cycles++
	c.totals.rejected += total(res.Rejected)
	c.mu.Unlock()

	if m := c.cfg.Metrics; m != nil {
		m.cycles.Inc()
	}
	defer c.updateReady(now)
	if len(accepted) == 0 {
		return res
	}
	for _, o := range c.cfg.Observers {
		o.Observe(now, accepted)
	}
	if err := c.cfg.Buffer.Push(accepted); err != nil {
		reason := dropReason(err)
		c.log.Error("points dropped: the buffer could not keep them", "reason", reason, "points", len(accepted), "err", err)
		if m := c.cfg.Metrics; m != nil {
			m.dropped.WithLabelValues(reason).Add(float64(len(accepted)))
		}
		res.Dropped = len(accepted)
		res.Accepted = 0
	}
	c.mu.Lock()
	c.totals.accepted += res.Accepted
	c.totals.dropped += res.Dropped
	c.mu.Unlock()
	// The report the crash tests count on: once this line is written, the
	// cycle's points are in the buffer (on disk, with a spool).
	c.log.Debug("cycle done", "accepted", res.Accepted, "dropped", res.Dropped, "rejected", total(res.Rejected))
	c.updateBufferGauges()
	return res
}

// dropReason labels a failed Push in dropped_points_total: buffer_full when
// a configured bound was reached, disk_full when the disk has no room,
// spool_error for any other failure to write the spool.
func dropReason(err error) string {
	switch {
	case errors.Is(err, buffer.ErrFull), errors.Is(err, buffer.ErrClosed):
		return "buffer_full"
	case errors.Is(err, syscall.ENOSPC):
		return "disk_full"
	}
	return "spool_error"
}

func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

type gathered struct {
	points []store.Point
	err    error
	took   time.Duration
}

// gatherAll runs every source's Gather at once and waits for them, but no
// longer than GatherTimeout and a grace period: a source still running
// then (one that ignores its context) is reported down for this cycle and
// skipped in later ones until its Gather returns.
func (c *Collector) gatherAll(ctx context.Context) []gathered {
	type result struct {
		i int
		g gathered
	}
	results := make([]gathered, len(c.cfg.Inputs))
	received := make([]bool, len(c.cfg.Inputs))
	done := make(chan result, len(c.cfg.Inputs)) // buffered: a late Gather never blocks
	pending := 0
	for i, in := range c.cfg.Inputs {
		if !c.gathering[i].CompareAndSwap(false, true) {
			results[i] = gathered{err: errors.New("the previous Gather has not returned yet (a hung source); skipping it")}
			received[i] = true
			continue
		}
		pending++
		go func() {
			gctx, cancel := context.WithTimeout(ctx, c.cfg.GatherTimeout)
			defer cancel()
			start := time.Now()
			pts, err := in.Source.Gather(gctx)
			c.gathering[i].Store(false)
			done <- result{i, gathered{points: pts, err: err, took: time.Since(start)}}
		}()
	}
	wait := c.cfg.GatherTimeout + c.cfg.GatherTimeout/10 + 100*time.Millisecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for pending > 0 {
		select {
		case r := <-done:
			results[r.i], received[r.i] = r.g, true
			pending--
		case <-timer.C:
			for i := range results {
				if !received[i] {
					results[i] = gathered{err: fmt.Errorf("gather did not return within %s though its context ended", wait), took: wait}
				}
			}
			return results
		}
	}
	return results
}

// detectClockJump compares wall and monotonic time since the last cycle.
func (c *Collector) detectClockJump(now time.Time, mono time.Duration) bool {
	defer func() { c.lastWall, c.lastMono = now, mono }()
	if c.lastWall.IsZero() {
		return false
	}
	drift := now.Round(0).Sub(c.lastWall.Round(0)) - (mono - c.lastMono)
	return drift > c.cfg.ClockJumpTolerance || drift < -c.cfg.ClockJumpTolerance
}

// seriesMemory is how long a series that stopped reporting (a finished
// process, a removed GPU) is remembered for the out-of-order check.
const seriesMemory = time.Hour

// pruneSeries forgets series unseen for seriesMemory, every 10 minutes, so
// the map does not grow with every process ID ever seen. Called with c.mu
// held.
func (c *Collector) pruneSeries(now time.Time) {
	if now.Sub(c.lastPrune) < 10*time.Minute {
		return
	}
	c.lastPrune = now
	for k, last := range c.lastSeen {
		if now.Sub(last.at) > seriesMemory {
			delete(c.lastSeen, k)
			c.perSource[last.source]--
		}
	}
}

// acceptInput handles one source's result: its up/down state, then each
// point's tags and validity. Called with c.mu held.
func (c *Collector) acceptInput(in Input, g gathered, now time.Time, jumped bool, res *CycleResult) []store.Point {
	name := in.Source.Name()
	m := c.cfg.Metrics
	reject := func(reason string, n int, detail string) {
		res.Rejected[reason] += n
		if m != nil {
			m.rejected.WithLabelValues(name, reason).Add(float64(n))
		}
		key := name + "\x00" + reason
		if !c.loggedOnce[key] {
			c.loggedOnce[key] = true
			c.log.Warn("samples rejected (logged once per source and reason; see prewarm_collector_rejected_samples_total)",
				"source", name, "reason", reason, "example", detail)
		}
	}

	up := g.err == nil || errors.Is(g.err, ErrMalformed)
	switch {
	case g.err == nil:
	case errors.Is(g.err, ErrMalformed):
		reject("malformed", 1, g.err.Error())
	case errors.Is(g.err, ErrTooLarge):
		reject("too_large", 1, g.err.Error())
	}
	if was, known := c.sourceUp[name]; !known || was != up {
		switch {
		case !up:
			c.log.Warn("source down; other sources keep running", "source", name, "err", g.err)
		case known:
			c.log.Info("source up again", "source", name)
		}
	}
	c.sourceUp[name] = up
	if m != nil {
		m.sourceUp.WithLabelValues(name).Set(boolFloat(up))
		m.gatherSeconds.WithLabelValues(name).Set(g.took.Seconds())
	}
	if jumped && len(g.points) > 0 {
		reject("clock_jump", len(g.points), fmt.Sprintf("wall clock moved unlike monotonic time at %s", now.Format(time.RFC3339)))
		return nil
	}

	accepted := make([]store.Point, 0, len(g.points))
	for _, p := range g.points {
		if p.Time.IsZero() {
			p.Time = now
		}
		p.Tags = c.tagsFor(p.Tags, in.Tags)
		switch {
		case p.Measurement == "":
			reject("malformed", 1, "point without a measurement name")
		case math.IsNaN(p.Value) || math.IsInf(p.Value, 0):
			reject("nan", 1, describe(p))
		case p.Value < 0:
			reject("negative", 1, describe(p))
		case p.Time.After(now.Add(c.cfg.MaxFutureSkew)):
			reject("future", 1, describe(p))
		case p.Validate() != nil:
			// A tag the store cannot represent (a reserved key, a control
			// character) would make it refuse the whole batch this point
			// is written in.
			reject("invalid", 1, p.Validate().Error())
		default:
			key := seriesKey(p)
			last, known := c.lastSeen[key]
			switch {
			case known && !p.Time.After(last.at):
				reject("out_of_order", 1, describe(p)+" not after "+last.at.Format(time.RFC3339Nano))
				continue
			case !known && c.perSource[name] >= c.cfg.MaxSeriesPerSource:
				reject("source_series_limit", 1, fmt.Sprintf("%s: the source already has %d series, its limit", describe(p), c.cfg.MaxSeriesPerSource))
				continue
			case !known && len(c.lastSeen) >= c.cfg.MaxSeries:
				reject("series_limit", 1, fmt.Sprintf("%s: the collector already tracks %d series, its limit", describe(p), c.cfg.MaxSeries))
				continue
			case !known:
				c.perSource[name]++
			}
			c.lastSeen[key] = seriesSeen{at: p.Time, source: name}
			accepted = append(accepted, p)
		}
	}
	if m != nil {
		m.samples.WithLabelValues(name).Add(float64(len(accepted)))
		m.gpu.set(name, accepted)
	}
	return accepted
}

// tagsFor merges a point's tags over the input's and the global tags, and
// fills the pool from HostPools.
func (c *Collector) tagsFor(own, input map[string]string) map[string]string {
	out := make(map[string]string, len(own)+len(input)+len(c.cfg.Tags)+1)
	maps.Copy(out, c.cfg.Tags)
	maps.Copy(out, input)
	maps.Copy(out, own)
	if _, ok := out[store.TagPool]; !ok {
		if pool, ok := c.cfg.HostPools[out[store.TagHost]]; ok {
			out[store.TagPool] = pool
		}
	}
	return out
}

// seriesSeen is a tracked series: its newest accepted time and its source.
type seriesSeen struct {
	at     time.Time
	source string
}

// seriesKey is a point's series as every store sees it: the measurement
// and the canonical tags (empty values dropped). With the time it is the
// point's identity, which makes a retried write idempotent: the store keeps
// one point per series and time.
func seriesKey(p store.Point) string {
	return p.Measurement + "\x00" + store.CanonicalTags(p.Tags)
}

func describe(p store.Point) string {
	return fmt.Sprintf("%s%v=%v at %s", p.Measurement, p.Tags, p.Value, p.Time.Format(time.RFC3339Nano))
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c *Collector) updateBufferGauges() {
	m := c.cfg.Metrics
	if m == nil {
		return
	}
	st := c.cfg.Buffer.Stats()
	m.buffered.WithLabelValues("memory").Set(float64(st.MemoryPoints))
	m.buffered.WithLabelValues("spool").Set(float64(st.SpoolPoints))
}

// countCorrupt reports spooled points the buffer lost to damaged records
// since the last call, in the log and in dropped_points_total. Called by
// the writer only.
func (c *Collector) countCorrupt() {
	n := c.cfg.Buffer.Stats().CorruptPoints
	if n <= c.state.corrupt {
		return
	}
	lost := n - c.state.corrupt
	c.state.corrupt = n
	c.log.Error("spooled points lost to damaged spool records (disk error or crash mid-write)", "points", lost)
	if m := c.cfg.Metrics; m != nil {
		m.dropped.WithLabelValues("spool_corrupt").Add(float64(lost))
	}
}

// writeLoop drains the buffer into the store until ctx is done.
func (c *Collector) writeLoop(ctx context.Context) {
	delays := backoff.Policy{Base: c.cfg.RetryBackoff, Max: c.cfg.MaxRetryBackoff}
	failures := 0 // consecutive failed writes
	for ctx.Err() == nil {
		wrote, err := c.writeOnce(ctx)
		switch {
		case err != nil:
			failures++
			backoff.Sleep(ctx, delays.Delay(failures)) // an ended ctx ends the loop
		case wrote == 0:
			failures = 0
			select {
			case <-ctx.Done():
			case <-c.cfg.Buffer.Ready():
			}
		default:
			failures = 0
		}
	}
}

// writeOnce writes the oldest buffered batches. It returns how many points
// it took off the buffer (written, or dropped after repeated rejection) and
// the write's error, if any.
func (c *Collector) writeOnce(ctx context.Context) (int, error) {
	maxPoints := c.cfg.WriteBatchPoints
	if c.state.narrow > 0 {
		maxPoints = 1 // Peek still returns one whole batch
	}
	points, n, err := c.cfg.Buffer.Peek(maxPoints)
	c.countCorrupt()
	if err != nil || n == 0 {
		return 0, err
	}
	err = c.cfg.Store.Write(ctx, points)
	m := c.cfg.Metrics
	if refused, ok := errors.AsType[*store.SeriesLimitError](err); ok {
		// The store wrote the rest: the batch is done, its refused points
		// counted as rejected.
		c.rejectedByStore(refused)
		err = nil
	}
	if err == nil {
		at := c.cfg.Clock.Now()
		c.lastWrite.Store(at.UnixNano())
		if m != nil {
			m.lastWrite.Set(float64(at.UnixNano()) / 1e9)
		}
		if err := c.cfg.Buffer.Ack(n); err != nil {
			return 0, err
		}
		c.state.narrow = max(c.state.narrow-n, 0)
		c.markStore(false, nil)
		c.state.rejected = 0
		if m != nil {
			m.written.Add(float64(len(points)))
		}
		c.updateBufferGauges()
		return len(points), nil
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	msg := err.Error()
	c.lastErr.Store(&msg)
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, store.ErrMisconfigured) {
		// Keep the points: the store may come back, or an operator fix the
		// token or bucket the error names.
		reason := "unavailable"
		if errors.Is(err, store.ErrMisconfigured) {
			reason = "misconfigured"
		}
		if m != nil {
			m.writeErrors.WithLabelValues(reason).Inc()
		}
		c.markStore(true, err)
		return 0, err
	}
	if m != nil {
		m.writeErrors.WithLabelValues("rejected").Inc()
	}
	if n > 1 {
		c.state.narrow = n
		c.state.rejected = 0
		c.log.Warn("store rejected a write of several batches; retrying them one at a time", "batches", n,
			"points", len(points), "err", err)
		return 0, err
	}
	c.state.rejected++
	if c.state.rejected < c.cfg.RejectRetries {
		c.log.Warn("store rejected a batch; retrying", "points", len(points), "attempt", c.state.rejected, "err", err)
		return 0, err
	}
	c.log.Error("store rejected a batch again; dropping it", "points", len(points), "attempts", c.state.rejected, "err", err)
	c.state.rejected = 0
	c.state.narrow = max(c.state.narrow-n, 0)
	if m != nil {
		m.dropped.WithLabelValues("rejected").Add(float64(len(points)))
	}
	return len(points), c.cfg.Buffer.Ack(n)
}

// rejectedByStore counts the points the store refused past its series
// limit (source "store", reason store_series_limit), logging the first.
func (c *Collector) rejectedByStore(e *store.SeriesLimitError) {
	if m := c.cfg.Metrics; m != nil {
		m.rejected.WithLabelValues("store", "store_series_limit").Add(float64(e.Refused))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.totals.rejected += e.Refused
	if key := "store\x00store_series_limit"; !c.loggedOnce[key] {
		c.loggedOnce[key] = true
		c.log.Warn("store refused points of new series past its limit (logged once; see prewarm_collector_rejected_samples_total)", "err", e)
	}
}

// markStore logs the store going down or coming back, once per change.
func (c *Collector) markStore(down bool, err error) {
	if down == c.state.down {
		return
	}
	c.state.down = down
	if down {
		st := c.cfg.Buffer.Stats()
		c.log.Warn("store unavailable; buffering points and retrying", "err", err,
			"buffered_memory", st.MemoryPoints, "buffered_spool", st.SpoolPoints)
		return
	}
	c.log.Info("store available again; writing buffered points in order")
}

// Ready reports whether points reach the store: false while points have
// waited in the buffer for more than UnreadyAfter intervals with no write
// accepted by the store in that time, with a reason saying for how long
// and the last error. An empty buffer is ready (nothing waits), and so is a
// collector that writes, however large its backlog.
func (c *Collector) Ready(now time.Time) (bool, string) {
	st := c.cfg.Buffer.Stats()
	waiting := st.MemoryPoints + st.SpoolPoints
	if waiting == 0 {
		return true, "no points waiting"
	}
	since := c.started
	if ns := c.lastWrite.Load(); ns != 0 {
		since = time.Unix(0, ns)
	}
	limit := time.Duration(c.cfg.UnreadyAfter) * c.cfg.Interval
	stalled := now.Sub(since)
	if stalled <= limit {
		return true, fmt.Sprintf("%d points waiting, last write %s ago", waiting, stalled.Round(time.Second))
	}
	reason := fmt.Sprintf("%d points waiting and no write reached the store for %s (more than %d intervals of %s)",
		waiting, stalled.Round(time.Second), c.cfg.UnreadyAfter, c.cfg.Interval)
	if e := c.lastErr.Load(); e != nil {
		reason += "; last error: " + *e
	}
	return false, reason
}

// updateReady refreshes prewarm_collector_ready.
func (c *Collector) updateReady(now time.Time) {
	if m := c.cfg.Metrics; m != nil {
		ok, _ := c.Ready(now)
		m.ready.Set(boolFloat(ok))
	}
}

// Flush writes buffered points until the buffer is empty, a write fails or
// ctx is done.
func (c *Collector) Flush(ctx context.Context) error {
	for {
		wrote, err := c.writeOnce(ctx)
		if err != nil {
			return err
		}
		if wrote == 0 {
			return nil
		}
	}
}
