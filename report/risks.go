package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/model/stats"
	"github.com/prewarm/prewarm/planner"
)

// Risk is one thing that can make the plan or the advice wrong, in plain
// words, with the rule that raised it.
type Risk struct {
	ID string `json:"id"`
	// Severity is high (act before buying), warning (read before
	// buying) or note.
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	// Rule states the threshold; Value is what was measured against
	// Threshold.
	Rule      string     `json:"rule"`
	Value     float64    `json:"value"`
	Threshold float64    `json:"threshold"`
	At        *time.Time `json:"at,omitempty"`
}

// Severities, most urgent first.
const (
	SeverityHigh    = "high"
	SeverityWarning = "warning"
	SeverityNote    = "note"
)

// The risk rules' thresholds.
const (
	// RuleNaiveRatio: the model loses to seasonal naive when its holdout
	// MASE exceeds seasonal naive's times this.
	RuleNaiveRatio = 1.0
	// RuleNaiveMargin: a model whose holdout MASE is within this share
	// below seasonal naive's (a ratio from 0.95 to 1) adds little to it,
	// a note; further below, it beats seasonal naive.
	RuleNaiveMargin = 0.05
	// RuleWideBand and RuleVeryWideBand: the 80% band is too wide to plan
	// from when its median width over the horizon, (U80 − L80) / mean,
	// exceeds these (1: the band is as wide as the forecast itself).
	RuleWideBand     = 1.0
	RuleVeryWideBand = 2.0
	// RuleMinCoverage80 and RuleMinCoverage95: the bands are too narrow
	// to trust when fewer than these shares of the holdout's values fell
	// inside the 80% or the 95% band.
	RuleMinCoverage80 = 0.6
	RuleMinCoverage95 = 0.9
	// RuleTrendDays is the history the daily peaks' trend is fitted on,
	// RuleTrendMinDays the fewest days it needs, and RuleTrendMinGrowth
	// the least growth per week (share of the mean daily peak) counted as
	// a trend.
	RuleTrendDays      = 28
	RuleTrendMinDays   = 7
	RuleTrendMinGrowth = 0.01
	// RuleTrendLookahead is how far past the horizon a trend reaching max
	// is still mentioned (as a note).
	RuleTrendLookahead = 90 * 24 * time.Hour
)

// trend is the least-squares line through the daily peaks of the recent
// history (day 0 starting at day0), requests/s per day.
type trend struct {
	line     stats.Line
	day0     time.Time
	days     int
	meanPeak float64
}

// trend fits the daily peaks of the last RuleTrendDays days.
func (r *run) trend() trend {
	day := 24 * time.Hour
	days := min(RuleTrendDays, int(r.end.Sub(r.g.start)/day))
	t := trend{day0: r.end.Add(-time.Duration(days) * day)}
	var x, y []float64
	for d := range days {
		from := t.day0.Add(time.Duration(d) * day)
		peak := math.NaN()
		for i := max(r.g.index(from), 0); i < min(r.g.index(from.Add(day)), len(r.g.values)); i++ {
			if v := r.g.values[i]; !math.IsNaN(v) && !(v <= peak) {
				peak = v
			}
		}
		if !math.IsNaN(peak) {
			x, y = append(x, float64(d)+0.5), append(y, peak)
			t.meanPeak += peak
		}
	}
	t.days = len(y)
	if t.days < RuleTrendMinDays {
		return trend{days: t.days}
	}
	t.meanPeak /= float64(t.days)
	t.line = stats.FitLine(x, y)
	return t
}

// reaches returns when the trend's peak first needs more than max
// instances (ok false when it never does: no growth worth the name).
func (t trend) reaches(c planner.Config) (time.Time, bool) {
	if t.days < RuleTrendMinDays || !(t.line.Slope*7 > RuleTrendMinGrowth*t.meanPeak) {
		return time.Time{}, false
	}
	limit := rateFor(c, c.Fleet.MaxInstances+1)
	if math.IsInf(limit, 1) {
		return time.Time{}, false
	}
	d := (limit - t.line.Intercept) / t.line.Slope
	return t.day0.Add(time.Duration(d * float64(24*time.Hour))), true
}

