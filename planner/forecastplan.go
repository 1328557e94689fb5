package planner

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/prewarm/prewarm/model"
)

// DemandForecast is a forecast of the request rate (requests/s) on a time
// grid: Forecast.Mean[i] and its interval describe [Start+i·Step,
// Start+(i+1)·Step).
type DemandForecast struct {
	Start    time.Time
	Step     time.Duration
	Forecast model.Forecast
}

// End returns the end of the last forecast interval.
func (d DemandForecast) End() time.Time {
	return d.Start.Add(time.Duration(d.Forecast.Horizon()) * d.Step)
}

// Quantile is the demand quantile the forecast's upper bound stands for:
// (1+Level)/2.
func (d DemandForecast) Quantile() float64 { return (1 + d.Forecast.Level) / 2 }

// rate returns the rate the plan sizes interval i for: the upper bound of
// the interval, or the mean when the forecaster gave no interval. NaN and
// negative values count as zero.
func (d DemandForecast) rate(i int) float64 {
	f := d.Forecast
	v := math.NaN()
	if i < len(f.Upper) {
		v = f.Upper[i]
	}
	if math.IsNaN(v) && i < len(f.Mean) {
		v = f.Mean[i]
	}
	if !(v > 0) {
		return 0
	}
	return v
}

// Needs returns, for every forecast interval, the instances its rate needs
// (InstancesFor of the upper bound), before min/max.
func (c *Config) Needs(d DemandForecast) []int {
	needs := make([]int, d.Forecast.Horizon())
	for i := range needs {
		needs[i] = c.InstancesFor(d.rate(i))
	}
	return needs
}

// ErrEmptyForecast is returned by ForecastPlan for a forecast with no steps
// or a step that is not positive.
var ErrEmptyForecast = errors.New("planner: forecast has no steps")

// ForecastPlan turns a demand forecast into a pre-warm schedule starting at
// now. The desired count at time t is the largest need of the forecast
// intervals that overlap [t, t+lead] (Fleet.Lead: the boot delay, or the
// warm start with a warm tier): an instance asked for at t is ready at
// t+lead, so capacity is asked for one lead before the interval that needs
// it, and it is not released while any interval within the next lead still
// needs it (scale-in stabilisation). Each need is sized at the forecast's
// upper bound (the ForecastQuantile when the forecaster was asked for
// ForecastLevel) and bounded by min/max. With a warm tier each step's Warm
// keeps stopped what the intervals within the next Fleet.WarmLead will
// run beyond Desired, so that every rise of the plan starts warm.
//
// The schedule is exact up to d.End() − BootDelay; after that it only sees
// the intervals left, so callers refit before then.
func ForecastPlan(now time.Time, d DemandForecast, c Config) (Schedule, error) {
	h := d.Forecast.Horizon()
	if h == 0 || d.Step <= 0 {
		return nil, ErrEmptyForecast
	}
	needs := c.Needs(d)
	lead, warmLead := c.Fleet.Lead(), c.Fleet.Lead()
	if c.Fleet.WarmTier() {
		warmLead = c.Fleet.WarmLead()
	}
	// Desired (and Warm) change only where an interval enters a look-ahead
	// window (its start minus the lead) or leaves it (its end).
	times := []time.Time{now}
	for i := 0; i <= h; i++ {
		s := d.Start.Add(time.Duration(i) * d.Step)
		for _, t := range []time.Time{s.Add(-lead), s, s.Add(-warmLead)} {
			if t.After(now) && t.Before(d.End()) {
				times = append(times, t)
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	sched := make(Schedule, 0, len(times))
	for k, t := range times {
		if k > 0 && t.Equal(times[k-1]) {
			continue
		}
		sched = append(sched, c.forecastStep(t, d, needs))
	}
	return sched.Compact(), nil
}

// forecastStep sizes the schedule step at t from the intervals overlapping
// [t, t+lead], and with a warm tier its Warm from those overlapping
// [t, t+WarmLead].
func (c *Config) forecastStep(t time.Time, d DemandForecast, needs []int) Step {
	lead := c.Fleet.Lead()
	best, at := largestNeed(t, lead, d, needs)
	if at < 0 {
		n, bound := c.clamp(0)
		return Step{At: t, Desired: n, Reason: fmt.Sprintf("%s %d (no forecast for %s)", bound, n, t.Format(reasonTime))}
	}
	atTime := d.Start.Add(time.Duration(at) * d.Step)
	reason := fmt.Sprintf("forecast %.3g req/s for %s (its %sth percentile) needs %d", d.rate(at), atTime.Format(reasonTime), pct(d.Quantile()), best)
	if atTime.After(t) {
		reason += fmt.Sprintf(" (pre-warm %s)", shortDuration(lead))
	}
	n, bound := c.clamp(best)
	if bound != "" {
		reason = fmt.Sprintf("%s %d (%s)", bound, n, reason)
	}
	st := Step{At: t, Desired: n, Reason: reason}
	if c.Fleet.WarmTier() {
		cold, _ := largestNeed(t, c.Fleet.WarmLead(), d, needs)
		st.Warm = c.WarmFor(n, cold)
	}
	return st
}

// largestNeed is the largest of the needs of the intervals overlapping
// [t, t+lead] and the index of the first that has it (−1: none does).
func largestNeed(t time.Time, lead time.Duration, d DemandForecast, needs []int) (best, at int) {
	first := int(math.Floor(float64(t.Sub(d.Start)) / float64(d.Step)))
	last := int(math.Floor(float64(t.Add(lead).Sub(d.Start)) / float64(d.Step)))
	best, at = -1, -1
	for i := max(first, 0); i <= min(last, len(needs)-1); i++ {
		if needs[i] > best {
			best, at = needs[i], i
		}
	}
	return best, at
}

// WarmFor is the warm tier's size for a fleet asked for desired that may
// need cover instances: what cover needs beyond desired, within what max
// leaves above desired (0 without a warm tier).
func (c *Config) WarmFor(desired, cover int) int {
	if !c.Fleet.WarmTier() {
		return 0
	}
	return max(min(cover, c.Fleet.MaxInstances)-desired, 0)
}

// pct formats a quantile as a percentile label: 0.95 → "95", 0.975 → "97.5".
// reasonTime is how a reason names a time: "Mon 2 Mar 09:00", as the
// status page does.
const reasonTime = "Mon 2 Jan 15:04"

func pct(q float64) string {
	return fmt.Sprintf("%g", math.Round(q*1000)/10)
}

// shortDuration formats d without zero units: 10m, 1h30m, 45s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
