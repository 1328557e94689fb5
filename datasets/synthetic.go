package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Synthetic describes the demand of an inference service, in requests/s, for
// [Synthetic.Generate]. Demand at time t is
//
//	rate(t) = day(t) · trend(t) · noise(t) · flash(t)
//
// where day(t) is Trough·PeakRPS at night, rising to PeakRPS during working
// hours on weekdays (WeekendRatio·PeakRPS on weekends and holidays) with a
// lunch dip; trend(t) = (1+TrendPerWeek)^(weeks since start); noise(t) =
// exp(σ·z(t) − σ²/2) with z an AR(1) process of unit variance whose
// correlation decays over NoiseCorrelation; and flash(t) multiplies demand by
// up to FlashCrowdFactor for FlashCrowdDuration at random times (a Poisson
// process with FlashCrowdsPerWeek events per week) and burst(t), when
// BurstEvery is set, multiplies it by BurstFactor for a short while on a
// jittered cron-like grid (see BurstySynthetic).
//
// Start from [DefaultSynthetic] and change fields. The same configuration,
// start, step and length always give the same series, and a longer series
// begins with the shorter one.
type Synthetic struct {
	// Seed makes the noise and the flash crowds reproducible.
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

// Validate reports the first field outside its range. Generate clamps such
// fields instead of failing.
func (g Synthetic) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	check(finite(g.PeakRPS) && g.PeakRPS >= 0, "synthetic: PeakRPS %v must be ≥ 0", g.PeakRPS)
	check(g.TroughRatio >= 0 && g.TroughRatio <= 1, "synthetic: TroughRatio %v must be in [0, 1]", g.TroughRatio)
	check(g.WeekendRatio >= g.TroughRatio && g.WeekendRatio <= 1, "synthetic: WeekendRatio %v must be in [TroughRatio, 1]", g.WeekendRatio)
	check(g.BusyFrom >= 0 && g.BusyFrom < g.BusyUntil && g.BusyUntil <= 24, "synthetic: busy hours %v-%v must satisfy 0 ≤ BusyFrom < BusyUntil ≤ 24", g.BusyFrom, g.BusyUntil)
	check(g.LunchDip >= 0 && g.LunchDip < 1, "synthetic: LunchDip %v must be in [0, 1)", g.LunchDip)
	check(finite(g.TrendPerWeek) && g.TrendPerWeek > -1, "synthetic: TrendPerWeek %v must be > -1", g.TrendPerWeek)
	check(finite(g.Noise) && g.Noise >= 0 && g.Noise <= 2, "synthetic: Noise %v must be in [0, 2]", g.Noise)
	check(g.NoiseCorrelation >= 0, "synthetic: NoiseCorrelation %v must be ≥ 0", g.NoiseCorrelation)
	check(finite(g.FlashCrowdsPerWeek) && g.FlashCrowdsPerWeek >= 0, "synthetic: FlashCrowdsPerWeek %v must be ≥ 0", g.FlashCrowdsPerWeek)
	check(finite(g.FlashCrowdFactor) && (g.FlashCrowdsPerWeek == 0 || g.FlashCrowdFactor >= 1), "synthetic: FlashCrowdFactor %v must be ≥ 1", g.FlashCrowdFactor)
	check(g.FlashCrowdDuration >= 0, "synthetic: FlashCrowdDuration %v must be ≥ 0", g.FlashCrowdDuration)
	if g.BurstEvery != 0 {
		check(g.BurstEvery > 0, "synthetic: BurstEvery %v must be ≥ 0", g.BurstEvery)
		check(g.BurstJitter >= 0 && 2*g.BurstJitter < g.BurstEvery, "synthetic: BurstJitter %v must be in [0, BurstEvery/2)", g.BurstJitter)
		check(g.BurstMin > 0 && g.BurstMin <= g.BurstMax && g.BurstMax <= g.BurstEvery-2*g.BurstJitter,
			"synthetic: burst length %v-%v must satisfy 0 < BurstMin ≤ BurstMax ≤ BurstEvery − 2·BurstJitter", g.BurstMin, g.BurstMax)
		check(finite(g.BurstFactorMin) && g.BurstFactorMin >= 1 && g.BurstFactorMin <= g.BurstFactorMax && finite(g.BurstFactorMax),
			"synthetic: burst factors %v-%v must satisfy 1 ≤ BurstFactorMin ≤ BurstFactorMax", g.BurstFactorMin, g.BurstFactorMax)
	}
	return errors.Join(errs...)
}

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
	if g.Location == nil {
		g.Location = time.UTC
	}
	return g
}

// Streams of the generator's random numbers; separate streams keep the
// noise independent of how many flash crowds were drawn.
const (
	noiseStream = 0x6e6f697365 // "noise"
	flashStream = 0x666c617368 // "flash"
	burstStream = 0x6275727374 // "burst"
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
	for i := range s.Values {
		t := s.Time(i)
		if i > 0 {
			z = phi*z + innovation*noise.NormFloat64()
		}
		weeks := t.Sub(start).Hours() / (7 * 24)
		v := g.dayLevel(t) * math.Pow(1+g.TrendPerWeek, weeks)
		v *= math.Exp(g.Noise*z - g.Noise*g.Noise/2)
		v *= crowds.meanFactor(t, step)
		v *= bursts.meanFactor(t, step)
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
	drawn []burst
}

type burst struct {
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
	f := 1.0
	kept := b.drawn[:0]
	for _, br := range b.drawn {
		if !br.end.After(t) {
			continue // over
		}
		kept = append(kept, br)
		lo, hi := later(br.start, t), earlier(br.end, end)
		if hi.After(lo) {
			f += (br.factor - 1) * float64(hi.Sub(lo)) / float64(step)
		}
	}
	b.drawn = kept
	return f
}

// draw makes the burst of grid point at.
func (b *burstGrid) draw(at time.Time) burst {
	g := b.g
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*b.rng.Float64() }
	offset := time.Duration(uniform(-1, 1) * float64(g.BurstJitter))
	length := time.Duration(uniform(float64(g.BurstMin), float64(g.BurstMax)))
	start := at.Add(offset)
	return burst{start: start, end: start.Add(length), factor: uniform(g.BurstFactorMin, g.BurstFactorMax)}
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