// assess applies every risk rule, most severe first.
func assess(c planner.Config, rep *Report, tr trend) []Risk {
	var out []Risk
	for _, rule := range []func(planner.Config, *Report, trend) (Risk, bool){
		riskShortHistory, riskGate, riskLosesToNaive, riskAboveMax, riskTrend, riskWideBands, riskNarrowBands, riskBacktestSLO,
		riskPlaceholderPrices,
	} {
		if r, ok := rule(c, rep, tr); ok {
			out = append(out, r)
		}
	}
	rank := map[string]int{SeverityHigh: 0, SeverityWarning: 1, SeverityNote: 2}
	slices.SortStableFunc(out, func(a, b Risk) int { return rank[a.Severity] - rank[b.Severity] })
	return out
}

func riskShortHistory(c planner.Config, rep *Report, _ trend) (Risk, bool) {
	days := rep.History.Days
	seasons := float64(c.Gating.MinSeasons)
	r := Risk{ID: "short-history", Value: days, Rule: fmt.Sprintf("history shorter than %g days (gate.min_seasons days) is high, than %g weeks a warning", seasons, seasons)}
	switch {
	case days < seasons:
		r.Severity, r.Threshold = SeverityHigh, seasons
		r.Title = "History too short to trust a forecast"
		r.Detail = fmt.Sprintf("Only %.1f days of demand are recorded; the model needs %g full days before the controller trusts it. "+
			"Until then the plan holds the peak seen so far and reacts; the forecast, the bands and the purchase advice are guesses. "+
			"Re-run this report after %g weeks of data.", days, seasons, seasons)
	case days < 7*seasons:
		r.Severity, r.Threshold = SeverityWarning, 7*seasons
		r.Title = "No weekly cycle learned yet"
		r.Detail = fmt.Sprintf("%.1f days of demand: enough for the daily cycle, not for %g weeks. Weekends and weekdays are "+
			"forecast alike, so a quiet weekend or a busy Monday can surprise the plan.", days, seasons)
	default:
		return r, false
	}
	return r, true
}

func riskGate(_ planner.Config, rep *Report, _ trend) (Risk, bool) {
	g := rep.Demand.Gate
	if g.Level == planner.GateModel || rep.Demand.WarmingUp {
		return Risk{}, false
	}
	r := Risk{ID: "gate-stepped-back", Severity: SeverityHigh, Rule: "the controller's gate does not trust the model (planner.Gate)"}
	r.Title = "The controller does not trust the model"
	switch g.Level {
	case planner.GateProfile:
		r.Detail = "The model's recent forecasts were worse than seasonal naive, so the plan follows the seasonal profile (the mean of the last weeks) instead: " + g.Reason + "."
	default:
		r.Detail = "Neither the model nor the seasonal profile beat seasonal naive recently, so the plan is the reactive rules and floors alone, and the forecast shown is not followed: " + g.Reason + "."
	}
	return r, true
}

func riskLosesToNaive(_ planner.Config, rep *Report, _ trend) (Risk, bool) {
	a := rep.Demand.Accuracy
	if a == nil {
		return Risk{}, false
	}
	r := Risk{Value: a.MASERatio, Threshold: RuleNaiveRatio, Detail: a.VersusNaive(),
		Rule: fmt.Sprintf("holdout MASE above %g × seasonal naive's (warning), or within %.0f%% below it (note)", RuleNaiveRatio, 100*RuleNaiveMargin)}
	switch a.versus() {
	case naiveWins:
		r.ID, r.Severity, r.Title = "loses-to-naive", SeverityWarning, "The model lost to seasonal naive on the last days"
		r.Detail += " Its forecast is no better a guide than that, and the bands and the advice built on it are less sure than they look."
	case naiveTies:
		r.ID, r.Severity, r.Title = "no-better-than-naive", SeverityNote, "The model is no better than seasonal naive"
		r.Threshold = 1 - RuleNaiveMargin
	default:
		return Risk{}, false
	}
	return r, true
}

// placeholderPrices reports whether the on-demand, reserved and spot
// prices are all still the defaults (planner.DefaultConfig's).
func placeholderPrices(p planner.Prices) bool {
	d := planner.DefaultConfig().Prices
	return p.OnDemandPerHour == d.OnDemandPerHour && p.ReservedPerHour == d.ReservedPerHour && p.SpotPerHour == d.SpotPerHour
}

