package datasets

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/prewarm/prewarm/store"
)

// Synthetic describes the demand of an inference service, in requests/s, for
// [Synthetic.Generate]. Demand at time t is
//
//	rate(t) = (day(t) + spike(t)) · trend(t) · noise(t) · flash(t) · burst(t) · outage(t)
//
// where day(t) is Trough·PeakRPS at night, rising to PeakRPS during working
// hours on weekdays (WeekendRatio·PeakRPS on weekends and holidays) with a
// lunch dip; trend(t) = (1+TrendPerWeek)^(weeks since start); noise(t) =
// exp(σ·z(t) − σ²/2) with z an AR(1) process of unit variance whose
// correlation decays over NoiseCorrelation; and flash(t) multiplies demand by
// up to FlashCrowdFactor for FlashCrowdDuration at random times (a Poisson
// process with FlashCrowdsPerWeek events per week) and burst(t), when
// BurstEvery is set, multiplies it by BurstFactor for a short while on a
// jittered cron-like grid (see BurstySynthetic). Two more terms, off by
// default, shape a social-media stream (see SpikySynthetic): spike(t) adds
// a height in units of PeakRPS for a few minutes at random times, and
// outage(t) is 0 for most of one window a period, as when collection
// fails, else 1. At a step coarser than these events, spike(t), flash(t),
// burst(t) and outage(t) are each their own mean over the step.
//
// Start from [DefaultSynthetic] and change fields. The same configuration,
// start, step and length always give the same series, and a longer series
// begins with the shorter one.
type Synthetic struct {
	// Seed makes the noise, the flash crowds, the bursts, the spikes and
	// the outages reproducible.
	Seed uint64
	// PeakRPS is the weekday working-hours level in requests/s at the start,
	// before trend, noise and flash crowds.
	PeakRPS float64
	// TroughRatio is the night level as a fraction of PeakRPS, in [0, 1].
	TroughRatio float64
	// WeekendRatio is the working-hours level on Saturdays, Sundays and
	// holidays as a fraction of PeakRPS, in [TroughRatio, 1].
	WeekendRatio float64
	// BusyFrom and BusyUntil are the local hours (0-24, fractional) around
	// which demand rises in the morning and falls in the evening; each change
	// takes about two hours.
	BusyFrom, BusyUntil float64
	// LunchDip is the fraction by which demand dips around 12:30 local time.
	LunchDip float64
	// TrendPerWeek is the compound growth per week: 0.03 = +3% a week;
	// negative values shrink demand.
	TrendPerWeek float64
	// Noise is σ, the standard deviation of the log of the multiplicative
	// noise: 0.1 ≈ ±10%. 0 = no noise.
	Noise float64
	// NoiseCorrelation is how long noise persists: the AR(1) correlation
	// between samples one step apart is exp(−step/NoiseCorrelation). 0 =
	// independent samples.
	NoiseCorrelation time.Duration
	// Holidays are dates (year, month, day in Location) that look like a
	// Sunday.
	Holidays []time.Time
	// FlashCrowdsPerWeek is the expected number of flash crowds per week.
	FlashCrowdsPerWeek float64
	// FlashCrowdFactor is the largest demand multiplier at a flash crowd's
	// peak (≥ 1); each crowd draws its own between halfway and this.
	FlashCrowdFactor float64
	// FlashCrowdDuration is how long a flash crowd lasts: a rise over a
	// tenth of it, then an exponential decay.
	FlashCrowdDuration time.Duration
	// Location is the time zone of the daily and weekly cycle; nil = UTC.
	Location *time.Location

	// BurstEvery spaces bursts on a grid counted from local midnight (a
	// batch job run by cron every two hours, say); 0 = no bursts. Each
	// burst starts at a grid point moved by a uniform random offset within
	// ±BurstJitter, lasts a uniform random time in [BurstMin, BurstMax],
	// and multiplies demand over that time by a uniform random factor in
	// [BurstFactorMin, BurstFactorMax] (≥ 1). The jitter must be under half
	// the spacing, so bursts keep their order.
	BurstEvery, BurstJitter time.Duration
	BurstMin, BurstMax      time.Duration
	// BurstFactorMin and BurstFactorMax bound each burst's multiplier.
	BurstFactorMin, BurstFactorMax float64

	// SpikesPerDay is the expected number of spikes per day; 0 = no
	// spikes. Spikes do not overlap: the time from one spike's end to the
	// next one's start is exponential with mean 1/SpikesPerDay days. Each
	// lasts a uniform random time in [SpikeMin, SpikeMax] and adds a
	// uniform random height in [SpikeHeightMin, SpikeHeightMax] times
	// PeakRPS to the daily level, so a spike is as many requests at night
	// as by day (a post gone viral, not a share of the current traffic).
	// Spikes that short and that randomly timed can neither be pre-warmed
	// nor caught by a reactive scale-out.
	SpikesPerDay       float64
	SpikeMin, SpikeMax time.Duration
	// SpikeHeightMin and SpikeHeightMax bound each spike's height as a
	// fraction of PeakRPS (≥ 0).
	SpikeHeightMin, SpikeHeightMax float64

	// OutageEvery spaces collection outages: one per period of
	// OutageEvery on the store's grid (multiples from the Unix epoch), in
	// a window of OutageWindow drawn uniformly among the period's windows;
	// 0 = no outages. Demand reads 0 in the outage window except for its
	// first OutageKept, so a scaler planning per window sees one busy row
	// in an empty window. OutageEvery must be a multiple of OutageWindow,
	// and OutageKept shorter than OutageWindow.
	OutageEvery, OutageWindow, OutageKept time.Duration
}

