package control

import (
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
	"gonum.org/v1/gonum/stat/distuv"
)

// planFor turns one forecast of refit r (method 0: the model, 1: the
// profile) into a capacity plan: each step's upper bound is the point
// forecast plus the calibrated quantile of the controller's recent errors
// at the step's slot of the day (or the forecaster's own interval,
// rescaled and widened, while the slot has too few), capped at the need
// of the recent peak, then planner.ForecastPlan pre-warms it.
func (c *Controller) planFor(r Refit, d planner.DemandForecast, method int) planner.Schedule {
	f := d.Forecast
	q := r.Quantile
	bounded := planner.DemandForecast{Start: d.Start, Step: d.Step}
	bounded.Forecast.Method, bounded.Forecast.Level = f.Method, 2*q-1
	bounded.Forecast.Mean = f.Mean
	bounded.Forecast.Upper = make([]float64, len(f.Mean))
	capRate := math.Inf(1)
	if r.Peak > 0 {
		capRate = r.Peak * c.plan.Bounds.Headroom()
	}
	for i := range f.Mean {
		at := d.Start.Add(time.Duration(i) * d.Step)
		bounded.Forecast.Upper[i] = math.Min(math.Max(c.bound(at, f, i, method, q), 0), capRate)
	}
	plan, err := planner.ForecastPlan(d.Start, bounded, c.plan)
	if err != nil { // a forecast with no steps: nothing to plan
		return nil
	}
	return plan
}

// bound is the q-quantile of the demand of step i's observations: the
// point forecast plus its error (width), with the variation of an
// observation's demand around its step's mean when the demand varies
// inside a step (withinStep): as a ratio learned for the step's slot of
// the day, or, with Bounds.AdditiveBursts, as a height of its own learned
// over every slot, in units of the recent mean demand.
func (c *Controller) bound(at time.Time, f model.Forecast, i, method int, q float64) float64 {
	m, b := f.Mean[i], c.plan.Bounds
	additive := b.AdditiveBursts
	var r ratios
	var ok bool
	if additive {
		r, ok = c.within.additive()
		ok = ok && c.meanDemand > 0
	} else {
		r, ok = c.within.pool(c.slot(at), b.Spread())
	}
	if !ok || r.flat() {
		return m + c.width(at, f, i, method, q)
	}
	if !b.FromInterval {
		if pool := c.slotErrors(at, method); len(pool) >= b.Enough() {
			if additive {
				return additiveQuantile(m, pool, r, c.meanDemand, q)
			}
			return mixtureQuantile(m, pool, r, q)
		}
	}
	w := c.width(at, f, i, method, q)
	if additive {
		return m + w + c.meanDemand*math.Max(r.quantile(q)-1, 0)
	}
	return math.Max(m+w, 0) * r.quantile(q)
}

// slot is at's position in the shortest season.
func (c *Controller) slot(at time.Time) int {
	season := int64(c.season())
	k := c.step(at)
	return int(((k % season) + season) % season)
}

// width is how far above the point forecast the bound of step i (at at)
// lies: the q-quantile of the recent errors of the same slot of the day,
// or, with fewer than Bounds.Enough() of them, the forecaster's own
// interval width rescaled from Settings.IntervalLevel to q and widened by
// Bounds.Widening().
func (c *Controller) width(at time.Time, f model.Forecast, i, method int, q float64) float64 {
	b := c.plan.Bounds
	if !b.FromInterval {
		if pool := c.slotErrors(at, method); len(pool) >= b.Enough() {
			return conformalQuantile(pool, q)
		}
	}
	if i >= len(f.Upper) || math.IsNaN(f.Upper[i]) || math.IsNaN(f.Mean[i]) {
		return 0
	}
	w := math.Max(f.Upper[i]-f.Mean[i], 0) * zScore(q) / zScore((1+c.settings.IntervalLevel)/2)
	if !b.FromInterval {
		w *= b.Widening()
	}
	return w
}

// slotErrors returns, sorted, the remembered errors of one method at the
// same position of the shortest season as at (the time of day), and
// Bounds.Spread() steps either side, over Bounds.Window().
// The pool is shared with later calls: callers must not change it.
func (c *Controller) slotErrors(at time.Time, method int) []float64 {
	season := int64(c.season())
	spread := int64(c.plan.Bounds.Spread())
	cycles := int64(c.plan.Bounds.Window()/c.settings.Step) / season
	at0 := c.step(at)
	key := slotPoolKey{step: at0, method: method, season: season, spread: spread, cycles: cycles}
	if pool, ok := c.slotPools.get(key, c.errors.changes); ok {
		return pool
	}
	pool := make([]float64, 0, cycles*(2*spread+1))
	for k := int64(1); k <= cycles; k++ {
		base := at0 - k*season
		for j := -spread; j <= spread; j++ {
			if e, ok := c.errors.get(base + j); ok && !math.IsNaN(e[method]) {
				pool = append(pool, e[method])
			}
		}
	}
	slices.Sort(pool)
	c.slotPools.put(key, pool)
	return pool
}

// slotPoolKey names one pool of slotErrors: the step, the method and the
// bounds settings that shape it (shadows may differ in them).
type slotPoolKey struct {
	step           int64
	method         int
	season, spread int64
	cycles         int64
}

// slotPoolCache holds the pools of slotErrors made since the errors log
// last changed; it empties itself when the log moves on, so it holds at
// most the pools of one refit's horizon.
type slotPoolCache struct {
	changes uint64 // the errors log's change count the pools were made at
	pools   map[slotPoolKey][]float64
}