// riskPlaceholderPrices flags prices that are still the defaults: every
// cost and the purchase advice are then placeholders, not the bill.
func riskPlaceholderPrices(c planner.Config, rep *Report, _ trend) (Risk, bool) {
	if !placeholderPrices(c.Prices) {
		return Risk{}, false
	}
	shown := rep.Settings.Prices
	return Risk{ID: "placeholder-prices", Severity: SeverityWarning, Rule: "on-demand, reserved and spot prices all at their defaults",
		Title: "The prices are placeholders",
		Detail: fmt.Sprintf("Every cost here (marked %s) uses the default prices, %s an instance-hour on demand, %s reserved and %s on spot: "+
			"they are examples, not your bill. Set the pool's prices.on_demand_per_hour, prices.reserved_per_hour, prices.spot_per_hour "+
			"and prices.currency (or --price, --reserved-price, --spot-price and --currency) before reading the costs or the purchase advice.",
			PlaceholderMark, shown.perHour(c.Prices.OnDemandPerHour), shown.perHour(c.Prices.ReservedPerHour), shown.perHour(c.Prices.SpotPerHour))}, true
}

func riskAboveMax(c planner.Config, rep *Report, _ trend) (Risk, bool) {
	cp := rep.Capacity
	r := Risk{ID: "above-max", Threshold: float64(cp.Max), Rule: "the need of the forecast's mean (high) or of its 95% band (warning) above max"}
	switch {
	case cp.MeanPeak > cp.Max:
		r.Severity, r.Value = SeverityHigh, float64(cp.MeanPeak)
		r.Title = "Expected demand needs more than max"
		r.Detail = fmt.Sprintf("At its busiest the forecast's mean needs %s instances; the pool's max is %d. Requests will queue "+
			"at the peak unless max is raised.", countAbove(cp.MeanPeak, cp.Max), cp.Max)
	case cp.SLOPeak > cp.Max:
		r.Severity, r.Value = SeverityWarning, float64(cp.SLOPeak)
		t := cp.SLOPeakAt
		r.At = &t
		r.Title = "The forecast's 95% band goes above max"
		r.Detail = fmt.Sprintf("If demand comes in at the top of the 95%% band (around %s) the SLO needs %s instances; max is %d. "+
			"Raise max by %d to keep the SLO in that case.", rep.when(t), countAbove(cp.SLOPeak, cp.Max), cp.Max, cp.SLOPeak-cp.Max)
	default:
		return r, false
	}
	return r, true
}

// countAbove prints a need counted up to capacityOf's cap.
func countAbove(n, limit int) string {
	if n > 10*max(limit, 1) {
		return fmt.Sprintf("more than %d", 10*limit)
	}
	return fmt.Sprint(n)
}

func riskTrend(c planner.Config, rep *Report, tr trend) (Risk, bool) {
	when, ok := tr.reaches(c)
	if !ok {
		return Risk{}, false
	}
	end := rep.Plan.End
	r := Risk{ID: "trend-exhausts-max", At: &when, Value: tr.line.Slope * 7 / tr.meanPeak, Threshold: RuleTrendMinGrowth,
		Rule: fmt.Sprintf("the line through the last %d daily peaks grows over %.0f%% a week and needs more than max within the horizon (high) or %v after it (note)",
			RuleTrendDays, 100*RuleTrendMinGrowth, RuleTrendLookahead)}
	growth := fmt.Sprintf("The daily peak has grown %.1f%% a week over the last %d days", 100*r.Value, tr.days)
	switch {
	case !when.After(end):
		r.Severity = SeverityHigh
		r.Title = "The demand's growth reaches max within the horizon"
		r.Detail = fmt.Sprintf("%s; at that pace its peak needs more than max (%d) from about %s. Raise max (and the quota behind it) before then.",
			growth, c.Fleet.MaxInstances, rep.when(when))
	case when.Before(end.Add(RuleTrendLookahead)):
		r.Severity = SeverityNote
		r.Title = "The demand's growth reaches max in the coming months"
		r.Detail = fmt.Sprintf("%s; at that pace its peak needs more than max (%d) from about %s, %.0f days after this plan ends.",
			growth, c.Fleet.MaxInstances, rep.when(when), when.Sub(end).Hours()/24)
	default:
		return r, false
	}
	return r, true
}