// DefaultSynthetic returns a busy inference service: weekday peak 200
// requests/s from about 08:00 to 20:00 UTC, night trough 15% of peak,
// weekends at 35%, +2% a week, ±12% noise persisting about 20 minutes, and
// about one flash crowd a week tripling demand for 20 minutes.
func DefaultSynthetic() Synthetic {
	return Synthetic{
		Seed:               1,
		PeakRPS:            200,
		TroughRatio:        0.15,
		WeekendRatio:       0.35,
		BusyFrom:           8,
		BusyUntil:          20,
		LunchDip:           0.12,
		TrendPerWeek:       0.02,
		Noise:              0.12,
		NoiseCorrelation:   20 * time.Minute,
		FlashCrowdsPerWeek: 1,
		FlashCrowdFactor:   3,
		FlashCrowdDuration: 20 * time.Minute,
	}
}

// BurstySynthetic returns DefaultSynthetic with bursts instead of flash
// crowds: 4 to 5 times the demand for 5 to 12 minutes about every two
// hours, each burst's start jittered by up to ±30 minutes. Bursts that short end before a reactive
// scale-out (a minute or two to notice, ten to boot) can serve them; only
// capacity pre-warmed for the burst's window does.
func BurstySynthetic() Synthetic {
	g := DefaultSynthetic()
	g.FlashCrowdsPerWeek = 0
	g.BurstEvery, g.BurstJitter = 2*time.Hour, 30*time.Minute
	g.BurstMin, g.BurstMax = 5*time.Minute, 12*time.Minute
	g.BurstFactorMin, g.BurstFactorMax = 4, 5
	return g
}

// SpikySynthetic returns the per-minute stream of a social-media service on
// which a forecast-ahead scaler loses money: a smooth daily cycle with the
// quietest hour of day about a quarter of the busiest, little weekly effect
// and no trend; ±5% independent noise per minute; about nine spikes a day,
// at random times, each adding 2 to 2.4 times the daytime peak for 4 to 10
// minutes; and one collection outage a day, emptying a random half hour but
// its first minute. A spike is over before a reactive scale-out (a minute
// or two to notice, ten to boot) is ready, and nothing in the past says when
// the next one comes.
//
// Measured at 30 minutes (MeasureSignature, in the package's tests) over
// 28 days at a 1-minute step (seeds 1 to 3), the busiest minute is on average 2.0-2.1 times its
// half hour's mean (median 1.12, p90 2.5-2.7), the pooled within-step
// deviation is 0.85 with a lag-1 autocorrelation of 0.12-0.13 (the
// outages' empty half hours dominate both: within the other half hours a
// spike persists from one minute to the next), the hourly means of the day
// swing 3.6-4.0 times, the peak is 4.4-4.6 times the mean and 0.17-0.18% of
// requests lie above the 99th-percentile minute.
func SpikySynthetic() Synthetic {
	g := DefaultSynthetic()
	g.FlashCrowdsPerWeek, g.TrendPerWeek = 0, 0
	g.TroughRatio, g.WeekendRatio = 0.23, 0.9
	g.BusyFrom, g.BusyUntil = 5, 23
	g.Noise, g.NoiseCorrelation = 0.05, 0
	g.SpikesPerDay = 9
	g.SpikeMin, g.SpikeMax = 4*time.Minute, 10*time.Minute
	g.SpikeHeightMin, g.SpikeHeightMax = 2, 2.4
	g.OutageEvery, g.OutageWindow, g.OutageKept = 24*time.Hour, 30*time.Minute, time.Minute
	return g
}

