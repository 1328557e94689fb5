package seasonal

import (
	"math"
	"sort"
	"time"

	"github.com/prewarm/prewarm/model/stats"
)

// DetectOptions tunes Detect. The zero value is a sensible default.
type DetectOptions struct {
	// MaxPeriod is the longest period considered; 0 means half the
	// series, since a cycle must be seen at least twice to be believed.
	MaxPeriod int
	// MinACF is the autocorrelation a period must reach to count as
	// seasonal; 0 means max(0.2, 4/√n), which white noise of any length
	// practically never reaches.
	MinACF float64
	// Margin is how far the autocorrelation at a longer period must rise
	// above its neighbours one shorter period away (e.g. lag 168 above
	// lags 144 and 192) for the longer period to count as its own cycle
	// rather than a multiple of the shorter one; 0 means 0.03.
	Margin float64
	// Snap lists periods the caller expects from the clock, e.g. the
	// steps in a day and in a week (1440 and 10080 for per-minute data).
	// A detected period within 2% of one of them is taken to be it, since
	// a broad autocorrelation peak pins the period down only roughly.
	Snap []int
}

// minProminence is how far the ACF must have dipped below a peak at some
// shorter lag for the peak to mark a cycle.
const minProminence = 0.1

// Detect returns the seasonal periods of x, shortest first, or nil when x
// shows none (white noise, a trend, too short a history).
//
// It works on the autocorrelation function of the linearly detrended
// series. The strongest local peak of the ACF is a period or a multiple of
// one; its divisors that are themselves strong ACF peaks are the shorter
// cycles inside it (the day inside the week), and its multiples whose
// autocorrelation stands out from the lags one period either side are the
// longer cycles around it (the week around the day: r(168) above r(144)
// and r(192)). A longer period must stand out that way to be kept, so a
// purely daily series reports [24], not [24 48]. On hourly request traces
// this finds [24 168]; on half-hourly ones [48 336].
func Detect(x []float64, opts DetectOptions) []int {
	n := countFinite(x)
	maxLag := len(x) / 2
	if opts.MaxPeriod > 0 && opts.MaxPeriod < maxLag {
		maxLag = opts.MaxPeriod
	}
	if n < 8 || maxLag < 2 {
		return nil
	}
	minACF := opts.MinACF
	if minACF <= 0 {
		minACF = math.Max(0.2, 4/math.Sqrt(float64(n)))
	}
	margin := opts.Margin
	if margin <= 0 {
		margin = 0.03
	}
	// One lag beyond maxLag so a peak at maxLag can be recognised.
	r := ACF(detrend(x), maxLag+1)
	if r == nil {
		return nil
	}
	// A peak is a local maximum at or above minACF that the ACF climbed
	// back to after dipping at least minProminence below it at a shorter
	// lag, so the slow decay of a smooth series' ACF over its first few
	// lags does not count.
	lowest := make([]float64, len(r))
	lowest[0] = r[0]
	for k := 1; k < len(r); k++ {
		lowest[k] = math.Min(lowest[k-1], r[k])
	}
	isPeak := func(k int) bool {
		return k >= 2 && k+1 < len(r) && r[k] >= r[k-1] && r[k] >= r[k+1] && r[k] >= minACF &&
			r[k]-lowest[k] >= minProminence
	}
	best := 0
	for k := 2; k <= maxLag; k++ {
		if isPeak(k) && (best == 0 || r[k] > r[best]) {
			best = k
		}
	}
	if best == 0 {
		return nil
	}
	snapped := false
	if s := snapPeak(best, opts.Snap); s != best && s <= maxLag {
		best, snapped = s, true
	}
	// Walk down through strong divisors: week → day → ...
	chain := []int{best}
	for p := best; ; {
		d := strongestDivisor(p, isPeak, r)
		if d == 0 {
			break
		}
		chain = append(chain, d)
		p = d
	}
	sort.Ints(chain)
	// The shortest period's multiples pin it down better than its own
	// peak does; the longer ones follow it.
	if !snapped || len(chain) > 1 {
		if d := refinePeak(r, chain[0], maxLag); d != chain[0] {
			for i := len(chain) - 1; i >= 0; i-- {
				chain[i] = int(math.Round(float64(chain[i])/float64(chain[0]))) * d
			}
		}
	}
	// Keep a longer period only if it stands out from its neighbours; one
	// that the refinement moved past maxLag cannot be checked and is left
	// out.
	periods := []int{chain[0]}
	for _, p := range chain[1:] {
		if p <= maxLag && standsOut(r, p, periods[len(periods)-1], margin) {
			periods = append(periods, p)
		}
	}
	// Walk up through multiples that stand out: day → week.
	for {
		base := periods[len(periods)-1]
		next := 0
		for k := 2; k*base <= maxLag; k++ {
			if isPeak(k*base) && standsOut(r, k*base, base, margin) {
				next = k * base
				break
			}
		}
		if next == 0 {
			break
		}
		periods = append(periods, next)
	}
	return periods
}