// get returns the pool of key made at the errors log's change count
// changes, if there is one; a different count empties the cache.
func (s *slotPoolCache) get(key slotPoolKey, changes uint64) ([]float64, bool) {
	if s.pools == nil || s.changes != changes {
		clear(s.pools)
		s.changes = changes
		return nil, false
	}
	pool, ok := s.pools[key]
	return pool, ok
}

// put keeps pool under key at the count get last saw.
func (s *slotPoolCache) put(key slotPoolKey, pool []float64) {
	if s.pools == nil {
		s.pools = make(map[slotPoolKey][]float64)
	}
	s.pools[key] = pool
}

// conformalQuantile returns the q-quantile of the sorted sample x as split
// conformal prediction takes it, the ⌈(n+1)·q⌉-th smallest value, so a new
// error falls at or below it with probability at least q. Beyond the
// sample's reach ((n+1)·q > n) the upper tail is taken to be exponential,
// with the scale the sample's own median-to-90% spread gives
// (Q(0.9) − Q(0.5) = s·ln 5 for an exponential): the bound keeps growing
// with q instead of stopping at the largest error seen.
func conformalQuantile(x []float64, q float64) float64 {
	n := len(x)
	k := int(math.Ceil(float64(n+1)*q)) - 1
	if k < n {
		return x[max(k, 0)]
	}
	at := func(p float64) float64 { return x[min(n-1, max(0, int(math.Ceil(float64(n+1)*p))-1))] }
	scale := math.Max(at(0.9)-at(0.5), 0) / math.Log(5)
	return x[n-1] + scale*math.Log(1/(float64(n+1)*(1-q)))
}

// zScore is the standard normal quantile.
func zScore(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// calibrate moves the forecast quantile after one observed interval: the
// share of its requests that waited past the SLO on the instances that
// were ready (planner.Config.MissShare of the observed demand on the
// fewest instances the pool was asked for over the boot delay before), set
// against the target and weighted by the interval's demand over its recent
// mean (planner.Calibration). Only intervals served under a plan of the
// refit in force count: the quantile sizes plans.
func (c *Controller) calibrate(obs planner.Observation, miss float64) {
	cal := c.plan.Calibration
	if !cal.On || obs.Span <= 0 {
		return
	}
	if _, ok := c.PlanStep(obs.At.Add(-obs.Span)); !ok || c.meanDemand <= 0 {
		return
	}
	tail := 1 - c.plan.CalibrationTarget()
	w := obs.DemandRPS / c.meanDemand
	c.setMemory(c.logTail() - cal.StepRate()*obs.Span.Minutes()*w*(miss-tail)/tail)
}

// setMemory sets the calibration's memory to lnTail, held within the
// calibration's range and its carry past the top, and the plans'
// quantile from it: the memory may run Carry past the top; the plans'
// quantile may not.
func (c *Controller) setMemory(lnTail float64) {
	cal := c.plan.Calibration
	qlo, qhi := cal.Range()
	lo, hi := math.Log(1-qhi), math.Log(1-qlo)
	c.lnTail = math.Min(math.Max(lnTail, lo-cal.CarryLog()), hi)
	c.quantile = 1 - math.Exp(math.Max(c.lnTail, lo))
}

// trackMean moves the recent mean demand that weighs the calibration's
// intervals (a day's exponential average).
func (c *Controller) trackMean(obs planner.Observation) {
	if obs.Span <= 0 {
		return
	}
	alpha := -math.Expm1(-obs.Span.Seconds() / (24 * time.Hour).Seconds())
	if c.meanDemand <= 0 {
		c.meanDemand = obs.DemandRPS
	} else {
		c.meanDemand += alpha * (obs.DemandRPS - c.meanDemand)
	}
}

// estimateMiss is the share of obs's requests that waited past the SLO
// on the instances that were ready (planner.Config.MissShareOver on the
// fewest the pool was asked for over the boot delay before, the backlog
// carried from the last observation); ok is false without records that
// old. It also counts the estimate in Estimates.
func (c *Controller) estimateMiss(obs planner.Observation) (float64, bool) {
	if obs.Span <= 0 {
		return 0, false
	}
	ready, ok := c.readyEstimate(obs.At.Add(-obs.Span), obs.At)
	if !ok {
		return 0, false
	}
	miss, backlog := c.plan.MissShareOver(obs.DemandRPS, ready, obs.Span, c.backlog)
	c.backlog = backlog
	arrived := obs.DemandRPS * obs.Span.Seconds()
	c.estimated.Arrived += arrived
	c.estimated.Late += miss * arrived
	return miss, true
}

// CalibrationMemory is the calibration's memory ln(1 − q), which may run
// past the top quantile (planner.Calibration.Carry).
func (c *Controller) CalibrationMemory() float64 { return c.logTail() }

// Forgive sets the calibration's memory back to lnTail (taken by
// CalibrationMemory) where misses have since pushed it stricter: those
// misses were spent on purpose, and the headroom that would buy them back
// is not wanted. A memory as loose as lnTail or looser is left alone, as
// is an lnTail out of range; lnTail is held within the calibration's
// range and its carry past the top.
func (c *Controller) Forgive(lnTail float64) {
	if !(lnTail <= 0) || lnTail <= c.logTail() {
		return
	}
	c.setMemory(lnTail)
}

// logTail is the calibration's memory ln(1 − q): the quantile's, unless
// the memory has run past MaxQuantile (planner.Calibration.Carry).
func (c *Controller) logTail() float64 {
	if c.lnTail < 0 && c.lnTail <= math.Log(1-c.quantile) {
		return c.lnTail
	}
	return math.Log(1 - c.quantile)
}