// Bounds of the spike and outage fields.
const (
	maxSpikesPerDay = 10_000
	maxSpikeLength  = 24 * time.Hour
	maxSpikeHeight  = 1e6
)

// clamped returns g with every field forced into its valid range.
func (g Synthetic) clamped() Synthetic {
	fix := func(v, lo, hi float64) float64 {
		if math.IsNaN(v) {
			return lo
		}
		return math.Min(math.Max(v, lo), hi)
	}
	g.PeakRPS = fix(g.PeakRPS, 0, math.MaxFloat64)
	g.TroughRatio = fix(g.TroughRatio, 0, 1)
	g.WeekendRatio = fix(g.WeekendRatio, g.TroughRatio, 1)
	g.BusyFrom = fix(g.BusyFrom, 0, 23)
	g.BusyUntil = fix(g.BusyUntil, g.BusyFrom+1, 24)
	g.LunchDip = fix(g.LunchDip, 0, 0.99)
	g.TrendPerWeek = fix(g.TrendPerWeek, -0.99, 100)
	g.Noise = fix(g.Noise, 0, 2)
	g.NoiseCorrelation = max(g.NoiseCorrelation, 0)
	g.FlashCrowdsPerWeek = fix(g.FlashCrowdsPerWeek, 0, 10_000)
	g.FlashCrowdFactor = fix(g.FlashCrowdFactor, 1, 1e6)
	g.FlashCrowdDuration = max(g.FlashCrowdDuration, 0)
	if g.BurstEvery > 0 {
		g.BurstEvery = max(g.BurstEvery, time.Minute)
		g.BurstJitter = min(max(g.BurstJitter, 0), (g.BurstEvery-time.Second)/2)
		room := g.BurstEvery - 2*g.BurstJitter
		g.BurstMax = min(max(g.BurstMax, time.Second), room)
		g.BurstMin = min(max(g.BurstMin, time.Second), g.BurstMax)
		g.BurstFactorMin = fix(g.BurstFactorMin, 1, 1e6)
		g.BurstFactorMax = fix(g.BurstFactorMax, g.BurstFactorMin, 1e6)
	} else {
		g.BurstEvery = 0
	}
	g = g.clampedSpikes().clampedOutages()
	if g.Location == nil {
		g.Location = time.UTC
	}
	return g
}

// clampedSpikes forces the spike fields into their ranges; a rate that is
// not positive turns spikes off.
func (g Synthetic) clampedSpikes() Synthetic {
	if !(g.SpikesPerDay > 0) {
		g.SpikesPerDay = 0
		return g
	}
	g.SpikesPerDay = min(g.SpikesPerDay, maxSpikesPerDay)
	g.SpikeMax = min(max(g.SpikeMax, time.Second), maxSpikeLength)
	g.SpikeMin = min(max(g.SpikeMin, time.Second), g.SpikeMax)
	fix := func(v, lo float64) float64 {
		if math.IsNaN(v) {
			return lo
		}
		return min(max(v, lo), maxSpikeHeight)
	}
	g.SpikeHeightMin = fix(g.SpikeHeightMin, 0)
	g.SpikeHeightMax = fix(g.SpikeHeightMax, g.SpikeHeightMin)
	return g
}

