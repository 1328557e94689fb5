package control

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/stats"
	"github.com/prewarm/prewarm/planner"
)

// A cold start is a refit whose forecasts nothing has checked yet: the
// history is shorter than the model needs (Refit.WarmingUp), or it is long
// enough, as after 'forecaster import' or a restart without the state
// file, but none of the model's forecasts has been scored against the
// demand that came (Refit.Cold). A model fitted on such history can be
// right about its shape and wrong about its level (another pool's export,
// counts read as rates), and its own interval is only as wide as the
// history's noise, which may be none. Until the gate has measured it:
//
//   - each forecast's band is at least as wide as the history's spread
//     and the recent demand's variation (coldBand, coldSpread), so the
//     page never shows a zero-width band and the plan sized at its upper
//     bound allows for it;
//   - InCharge says which rule sizes the pool until when;
//   - the peak of the demand seen since the cold start began stands
//     beside the plan and the reactive rules (the warm-up term), so the
//     pool is never sized below live demand because of a forecast nobody
//     has checked;
//   - the gate's reason says so, and which terms size the pool.

// coldMinShare is the narrowest half-width of a cold start's band, as a
// share of the point forecast: the band of a history without variation.
const coldMinShare = 0.1

// coldBand returns f with its interval widened, where narrower, to
// mean ± max(coldSpread, coldMinShare·mean). The slices are copied:
// refits may be shared between controllers.
func coldBand(f model.Forecast, history []float64, season int) model.Forecast {
	if f.Horizon() == 0 || !(f.Level > 0 && f.Level < 1) {
		return f
	}
	spread := coldSpread(history, f.Horizon(), season, f.Level)
	lower, upper := slices.Clone(f.Lower), slices.Clone(f.Upper)
	lower = append(lower, make([]float64, max(0, f.Horizon()-len(lower)))...)
	upper = append(upper, make([]float64, max(0, f.Horizon()-len(upper)))...)
	for i, m := range f.Mean {
		if math.IsNaN(m) {
			continue
		}
		half := math.Max(spread, coldMinShare*math.Abs(m))
		if lo := m - half; math.IsNaN(lower[i]) || lo < lower[i] {
			lower[i] = lo
		}
		if hi := m + half; math.IsNaN(upper[i]) || hi > upper[i] {
			upper[i] = hi
		}
		if m >= 0 {
			lower[i] = math.Max(lower[i], 0) // demand is never negative
		}
	}
	f.Lower, f.Upper = lower, upper
	return f
}

// coldSpread is the half-width of a cold start's band at level: the
// largest of z·sd of the last horizon steps (the recent level's
// variation) and the spread of the history there is. With enough
// season-ago differences (y_t − y_{t−season}, at least a quarter season
// and a horizon of them) that is the level quantile of their absolute
// values: how far a seasonal-naive guess missed on this history. With
// fewer, the shape of a season is not known yet, and it is the level
// quantile of the observations' distances from their median: the band
// holds that share of the demand seen so far.
func coldSpread(history []float64, horizon, season int, level float64) float64 {
	recent := history[max(0, len(history)-horizon):]
	spread := zScore((1+level)/2) * stdDev(recent)
	var diffs []float64
	for i := season; season > 0 && i < len(history); i++ {
		if d := history[i] - history[i-season]; !math.IsNaN(d) && !math.IsInf(d, 0) {
			diffs = append(diffs, math.Abs(d))
		}
	}
	if len(diffs) >= max(horizon, season/4, 2) {
		return math.Max(spread, quantileOf(diffs, level))
	}
	finite := finiteValues(history)
	mid := quantileOf(slices.Clone(finite), 0.5)
	dev := make([]float64, len(finite))
	for i, v := range finite {
		dev[i] = math.Abs(v - mid)
	}
	return math.Max(spread, quantileOf(dev, level))
}

// finiteValues are x's finite values, in order.
func finiteValues(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// quantileOf is the q quantile of x (sorted in place, R's type 7); 0 for
// an empty x.
func quantileOf(x []float64, q float64) float64 {
	if len(x) == 0 {
		return 0
	}
	slices.Sort(x)
	return stats.Quantile(x, q)
}

// stdDev is the standard deviation of x's finite values (0 with fewer
// than two).
func stdDev(x []float64) float64 {
	var n, sum, sq float64
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		n++
		sum += v
		sq += v * v
	}
	if n < 2 {
		return 0
	}
	mean := sum / n
	return math.Sqrt(math.Max(sq/n-mean*mean, 0) * n / (n - 1))
}

// ColdStart reports whether the refit in force is a cold start: none yet,
// a history shorter than the model needs, or a model none of whose
// forecasts has been scored against the demand that came.
func (c *Controller) ColdStart() bool { return c.warmingUp() || c.last.Cold }

// widenCold widens r's forecasts' bands for a cold start (coldBand).
func (c *Controller) widenCold(r *Refit, history []float64) {
	history = trimLeadingGaps(history)
	if r.Forecast.Forecast.Horizon() > 0 {
		r.Forecast.Forecast = coldBand(r.Forecast.Forecast, history, c.season())
	}
	if r.ProfileForecast.Forecast.Horizon() > 0 {
		r.ProfileForecast.Forecast = coldBand(r.ProfileForecast.Forecast, history, c.season())
	}
}