// snapPeak moves lag k to the closest of snap within 2% of it (at least
// one lag), if any. A broad ACF peak, such as a daily cycle sampled every
// minute over a few days, cannot fix the period to better than a percent
// or so: its top is flat while the estimate is noisy.
func snapPeak(k int, snap []int) int {
	best, bestD := k, math.MaxInt
	for _, c := range snap {
		d := c - k
		if d < 0 {
			d = -d
		}
		if d <= max(1, c/50) && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// refinePeak returns the lag within 2% of k (at least one lag) whose
// multiples k, 2k, 3k, … up to maxLag have the largest summed
// autocorrelation. The top of a broad ACF peak is flat and noisy (a day
// of 169 five-minute steps can peak at 168), but the multiples of the
// wrong lag drift further off the peaks of the true one with each cycle.
func refinePeak(r []float64, k, maxLag int) int {
	best, bestSum := k, math.Inf(-1)
	d := max(1, k/50)
	for c := k - d; c <= k+d; c++ {
		if c < 2 || c > maxLag {
			continue
		}
		sum := 0.0
		for m := c; m <= maxLag; m += c {
			sum += r[m]
		}
		if sum > bestSum || sum == bestSum && c == k {
			best, bestSum = c, sum
		}
	}
	return best
}

// WeekOf returns the week of a series whose day is day steps long: the
// multiple k·day, k from 5 to 7 days (a working week to a calendar one),
// whose autocorrelation stands out most above that one day either side
// (by more than 2/√n, twice the noise of such a difference), or 7·day
// when none does; 0 when x holds fewer than two cycles of
// 8 days. Detect reports a week only when its autocorrelation stands out
// by a margin; WeekOf is for when a week must be chosen anyway.
func WeekOf(x []float64, day int) int {
	if day < 1 || len(x) < 2*8*day {
		return 0
	}
	r := ACF(detrend(x), 8*day)
	if r == nil {
		return 0
	}
	// The lift must beat the noise of a difference of two sample
	// autocorrelations, about √2/√n.
	best, bestLift := 7, 2/math.Sqrt(float64(len(x)))
	for k := 5; k <= 7; k++ {
		lift := r[k*day] - math.Max(r[(k-1)*day], r[(k+1)*day])
		if lift > bestLift {
			best, bestLift = k, lift
		}
	}
	return best * day
}

// standsOut reports whether the autocorrelation at lag p exceeds that one
// base period either side by margin (the far side only when it was
// computed).
func standsOut(r []float64, p, base int, margin float64) bool {
	if p >= len(r) || p-base < 0 {
		return false // not computed: nothing to stand out from
	}
	neighbour := r[p-base]
	if p+base < len(r) {
		neighbour = math.Max(neighbour, r[p+base])
	}
	return r[p] >= neighbour+margin
}

// strongestDivisor returns the divisor d ≥ 2 of p (to within 1%, at
// least one lag: a week of 844 lags holds days of 169) with the highest
// autocorrelation among those that are ACF peaks, or 0.
func strongestDivisor(p int, isPeak func(int) bool, r []float64) int {
	best := 0
	tol := max(1, p/100)
	for j := 2; j <= p/2; j++ {
		for _, d := range []int{p/j - 1, p / j, p/j + 1, p/j + 2} {
			if d < 2 || d >= p || abs(j*d-p) > tol {
				continue
			}
			if isPeak(d) && (best == 0 || r[d] > r[best]) {
				best = d
			}
		}
	}
	return best
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// detrend returns x minus its least-squares line, missing values (NaN,
// ±Inf) as NaN.
func detrend(x []float64) []float64 {
	line := stats.FitLine(nil, x)
	out := make([]float64, len(x))
	for t, v := range x {
		out[t] = math.NaN()
		if finite(v) {
			out[t] = v - line.At(float64(t))
		}
	}
	return out
}

func countFinite(x []float64) int {
	n := 0
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

// ClockPeriods returns the steps in a day and in a week of a series
// sampled every step: the periods demand that follows the clock has
// whatever detection finds, {24, 168} for hourly data, {1440, 10080} per
// minute. A step that does not divide the day is rounded when that is
// within 1% (a day of 57-second samples is 1515.8 steps: 1516, the cycle
// drifting a step a day); otherwise, and for steps of half a day or more
// or an unknown (0) step, it returns nil.
func ClockPeriods(step time.Duration) []int {
	const day = 24 * time.Hour
	const daysPerWeek = 7
	if step <= 0 || step >= day/2 {
		return nil
	}
	d := float64(day) / float64(step)
	k := int(math.Round(d))
	if math.Abs(d-float64(k)) > 0.01*d {
		return nil
	}
	return []int{k, daysPerWeek * k}
}