// clampedOutages forces the outage fields into their ranges: the window
// at least a second, the period a multiple of it, the kept part shorter
// than it; a period that is not positive turns outages off.
func (g Synthetic) clampedOutages() Synthetic {
	if g.OutageEvery <= 0 {
		g.OutageEvery = 0
		return g
	}
	g.OutageWindow = min(max(g.OutageWindow, time.Second), g.OutageEvery)
	g.OutageEvery -= g.OutageEvery % g.OutageWindow
	g.OutageKept = min(max(g.OutageKept, 0), g.OutageWindow-1)
	return g
}

// Streams of the generator's random numbers; separate streams keep the
// noise independent of how many flash crowds were drawn.
const (
	noiseStream  = 0x6e6f697365   // "noise"
	flashStream  = 0x666c617368   // "flash"
	burstStream  = 0x6275727374   // "burst"
	spikeStream  = 0x7370696b65   // "spike"
	outageStream = 0x6f7574616765 // "outage"
)

const week = 7 * 24 * time.Hour

// Generate returns n values of demand in requests/s, one per step from start.
// It returns an empty series when step ≤ 0 or n ≤ 0.
func (g Synthetic) Generate(start time.Time, step time.Duration, n int) Series {
	s := Series{Name: "synthetic", Start: start, Step: step}
	if step <= 0 || n <= 0 {
		return s
	}
	g = g.clamped()
	s.Values = make([]float64, n)
	noise := rand.New(rand.NewPCG(g.Seed, noiseStream))
	flash := rand.New(rand.NewPCG(g.Seed, flashStream))

	phi := 0.0
	if g.NoiseCorrelation > 0 {
		phi = math.Exp(-step.Seconds() / g.NoiseCorrelation.Seconds())
	}
	innovation := math.Sqrt(1 - phi*phi)
	z := noise.NormFloat64()

	crowds := flashCrowds{g: g, rng: flash, next: start}
	crowds.draw() // schedule the first one
	bursts := newBurstGrid(g, start)
	spikes := newSpikeTrain(g, start)
	outages := newOutageGrid(g, start)
	for i := range s.Values {
		t := s.Time(i)
		if i > 0 {
			z = phi*z + innovation*noise.NormFloat64()
		}
		weeks := t.Sub(start).Hours() / (7 * 24)
		v := (g.dayLevel(t) + g.PeakRPS*spikes.meanHeight(t, step)) * math.Pow(1+g.TrendPerWeek, weeks)
		v *= math.Exp(g.Noise*z - g.Noise*g.Noise/2)
		v *= crowds.meanFactor(t, step)
		v *= bursts.meanFactor(t, step)
		v *= outages.meanFactor(t, step)
		s.Values[i] = v
	}
	return s
}

// dayLevel is the noise-free, trend-free demand at t: the daily and weekly
// cycle.
func (g Synthetic) dayLevel(t time.Time) float64 {
	local := t.In(g.Location)
	h := float64(local.Hour()) + float64(local.Minute())/60 + float64(local.Second())/3600
	trough := g.TroughRatio * g.PeakRPS
	high := g.PeakRPS
	if g.restDay(local) {
		high = g.WeekendRatio * g.PeakRPS
	}
	// Logistic rise at BusyFrom and fall at BusyUntil, each ~2 h wide; the
	// product is ~0 at night and ~1 in working hours.
	const width = 0.5 // hours; 10%→90% takes 4.4·width ≈ 2.2 h
	busy := logistic((h-g.BusyFrom)/width) * logistic((g.BusyUntil-h)/width)
	lunch := 1 - g.LunchDip*math.Exp(-0.5*math.Pow((h-12.5)/0.75, 2))
	return trough + (high-trough)*busy*lunch
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// restDay reports whether the local date is a Saturday, a Sunday or a
// holiday.
func (g Synthetic) restDay(local time.Time) bool {
	if wd := local.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return true
	}
	y, m, d := local.Date()
	for _, h := range g.Holidays {
		hy, hm, hd := h.Date()
		if hy == y && hm == m && hd == d {
			return true
		}
	}
	return false
}

// flashCrowds draws flash crowds as a Poisson process, lazily in time order
// so that a longer series sees the same crowds as a shorter one.
type flashCrowds struct {
	g      Synthetic
	rng    *rand.Rand
	next   time.Time // start of the next crowd not yet active
	active []crowd
}

