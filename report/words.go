package report

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The report's sentences: each judgement is written by one function from
// one number, so the summary, the sections and the risks cannot disagree.

// versus is how the model did against seasonal naive on the holdout.
type versus int

const (
	modelWins versus = iota // MASE ratio below 1 − RuleNaiveMargin
	naiveTies               // within RuleNaiveMargin below 1, or 1
	naiveWins               // above RuleNaiveRatio
)

// versus reads the verdict off the MASE ratio alone.
func (a *Accuracy) versus() versus {
	switch {
	case a.MASERatio > RuleNaiveRatio:
		return naiveWins
	case a.MASERatio >= RuleNaiveRatio-RuleNaiveMargin:
		return naiveTies
	}
	return modelWins
}

// VersusNaive is the one statement of how the model compared with
// seasonal naive on the holdout, from the ratio of their MASE.
func (a *Accuracy) VersusNaive() string {
	if a == nil {
		return ""
	}
	naive := "seasonal naive, which repeats the demand " + spanWords(a.NaivePeriod, true) + " earlier"
	scores := fmt.Sprintf("MASE %.3f against %.3f, a ratio of %.2f", a.Model.MASE, a.Naive.MASE, a.MASERatio)
	lead := fmt.Sprintf("In %s of %s each, made from the history before them, ", countOf(a.Origins, "holdout forecast"), spanWords(a.Horizon, true))
	switch a.versus() {
	case naiveWins:
		return lead + fmt.Sprintf("the model's error was %.0f%% larger than that of %s (%s): the model lost.",
			100*(a.MASERatio-1), naive, scores)
	case naiveTies:
		return lead + fmt.Sprintf("the model's error was within %.0f%% of that of %s (%s): at this horizon the model adds little to it.",
			100*RuleNaiveMargin, naive, scores)
	}
	return lead + fmt.Sprintf("the model's error was %.0f%% smaller than that of %s (%s): the model beats it.",
		100*(1-a.MASERatio), naive, scores)
}

// bandsTooNarrow applies the coverage rule to the holdout.
func (a *Accuracy) bandsTooNarrow() bool {
	return a.Model.Coverage95 < RuleMinCoverage95 || a.Model.Coverage80 < RuleMinCoverage80
}

// BandCoverage states how much of the holdout's time the demand stayed
// inside the model's bands, and the judgement the coverage rule makes of
// those same figures: bands that held less than the rule asks are called
// too narrow, never good enough to plan from.
func (a *Accuracy) BandCoverage() string {
	if a == nil {
		return ""
	}
	held := fmt.Sprintf("On the holdout the demand stayed inside the 95%% band %s of the time (the rule asks at least %s) "+
		"and inside the 80%% band %s (at least %s)", pctAgainst(a.Model.Coverage95, RuleMinCoverage95), pct(RuleMinCoverage95, 0),
		pctAgainst(a.Model.Coverage80, RuleMinCoverage80), pct(RuleMinCoverage80, 0))
	if a.bandsTooNarrow() {
		return held + ": the bands are too narrow to plan from as drawn; demand falls outside them more often than they say."
	}
	return held + ": the bands are wide enough to plan from."
}

// pctAgainst writes a share to a whole percent, or to a tenth (rounded
// down) where a whole percent would put a share under limit on the
// limit itself: 89.96% against 90% reads "89.9%", never "90%".
func pctAgainst(v, limit float64) string {
	if v < limit && math.Round(100*v) >= math.Round(100*limit) {
		return fmt.Sprintf("%.1f%%", math.Floor(1000*v)/10)
	}
	return pct(v, 0)
}

// HeadroomWords states the room under max above the larger of the plan's
// peak and the SLO's, with figures that add up: the peak and the headroom
// make max.
func (cp Capacity) HeadroomWords() string {
	if cp.Headroom < 0 {
		return fmt.Sprintf("no headroom: the peak of %s is %d above max %d", countOf(cp.Peak, "instance"), -cp.Headroom, cp.Max)
	}
	if cp.Headroom == 0 {
		return fmt.Sprintf("no headroom: the peak of %s is max itself", countOf(cp.Peak, "instance"))
	}
	return fmt.Sprintf("max %d leaves room for %s (%s of it) above the peak of %d",
		cp.Max, countOf(cp.Headroom, "more instance"), pct(float64(cp.Headroom)/float64(cp.Max), 0), cp.Peak)
}

// attainment writes the share of requests served within the SLO to a
// hundredth of a percent, never rounding a shortfall up to 100%: the
// chart, the tables and the sentences all print it this way, so one
// policy's figure reads the same everywhere.
func attainment(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if s := fmt.Sprintf("%.2f%%", 100*v); v >= 1 || s != "100.00%" {
		return s
	}
	return "99.99%"
}

// comparisonWords writes the comparison signs of a reason the gate gives
// ("MAE 1.07 <= seasonal naive 1.76") in words, for the report's body.
func comparisonWords(s string) string {
	return strings.NewReplacer(" <= ", " at most ", " >= ", " at least ", " < ", " below ", " > ", " above ").Replace(s)
}

// spansWords writes spans in words: "a day and a week".
func spansWords(ds []Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = spanWords(d, true)
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// spanUnits are the units a span is written in, largest first.
var spanUnits = []struct {
	d       time.Duration
	name    string
	article string
}{
	{7 * 24 * time.Hour, "week", "a"}, {24 * time.Hour, "day", "a"}, {time.Hour, "hour", "an"},
	{time.Minute, "minute", "a"}, {time.Second, "second", "a"},
}

// spanWords writes a span in words: "a week" or "week" (article false, as
// in "the next week"), "2 days", "36 hours", "1 hour 30 minutes".
func spanWords(d Duration, article bool) string {
	v := time.Duration(d)
	if v <= 0 {
		return "no time"
	}
	for _, u := range spanUnits {
		if v%u.d == 0 {
			n := int(v / u.d)
			switch {
			case n == 1 && article:
				return u.article + " " + u.name
			case n == 1:
				return u.name
			}
			return countOf(n, u.name)
		}
	}
	var parts []string
	for _, u := range spanUnits[2:] {
		if n := int(v / u.d); n > 0 {
			parts = append(parts, countOf(n, u.name))
			v -= time.Duration(n) * u.d
		}
	}
	if len(parts) == 0 {
		return v.String()
	}
	return strings.Join(parts, " ")
}

// nextSpan is "the next week", "the next 2 days".
func nextSpan(d Duration) string { return "the next " + spanWords(d, false) }

// countOf writes a count with its noun: "1 instance", "2 instances".
func countOf(n int, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// PlaceholderMark follows every cost computed from placeholder prices.
const PlaceholderMark = "†"

// moneyIn writes an amount with its currency: "2,879.67 USD".
func moneyIn(v float64, currency string) string {
	return money(v) + " " + currency
}

// cost writes an amount of the report's currency, marked when the prices
// are placeholders.
func (p Prices) cost(v float64) string {
	s := moneyIn(v, p.Currency)
	if p.Placeholder {
		s += PlaceholderMark
	}
	return s
}

// perHour writes a price an instance-hour with its currency, to the
// precision it has (1.60, 1.0083).
func (p Prices) perHour(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); len(s)-i < 3 {
		s += strings.Repeat("0", 3-(len(s)-i))
	}
	s += " " + p.Currency
	if p.Placeholder {
		s += PlaceholderMark
	}
	return s
}
