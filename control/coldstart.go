package control

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prewarm/prewarm/model"
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
//   - each forecast's band is at least as wide as the recent demand's
//     variation (coldBand), so the page never shows a zero-width band and
//     the plan sized at its upper bound allows for it;
//   - the peak of the demand seen since the cold start began stands
//     beside the plan and the reactive rules (the warm-up term), so the
//     pool is never sized below live demand because of a forecast nobody
//     has checked;
//   - the gate's reason says so, and which terms size the pool.

// coldMinShare is the narrowest half-width of a cold start's band, as a
// share of the point forecast: the band of a history without variation.
const coldMinShare = 0.1

// coldBand returns f with its interval widened, where narrower, to
// mean ± max(z·sd, coldMinShare·mean): sd is the standard deviation of
// the last horizon steps of history (the recent level's variation), z the
// normal quantile of f's level. The slices are copied: refits may be
// shared between controllers.
func coldBand(f model.Forecast, history []float64) model.Forecast {
	if f.Horizon() == 0 || !(f.Level > 0 && f.Level < 1) {
		return f
	}
	recent := history[max(0, len(history)-f.Horizon()):]
	spread := zScore((1+f.Level)/2) * stdDev(recent)
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
func widenCold(r *Refit, history []float64) {
	if r.Forecast.Forecast.Horizon() > 0 {
		r.Forecast.Forecast = coldBand(r.Forecast.Forecast, history)
	}
	if r.ProfileForecast.Forecast.Horizon() > 0 {
		r.ProfileForecast.Forecast = coldBand(r.ProfileForecast.Forecast, history)
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
			"until the next refit scores them, its band is widened to the recent demand's variation and " + terms
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
	return why + ". Cold start: until then " + joinWords(terms) + " size the pool, and the bands are widened to the recent demand's variation" + shown
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