type crowd struct {
	start  time.Time
	height float64 // peak multiplier minus 1
}

// draw schedules the crowd after c.next.
func (c *flashCrowds) draw() {
	if c.g.FlashCrowdsPerWeek <= 0 || c.g.FlashCrowdDuration <= 0 || c.g.FlashCrowdFactor <= 1 {
		c.next = time.Time{}
		return
	}
	gapWeeks := c.rng.ExpFloat64() / c.g.FlashCrowdsPerWeek
	c.next = c.next.Add(time.Duration(gapWeeks * float64(week)))
}

// meanFactor returns the mean demand multiplier over [t, t+step), sampled
// finely enough that a crowd shorter than the step still shows (t must not
// decrease between calls).
func (c *flashCrowds) meanFactor(t time.Time, step time.Duration) float64 {
	fine := c.g.FlashCrowdDuration / 20
	k := 1
	if fine > 0 && step > fine {
		k = min(60, int((step+fine-1)/fine))
	}
	sum := 0.0
	for j := range k {
		sum += c.factor(t.Add(time.Duration((float64(j) + 0.5) * float64(step) / float64(k))))
	}
	return sum / float64(k)
}

// factor returns the demand multiplier at t (t must not decrease between
// calls).
func (c *flashCrowds) factor(t time.Time) float64 {
	for !c.next.IsZero() && !c.next.After(t) {
		height := (c.g.FlashCrowdFactor - 1) * (0.5 + 0.5*c.rng.Float64())
		c.active = append(c.active, crowd{start: c.next, height: height})
		c.draw()
	}
	dur := c.g.FlashCrowdDuration
	rise := dur / 10
	f := 1.0
	kept := c.active[:0]
	for _, cr := range c.active {
		u := t.Sub(cr.start)
		if u >= dur {
			continue // over
		}
		kept = append(kept, cr)
		if u < rise {
			f += cr.height * float64(u) / float64(rise)
		} else {
			f += cr.height * math.Exp(-3*float64(u-rise)/float64(dur-rise))
		}
	}
	c.active = kept
	return f
}

// burstGrid draws the bursts of one series lazily in time order, one per
// grid point, from its own random stream, so a longer series begins with
// the bursts of a shorter one.
type burstGrid struct {
	g    Synthetic
	rng  *rand.Rand
	next time.Time // the grid point of the next burst to draw
	// drawn holds the bursts that may still overlap a coming step.
	drawn []pulse
}

// pulse multiplies demand by factor over [start, end).
type pulse struct {
	start, end time.Time
	factor     float64
}

func newBurstGrid(g Synthetic, start time.Time) *burstGrid {
	b := &burstGrid{g: g, rng: rand.New(rand.NewPCG(g.Seed, burstStream))}
	if g.BurstEvery <= 0 {
		return b
	}
	// The first grid point whose burst may reach start: grid points are
	// local midnight plus multiples of BurstEvery.
	local := start.In(g.Location)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, g.Location)
	k := start.Sub(midnight) / g.BurstEvery
	b.next = midnight.Add(k*g.BurstEvery - g.BurstEvery)
	return b
}

// meanFactor returns the mean burst multiplier over [t, t+step): 1 plus,
// for each burst, (factor − 1) times the share of the step it covers. t
// must not decrease between calls.
func (b *burstGrid) meanFactor(t time.Time, step time.Duration) float64 {
	if b.g.BurstEvery <= 0 {
		return 1
	}
	end := t.Add(step)
	for b.next.Add(-b.g.BurstJitter).Before(end) {
		b.drawn = append(b.drawn, b.draw(b.next))
		b.next = b.next.Add(b.g.BurstEvery)
	}
	return pulsesMeanFactor(&b.drawn, t, step)
}

// pulsesMeanFactor returns the mean multiplier over [t, t+step) of the
// pulses in drawn: 1 plus, for each, (factor − 1) times the share of the
// step it covers. It drops from drawn the pulses over by t.
func pulsesMeanFactor(drawn *[]pulse, t time.Time, step time.Duration) float64 {
	end := t.Add(step)
	f := 1.0
	kept := (*drawn)[:0]
	for _, br := range *drawn {
		if !br.end.After(t) {
			continue // over
		}
		kept = append(kept, br)
		lo, hi := later(br.start, t), earlier(br.end, end)
		if hi.After(lo) {
			f += (br.factor - 1) * float64(hi.Sub(lo)) / float64(step)
		}
	}
	*drawn = kept
	return f
}