// Prefixes of planner.Gate's reasons that a cold start rewords.
const (
	reactiveOnlyPrefix = "forecast stepped back, reactive only: "
	steppedBackPrefix  = "forecast stepped back: "
)

// coldReason is the gate's reason for a cold-start refit r, with what
// sizes the pool until the cold start ends.
func (c *Controller) coldReason(r Refit) string {
	peak := !c.plan.Bounds.NoWarmUpPeak
	why := r.Gate.Reason
	switch {
	case r.Cold:
		terms := "its plan and the reactive rules size the pool"
		if peak {
			terms = "the peak of live demand stands beside its plan and the reactive rules"
		}
		return why + ". Cold start: none of the model's forecasts has been scored against live demand yet; " +
			"until the next refit scores them, its band is widened to the history's spread and " + terms
	case !r.WarmingUp:
		return why
	}
	terms := []string{}
	switch c.followedAt(r.Gate) {
	case planner.GateModel:
		terms = append(terms, "the model's plan")
	case planner.GateProfile:
		terms = append(terms, "the seasonal profile's plan")
	}
	terms = append(terms, "the reactive rules")
	if peak {
		terms = append(terms, "the peak seen so far")
	}
	shown := "; the model's forecast is shown for information"
	if c.followedAt(r.Gate) == planner.GateModel {
		shown = ""
	}
	if rest, ok := strings.CutPrefix(why, reactiveOnlyPrefix); ok {
		why = steppedBackPrefix + rest
	}
	return why + ". Cold start: until then " + joinWords(terms) + " size the pool, and the bands are widened to the history's spread" + shown
}

// joinWords joins terms as a sentence lists them: "a, b and c".
func joinWords(terms []string) string {
	if len(terms) < 2 {
		return strings.Join(terms, "")
	}
	return strings.Join(terms[:len(terms)-1], ", ") + " and " + terms[len(terms)-1]
}

// coldPeakReason is the warm-up term's reason: the peak so far (with the
// history's while warming up, of live demand in a cold start) and the
// instances it needs.
func coldPeakReason(cold bool, peak float64, n int) string {
	rate := strconv.FormatFloat(peak, 'g', 3, 64) + " req/s, needs " + strconv.Itoa(n)
	if cold {
		return "cold start: the peak of live demand so far, " + rate + ", until the model's forecasts are scored"
	}
	return "warm-up: the peak so far, " + rate
}

// Rules in charge of a pool's size (Charge.Rule).
const (
	// ChargeColdStart: a cold start (ColdStart): the reactive rules, the
	// peak seen so far and whichever plan the gate allows size the pool,
	// and the forecast shown is an unchecked guess.
	ChargeColdStart = "cold-start"
	// ChargeModel, ChargeProfile: the model's or the seasonal profile's
	// plan, beside the reactive rules.
	ChargeModel   = "model"
	ChargeProfile = "profile"
	// ChargeReactive: the reactive rules alone.
	ChargeReactive = "reactive"
)

// Charge says which rule sizes a pool, for its status: Rule is one of the
// Charge constants, Reason says so in a sentence, with until when.
type Charge struct {
	Rule   string
	Reason string
}

// InCharge says which rule sizes the pool: a cold start's until the
// model has the history the gate needs and its first forecasts are
// scored, else the level the last decision followed.
func (c *Controller) InCharge() Charge {
	r := c.last
	need := planner.SpanText(time.Duration(c.plan.Gating.MinSeasons*c.season()) * c.settings.Step)
	guess := "no forecast yet"
	if r.Model != "" {
		guess = "the forecast shown is a guess (" + r.Model + "), its band the spread of the history there is"
	}
	switch {
	case r.At.IsZero():
		return Charge{ChargeColdStart, "cold start: no demand history yet; the reactive rules are in charge until the model has " + need + " of history"}
	case r.WarmingUp:
		terms := []string{"the reactive rules"}
		if c.followedAt(r.Gate) == planner.GateProfile {
			terms = append(terms, "the seasonal profile's plan")
		}
		if !c.plan.Bounds.NoWarmUpPeak {
			terms = append(terms, "the peak seen so far")
		}
		return Charge{ChargeColdStart, "cold start: " + joinWords(terms) + " are in charge until the model has " + need + " of history; " + guess}
	case r.Cold:
		plan := "no plan"
		switch c.followedAt(r.Gate) {
		case planner.GateModel:
			plan = "the model's plan"
		case planner.GateProfile:
			plan = "the seasonal profile's plan"
		}
		beside := "the reactive rules"
		if !c.plan.Bounds.NoWarmUpPeak {
			beside += " and the peak of live demand"
		}
		return Charge{ChargeColdStart, "cold start: " + plan + " is followed beside " + beside +
			" until the next refit scores the model's first forecasts against live demand"}
	}
	level := c.level
	if level == "" || level == planner.GateWarmUp {
		level = c.followed()
	}
	switch level {
	case planner.GateModel:
		return Charge{ChargeModel, "the model's plan is in charge, beside the reactive rules: " + r.Gate.Reason}
	case planner.GateProfile:
		return Charge{ChargeProfile, "the seasonal profile's plan is in charge, beside the reactive rules: " + r.Gate.Reason}
	}
	return Charge{ChargeReactive, "the reactive rules are in charge: " + r.Gate.Reason}
}
