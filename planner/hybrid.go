package planner

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Combine is the hybrid policy: the largest of the terms (forecast plan,
// reactive rules, schedule floor, ...) bounded by min/max, with the reason of
// the term that won. On a tie the earlier term wins, so list the terms in
// the order their reasons are most useful. Terms with Desired 0 and no
// reason are ignored.
func (c *Config) Combine(at time.Time, terms ...Step) Step {
	win := Step{At: at, Desired: -1}
	for _, t := range terms {
		if t.Desired == 0 && t.Reason == "" {
			continue
		}
		if t.Desired > win.Desired {
			win = Step{At: at, Desired: t.Desired, Reason: t.Reason}
		}
	}
	if win.Desired < 0 {
		win = Step{At: at, Reason: "no term"}
	}
	n, bound := c.clamp(win.Desired)
	if bound != "" {
		win.Reason = fmt.Sprintf("%s %d (%s)", bound, n, win.Reason)
	}
	win.Desired = n
	return win
}

// Gate levels: which forecast the hybrid policy uses.
const (
	// GateModel: the forecasting model is trusted.
	GateModel = "model"
	// GateProfile: the model stepped back to the seasonal profile.
	GateProfile = "profile"
	// GateReactive: no forecast term; the reactive rules (and schedule
	// floors) decide alone.
	GateReactive = "reactive"
	// GateWarmUp is not a gate verdict but what a controller follows before
	// a season of history exists: no forecast yet, so the need of the peak
	// seen so far (see Bounds.NoWarmUpPeak) beside the reactive rules.
	GateWarmUp = "warm-up"
)

// GateInput is the evidence Gate weighs. Errors are the mean absolute error
// of each method's forecasts over the same recent window (Gating.Window),
// NaN while there is nothing to measure yet.
type GateInput struct {
	// HistorySteps is how many forecast steps of history exist.
	HistorySteps int
	// Season is the shortest seasonal period, in forecast steps.
	Season int
	// ModelError, ProfileError and NaiveError are the recent MAEs of the
	// model, the seasonal profile and seasonal naive.
	ModelError, ProfileError, NaiveError float64
	// Step is the forecast step, so that a reason can say how long the
	// history is and how long it must be (0: in steps only).
	Step time.Duration
}

// GateResult says which forecast to use and why.
type GateResult struct {
	Level  string
	Reason string
}

// Gate decides whether the forecast term is trusted. The model needs
// Gating.MinSeasons seasons of history and a recent error no worse than
// seasonal naive's (times Gating.Tolerance); failing that the seasonal
// profile stands in if it has one season of history and is no worse than
// seasonal naive; failing that the forecast term steps back entirely and
// the reactive rules decide. An error that is not measured yet (NaN) does
// not count against a method.
func (c *Config) Gate(in GateInput) GateResult {
	g := c.Gating
	season := max(in.Season, 1)
	beats := func(e float64) bool {
		return math.IsNaN(e) || math.IsNaN(in.NaiveError) || e <= g.Tolerance*in.NaiveError
	}
	var why string
	switch {
	case in.HistorySteps < g.MinSeasons*season:
		why = fmt.Sprintf("history %d steps < %d seasons of %d", in.HistorySteps, g.MinSeasons, season)
		if in.Step > 0 {
			why = fmt.Sprintf("history %s < the %s the model needs (%d seasons of %s); it is used as soon as the store holds it, at once after 'forecaster import'",
				SpanText(time.Duration(in.HistorySteps)*in.Step), SpanText(time.Duration(g.MinSeasons*season)*in.Step), g.MinSeasons,
				SpanText(time.Duration(season)*in.Step))
		}
	case !beats(in.ModelError):
		why = "model " + againstNaive(in.ModelError, in.NaiveError, g.Tolerance)
	default:
		reason := "model trusted"
		if !math.IsNaN(in.ModelError) && !math.IsNaN(in.NaiveError) {
			reason = "model trusted: " + againstNaive(in.ModelError, in.NaiveError, g.Tolerance)
		}
		return GateResult{Level: GateModel, Reason: reason}
	}
	switch {
	case in.HistorySteps < season && in.Step > 0:
		why += fmt.Sprintf("; the seasonal profile needs one season (%s)", SpanText(time.Duration(season)*in.Step))
	case in.HistorySteps < season:
		why += fmt.Sprintf("; history %d steps < 1 season of %d", in.HistorySteps, season)
	case !beats(in.ProfileError):
		why += "; profile " + againstNaive(in.ProfileError, in.NaiveError, g.Tolerance)
	default:
		return GateResult{Level: GateProfile, Reason: "stepped back to seasonal profile: " + why}
	}
	return GateResult{Level: GateReactive, Reason: "forecast stepped back, reactive only: " + why}
}

// againstNaive words a method's error against seasonal naive's as the
// gate judges it, tolerance included, so that the figures agree with the
// verdict: "MAE 10 at most seasonal naive's 12", "MAE 14 within 1.5×
// seasonal naive's 10", "MAE 16 above 1.5× seasonal naive's 10".
func againstNaive(mae, naive, tolerance float64) string {
	times := ""
	if tolerance != 1 {
		times = strconv.FormatFloat(tolerance, 'g', 3, 64) + "× "
	}
	switch {
	case mae <= naive:
		return fmt.Sprintf("MAE %.3g at most seasonal naive's %.3g", mae, naive)
	case mae <= tolerance*naive:
		return fmt.Sprintf("MAE %.3g within %sseasonal naive's %.3g", mae, times, naive)
	}
	return fmt.Sprintf("MAE %.3g above %sseasonal naive's %.3g", mae, times, naive)
}

// SpanText is a span as a reason shows it: whole days as "2d", else as
// time.Duration prints it without its zero units ("36h", "1h30m").
func SpanText(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return strconv.Itoa(int(d/day)) + "d"
	}
	return shortDuration(d)
}

// Usage is what a schedule costs to run.
type Usage struct {
	// GPUHours is instance-hours asked for (Σ Desired·duration).
	GPUHours float64
	// ReservedHours and BurstHours split the paid hours: the committed
	// baseline (paid whether used or not) and the on-demand burst above it.
	ReservedHours, BurstHours float64
	// ReservedCost, BurstCost and Cost are in the prices' currency.
	ReservedCost, BurstCost, Cost float64
}

// UsageOf returns the usage of running s from its first step until end,
// billed per second: the first Prices.ReservedInstances at the reserved
// price all the time, the rest on demand while desired.
func (p Prices) UsageOf(s Schedule, end time.Time) Usage {
	var u Usage
	for i, st := range s {
		next := end
		if i+1 < len(s) {
			next = s[i+1].At
		}
		if next.After(end) {
			next = end
		}
		h := next.Sub(st.At).Hours()
		if h <= 0 {
			continue
		}
		u.GPUHours += float64(st.Desired) * h
		u.ReservedHours += float64(p.ReservedInstances) * h
		u.BurstHours += float64(max(st.Desired-p.ReservedInstances, 0)) * h
	}
	u.ReservedCost = u.ReservedHours * p.ReservedPerHour
	u.BurstCost = u.BurstHours * p.OnDemandPerHour
	u.Cost = u.ReservedCost + u.BurstCost
	return u
}