// draw makes the burst of grid point at.
func (b *burstGrid) draw(at time.Time) pulse {
	g := b.g
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*b.rng.Float64() }
	offset := time.Duration(uniform(-1, 1) * float64(g.BurstJitter))
	length := time.Duration(uniform(float64(g.BurstMin), float64(g.BurstMax)))
	start := at.Add(offset)
	return pulse{start: start, end: start.Add(length), factor: uniform(g.BurstFactorMin, g.BurstFactorMax)}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// spikeTrain draws the spikes of one series lazily in time order from the
// series' start, on its own random stream, so a longer series begins with
// the spikes of a shorter one. A spike is a pulse of factor 1 + height.
type spikeTrain struct {
	g    Synthetic
	rng  *rand.Rand
	next time.Time // start of the next spike not yet drawn
	// drawn holds the spikes that may still overlap a coming step.
	drawn []pulse
}

func newSpikeTrain(g Synthetic, start time.Time) *spikeTrain {
	s := &spikeTrain{g: g, rng: rand.New(rand.NewPCG(g.Seed, spikeStream)), next: start}
	if g.SpikesPerDay > 0 {
		s.next = s.next.Add(s.gap())
	}
	return s
}

// gap draws the time from the series' start or a spike's end to the next
// spike's start.
func (s *spikeTrain) gap() time.Duration {
	const maxGapDays = 100_000 // within time.Duration's range
	days := s.rng.ExpFloat64() / s.g.SpikesPerDay
	return time.Duration(min(days, maxGapDays) * float64(24*time.Hour))
}

// meanHeight returns the mean spike height over [t, t+step), as a
// fraction of PeakRPS: for each spike, its height times the share of the
// step it covers. t must not decrease between calls.
func (s *spikeTrain) meanHeight(t time.Time, step time.Duration) float64 {
	if s.g.SpikesPerDay <= 0 {
		return 0
	}
	g := s.g
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*s.rng.Float64() }
	for end := t.Add(step); s.next.Before(end); {
		length := time.Duration(uniform(float64(g.SpikeMin), float64(g.SpikeMax)))
		height := uniform(g.SpikeHeightMin, g.SpikeHeightMax)
		s.drawn = append(s.drawn, pulse{start: s.next, end: s.next.Add(length), factor: 1 + height})
		s.next = s.next.Add(length + s.gap())
	}
	return pulsesMeanFactor(&s.drawn, t, step) - 1
}

// outageGrid draws the outages of one series lazily in time order, one
// per period of OutageEvery on the store's grid, on its own random stream,
// so a longer series begins with the outages of a shorter one.
type outageGrid struct {
	g    Synthetic
	rng  *rand.Rand
	next time.Time // start of the period whose outage is drawn next
	// drawn holds the outages that may still overlap a coming step.
	drawn []pulse
}

func newOutageGrid(g Synthetic, start time.Time) *outageGrid {
	o := &outageGrid{g: g, rng: rand.New(rand.NewPCG(g.Seed, outageStream))}
	if g.OutageEvery > 0 {
		o.next = store.WindowStart(start, g.OutageEvery)
	}
	return o
}

// meanFactor returns the mean outage multiplier over [t, t+step): 1 minus
// the share of the step an outage covers. t must not decrease between
// calls.
func (o *outageGrid) meanFactor(t time.Time, step time.Duration) float64 {
	g := o.g
	if g.OutageEvery <= 0 {
		return 1
	}
	windows := int(g.OutageEvery / g.OutageWindow)
	for end := t.Add(step); o.next.Before(end); o.next = o.next.Add(g.OutageEvery) {
		window := o.next.Add(time.Duration(o.rng.IntN(windows)) * g.OutageWindow)
		o.drawn = append(o.drawn, pulse{start: window.Add(g.OutageKept), end: window.Add(g.OutageWindow), factor: 0})
	}
	return pulsesMeanFactor(&o.drawn, t, step)
}