// bandWidth is the median over the horizon of (U80 − L80) / mean, over
// the steps with a positive mean.
func bandWidth(fc Forecast) float64 {
	var w []float64
	for _, p := range fc.Points {
		if p.Mean > 0 {
			w = append(w, (p.Upper80-p.Lower80)/p.Mean)
		}
	}
	if len(w) == 0 {
		return math.NaN()
	}
	slices.Sort(w)
	return stats.Quantile(w, 0.5)
}

func riskWideBands(_ planner.Config, rep *Report, _ trend) (Risk, bool) {
	w := bandWidth(rep.Forecast)
	r := Risk{ID: "wide-bands", Value: w, Threshold: RuleWideBand,
		Rule: fmt.Sprintf("median width of the 80%% band over the mean above %g (warning) or %g (high)", RuleWideBand, RuleVeryWideBand)}
	switch {
	case w > RuleVeryWideBand:
		r.Severity, r.Threshold = SeverityHigh, RuleVeryWideBand
	case w > RuleWideBand:
		r.Severity = SeverityWarning
	default:
		return r, false
	}
	r.Title = "The forecast is too uncertain to plan from"
	r.Detail = fmt.Sprintf("The 80%% band is typically %.0f%% as wide as the forecast itself: the demand could be half or double "+
		"what is expected. Commit only to the reserved baseline advised (it is set on the need at the low end of the band), "+
		"keep the rest on demand, and re-run the report weekly.", 100*w)
	return r, true
}

func riskNarrowBands(_ planner.Config, rep *Report, _ trend) (Risk, bool) {
	a := rep.Demand.Accuracy
	if a == nil || !a.bandsTooNarrow() {
		return Risk{}, false
	}
	r := Risk{ID: "narrow-bands", Severity: SeverityWarning, Value: a.Model.Coverage95, Threshold: RuleMinCoverage95,
		Rule: fmt.Sprintf("fewer than %.0f%% of the holdout's values inside the 95%% band, or %.0f%% inside the 80%% band",
			100*RuleMinCoverage95, 100*RuleMinCoverage80),
		Title: "The bands were too narrow on the last days",
		Detail: a.BandCoverage() + fmt.Sprintf(" The forecast is surer of itself than it should be, and so are the busy share "+
			"behind the reserved advice (%s) and the peak at the top of the 95%% band (%s). Treat that peak as a low estimate: %s; "+
			"keep the burst above the reserved baseline on demand or spot, where it can follow the demand.",
			pct(rep.Reserved.BusyShare, 0), countOf(rep.Capacity.SLOPeak, "instance"), rep.Capacity.HeadroomWords())}
	if a.Model.Coverage95 >= RuleMinCoverage95 {
		r.Value, r.Threshold = a.Model.Coverage80, RuleMinCoverage80
	}
	return r, true
}

func riskBacktestSLO(c planner.Config, rep *Report, _ trend) (Risk, bool) {
	if rep.Backtest == nil {
		return Risk{}, false
	}
	h, ok := rep.Backtest.Policy("hybrid")
	if !ok || !(h.SLOAttainment < c.SLO.Quantile) {
		return Risk{}, false
	}
	return Risk{ID: "backtest-slo", Severity: SeverityWarning, Value: h.SLOAttainment, Threshold: c.SLO.Quantile,
		Rule:  "the hybrid policy's SLO attainment in the backtest below slo_target",
		Title: "Over the last weeks the plan would have missed the SLO",
		Detail: fmt.Sprintf("Replayed over the last %.0f days, the hybrid policy served %s of requests within %s; the target is %s. "+
			"The GPU-hours above are what that attainment costs; more headroom (a higher target_utilisation margin or forecast quantile) costs more.",
			rep.Backtest.Days, attainment(h.SLOAttainment), spanWords(Duration(c.SLO.Latency), true), attainment(c.SLO.Quantile))}, true
}

// when formats a time for sentences, in the report's zone.
func (rep *Report) when(t time.Time) string {
	loc := rep.loc
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}
