package tune

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// Flat grid: the fixed sizes replayed, from flatLow of the largest need
// observed up to that need, on a lattice of multiples of a power of two
// chosen so that at most about maxFlats lie in the range, and the need
// itself.
const (
	flatLow  = 0.25
	maxFlats = 20
)

// growFlats fits the flat grid to a new largest need. The lattice's step
// only doubles as the need grows, so most sizes keep their twins and
// their history; sizes off the new lattice are dropped, but for the one
// in force.
func (t *Tuner) growFlats(from time.Time, rps float64) {
	need := t.base.Bounded(t.base.InstancesFor(rps))
	if need <= t.peakNeed {
		return
	}
	t.peakNeed = need
	lo := max(t.base.Fleet.MinInstances, 1, int(math.Ceil(flatLow*float64(need))))
	step := 1
	for (need-lo)/step > maxFlats {
		step *= 2
	}
	onGrid := func(n int) bool { return n == need || (n >= lo && n%step == 0) }
	t.flats = slices.DeleteFunc(t.flats, func(c *candidate) bool {
		return !onGrid(c.flat) && !(t.chosen == Flat && t.flatN == c.flat)
	})
	for n := need; n >= lo; n-- {
		if onGrid(n) && !slices.ContainsFunc(t.flats, func(c *candidate) bool { return c.flat == n }) {
			if twin := t.newTwin(from, n, uint64(1000+n)); twin != nil {
				t.flats = append(t.flats, &candidate{name: flatName(n), flat: n, twin: twin, since: from})
			}
		}
	}
	slices.SortFunc(t.flats, func(a, b *candidate) int { return a.flat - b.flat })
}

// window sums a candidate's days in [max(today−days, from), today), but
// for its trim worst, each weighted by half per halfLife days of age (0:
// all alike), and says how many whole days it replayed there.
func (c *candidate) window(today, days, from int64, halfLife float64, trim int) (w score, age int64) {
	first := c.windowStart(today, days, from)
	return c.sum(first, today, today, halfLife, trim), max(today-first, 0)
}

// windowStart is the first day of a candidate's window of days ending
// before today: none before from, nor before its twin's first whole day.
func (c *candidate) windowStart(today, days, from int64) int64 {
	return max(today-days, from, dayOf(c.since)+1)
}

// sum adds up the days of [first, until), but for the trim worst, each
// weighted by half per halfLife days of age before today.
func (c *candidate) sum(first, until, today int64, halfLife float64, trim int) (w score) {
	left := worstDays(c.days, first, until, trim)
	for _, d := range c.days {
		if d.At < first || d.At >= until || slices.Contains(left, d.At) {
			continue
		}
		k := 1.0
		if halfLife > 0 {
			k = math.Exp2(-float64(today-1-d.At) / halfLife)
		}
		w.Cost += k * d.Cost
		w.Arrived += k * d.Arrived
		w.Late += k * d.Late
	}
	return w
}

// flatWindow is window for a flat size, which the grid may have added
// at a new peak, after the window began: the days before it was born
// are charged as the largest smaller size that replayed them served
// them (at least as many misses as this size would have had) at this
// size's price. Otherwise a size born after a burst would be compared,
// spotless, with candidates that lived through the burst.
func (t *Tuner) flatWindow(c *candidate, today, days int64, halfLife float64, trim int) (w score, age int64) {
	w, age = c.window(today, days, t.tuneFrom, halfLife, trim)
	start, born := max(today-days, t.tuneFrom), dayOf(c.since)+1
	if born <= start {
		return w, age
	}
	var proxy *candidate
	for _, p := range t.flats { // smallest first
		if p.flat < c.flat && dayOf(p.since)+1 <= start {
			proxy = p
		}
	}
	if proxy == nil {
		return w, age
	}
	pre := proxy.sum(start, min(born, today), today, halfLife, 0)
	w.Cost += pre.Cost * float64(c.flat) / float64(proxy.flat)
	w.Arrived += pre.Arrived
	w.Late += pre.Late
	return w, max(today-start, 0)
}

// worstDays are the days of [first, today) with the highest miss shares,
// n of them at most, and none unless a week remains.
func worstDays(days []score, first, today int64, n int) []int64 {
	var in []score
	for _, d := range days {
		if d.At >= first && d.At < today {
			in = append(in, d)
		}
	}
	if n <= 0 || len(in)-n < 7 {
		return nil
	}
	slices.SortFunc(in, func(a, b score) int {
		switch {
		case a.missShare() > b.missShare():
			return -1
		case a.missShare() < b.missShare():
			return 1
		}
		return 0
	})
	out := make([]int64, n)
	for i := range out {
		out[i] = in[i].At
	}
	return out
}

// recentScore sums a candidate's hours in [hour−hours, hour].
func recentScore(list []score, hour, hours int64) score {
	var w score
	for _, h := range list {
		if h.At > hour-hours && h.At <= hour {
			w.Cost += h.Cost
			w.Arrived += h.Arrived
			w.Late += h.Late
		}
	}
	return w
}

// Standing is a candidate's record over the tuning window, as the
// status page and the API show it.
type Standing struct {
	Name string `json:"name"`
	// Days is how many whole days of the window it is scored on (a flat
	// size added at a new peak: with the days a smaller one replayed).
	Days int `json:"days"`
	// Cost is what its twin cost over those days, in the prices'
	// currency, recent days weighing more (tune.cost_half_life), and SLO
	// the share of its requests served within the SLO (tune.half_life).
	Cost float64 `json:"cost"`
	SLO  float64 `json:"slo_attainment"`
	// Qualifies is true when it has the history and left the margin of
	// the miss budget unspent; Chosen marks the candidate in force.
	Qualifies bool `json:"qualifies"`
	Chosen    bool `json:"chosen"`
}

// standings scores every candidate, with the flat grid folded into one:
// the smallest size that qualifies, else the largest.
func (t *Tuner) standings(now time.Time) []Standing { return t.standingsTrimmed(now, t.opts.Trim) }

// standingsTrimmed is standings with each candidate's trim worst days of
// the window left out.
func (t *Tuner) standingsTrimmed(now time.Time, trim int) []Standing {
	stand := func(c *candidate) Standing { s, _ := t.standing(c, now, trim); return s }
	var out []Standing
	for _, c := range t.cands {
		out = append(out, stand(c))
	}
	var flat *Standing
	for _, c := range t.flats { // smallest first
		s := stand(c)

		if s.Qualifies || flat == nil || !flat.Qualifies {
			flat = &s
		}
		if s.Qualifies {
			break
		}
	}
	if flat != nil {
		out = append(out, *flat)
	}
	if t.sched != nil {
		out = append(out, stand(t.sched))
	}
	// The flat size in force stands on its own too, so that it stays
	// while it qualifies (the incumbent's rule in choose).
	if t.chosen == Flat && (flat == nil || flat.Name != flatName(t.flatN)) {
		for _, c := range t.flats {
			if c.flat == t.flatN {
				out = append(out, stand(c))
			}
		}
	}
	for i := range out {
		out[i].Chosen = out[i].Name == t.chosenName()
	}
	return out
}

// standing scores one candidate over the window up to now, with its trim
// worst days left out; arrived is how many requests its days hold.
func (t *Tuner) standing(c *candidate, now time.Time, trim int) (s Standing, arrived float64) {
	today, days := dayOf(now), int64(t.opts.Window/(24*time.Hour))
	minDays := int64(t.opts.MinHistory / (24 * time.Hour))
	halfLife := t.opts.HalfLife.Hours() / 24
	w, age := t.windowOf(c, today, days, halfLife, trim)
	// The cost's days weigh by their own half-life (Options.CostHalfLife).
	cost, _ := t.windowOf(c, today, days, t.opts.CostHalfLife.Hours()/24, trim)
	s = Standing{Name: c.name, Days: int(max(age, 0)), Cost: cost.Cost, SLO: 1 - w.missShare()}
	// A fixed rule must leave the margin unspent; a calibrated one may
	// overrun the budget by Slack, as it corrects itself.
	bar := (1 - t.opts.Margin) * t.budget()
	if c.calibrated {
		bar = (1 + t.opts.Slack) * t.budget()
	}
	s.Qualifies = age >= minDays && w.Arrived > 0 && w.missShare() <= bar
	return s, w.Arrived
}

// windowOf is a candidate's window (flatWindow for a flat size).
func (t *Tuner) windowOf(c *candidate, today, days int64, halfLife float64, trim int) (score, int64) {
	if c.flat > 0 {
		return t.flatWindow(c, today, days, halfLife, trim)
	}
	return c.window(today, days, t.tuneFrom, halfLife, trim)
}

// Saving sets the candidate in force against the baseline a team would
// otherwise run: the cheapest of the rules that use no forecast (every
// reactive setting and every flat size) that met the SLO over the tuning
// window, all of them replayed on the pool's own demand over the same
// days. The schedule is not among them: it is refitted every day from
// the flat sizes' hours by the tuner itself, which a team without it
// would not do.
type Saving struct {
	// Baseline names that rule ("flat 7", "reactive 80%/40%/15%"); empty
	// while none has met the SLO over tune.min_history.
	Baseline string `json:"baseline,omitempty"`
	// Cost and BaselineCost are the candidate in force's and the
	// baseline's replayed cost over the window, in the prices' currency,
	// recent days weighing more (tune.cost_half_life); Days is how many days
	// the window holds.
	Cost         float64 `json:"cost"`
	BaselineCost float64 `json:"baseline_cost"`
	Days         int     `json:"days"`
	// Share is 1 − Cost ÷ BaselineCost, the share of the baseline's cost
	// saved (negative: the candidate in force costs more).
	Share float64 `json:"share"`
}

// saving finds the baseline over the window up to now and sets the
// candidate in force against it.
func (t *Tuner) saving(now time.Time) Saving {
	minDays := int(t.opts.MinHistory / (24 * time.Hour))
	var sv Saving
	var chosen *Standing
	for _, c := range t.all() {
		s, arrived := t.standing(c, now, 0)
		if s.Name == t.chosenName() {
			chosen = &s
		}
		noForecast := c.flat > 0 || Kind(c.name) == Reactive || c.name == ReactiveSurge
		met := s.Days >= minDays && arrived > 0 && s.SLO >= t.base.SLO.Quantile
		if noForecast && met && (sv.Baseline == "" || s.Cost < sv.BaselineCost) {
			sv.Baseline, sv.BaselineCost, sv.Days = s.Name, s.Cost, s.Days
		}
	}
	if sv.Baseline == "" || chosen == nil || !(sv.BaselineCost > 0) {
		return Saving{}
	}
	sv.Cost = chosen.Cost
	sv.Share = 1 - sv.Cost/sv.BaselineCost
	return sv
}

// budget is the SLO's miss budget: the share of requests that may wait
// past the SLO's latency.
func (t *Tuner) budget() float64 { return 1 - t.base.SLO.Quantile }

// chosenName is the candidate in force as standings name it.
func (t *Tuner) chosenName() string {
	if t.chosen == Flat {
		return flatName(t.flatN)
	}
	return t.chosen
}

// tune makes the day's choice at the first decision of each UTC day,
// once the candidates are scored.
func (t *Tuner) tune(now time.Time) {
	if day := dayOf(now); day > t.tunedDay && t.tuneFrom > 0 {
		t.tunedDay = day
		t.refitSchedule(now)
		t.choose(now)
	}
}

// choose makes the day's choice from the candidates' standings over the
// window. A candidate qualifies when it had the history and its window
// left Margin of the miss budget unspent (a calibrated one: when it ran
// no more than calibratedSlack past the budget). A burst that only dear
// candidates covered is let through first (letThrough): the cheapest that
// qualifies with its worst day left out is adopted when it costs under a
// third of the cheapest that qualifies and the burst spent little of the
// budget, and its calibration forgets that day (forgive). Otherwise the candidate in force
// stays while it qualifies and nothing qualifies at Hysteresis less cost;
// otherwise the cheapest that qualifies is adopted, unless it fell short
// of the SLO within the calibration's slack and one that met the SLO costs
// at most saferPremium more (safer). When none does, a
// burst is let through: the cheapest that qualifies with its worst day
// (up to maxTrim days) left out is adopted. When still none does, the
// misses that no candidate avoided are not the budget's to spend: the
// cheapest whose misses beyond the least-missing one's fit in the
// budget's unspent part (1 − Margin of it) is adopted.
func (t *Tuner) choose(now time.Time) {
	st := t.standings(now)
	current := slices.IndexFunc(st, func(s Standing) bool { return s.Chosen })
	best := cheapestQualifying(st)
	if best >= 0 {
		if cheap, whole, ok := t.letThrough(now, st[best].Cost); ok {
			if cheap.Name != t.chosenName() {
				why := fmt.Sprintf("%s met the SLO over %d days at %s the cost of %s, the cheapest that met it over the window: leaving out its worst day it held %s, and over every day %s",
					cheap.Name, cheap.Days, ratio(cheap.Cost, st[best].Cost), st[best].Name, percent(cheap.SLO), percent(whole))
				if day, ok := t.forgive(cheap.Name, now); ok {
					why += fmt.Sprintf("; its calibration forgets the misses of %s", time.Unix(day*86400, 0).UTC().Format(time.DateOnly))
				}
				t.adopt(cheap.Name, now, why)
			}
			return
		}
	}
	cheapest := best
	best = t.safer(st, best)
	if current >= 0 && st[current].Qualifies && st[best].Cost >= (1-t.opts.Hysteresis)*st[current].Cost {
		return // the one in force qualifies and nothing qualifies for clearly less
	}
	var why string
	if best >= 0 {
		why = qualifiedWhy(st, best, cheapest)
	} else {
		if i, n, ok := t.cheapestTrimmed(now); ok {
			st = t.standingsTrimmed(now, n)
			why = fmt.Sprintf("none met the SLO over the last %d days; leaving out each one's worst %d, %s is the cheapest that did: %s (%s)",
				st[i].Days, n, st[i].Name, percent(st[i].SLO), costs(st, i))
			if st[i].Name != t.chosenName() {
				t.adopt(st[i].Name, now, why)
			}
			return
		}
		least := -1
		for i, s := range st {
			if t.hasHistory(s) && (least < 0 || s.SLO > st[least].SLO) {
				least = i
			}
		}
		if least < 0 {
			return
		}
		// The misses no candidate avoided are not the budget's to spend:
		// take the cheapest whose misses beyond the least fit in it.
		best = least
		for i, s := range st {
			if t.hasHistory(s) && st[least].SLO-s.SLO <= (1-t.opts.Margin)*t.budget() && s.Cost < st[best].Cost {
				best = i
			}
		}
		why = fmt.Sprintf("none met the SLO over the last %d days; %s missed least (%s), %s missed at most the budget more: %s",
			st[least].Days, st[least].Name, percent(st[least].SLO), st[best].Name, percent(st[best].SLO))
	}
	if best != current {
		t.adopt(st[best].Name, now, why)
	}
}

// cheapestTrimmed finds, when no candidate met the SLO over the whole
// window, the cheapest that met it with its worst day or days left out
// (up to maxTrim): a burst that no affordable candidate covered is let
// through, as the miss budget allows, rather than bought at any price.
// It returns the standing's index and the days left out.
func (t *Tuner) cheapestTrimmed(now time.Time) (int, int, bool) {
	for n := t.opts.Trim + 1; n <= maxTrim; n++ {
		if best := cheapestQualifying(t.standingsTrimmed(now, n)); best >= 0 {
			return best, n, true
		}
	}
	return 0, 0, false
}

// letThrough finds the cheapest candidate that met the SLO with its worst
// day left out, and reports whether to follow it rather than the
// cheapest that met it over every day, which cost coverCost: a burst is
// let through when covering it cost more than letThroughCost times as
// much and the burst spent at most letThroughMisses times the miss budget
// of the whole window. A candidate that met the SLO only by being dear
// every day holds a fleet sized for one rare burst; one whose misses on
// that day were many times the budget leaves the SLO to chance, and is
// not followed. whole is its share of requests within the SLO over every
// day.
func (t *Tuner) letThrough(now time.Time, coverCost float64) (cheap Standing, whole float64, ok bool) {
	st := t.standingsTrimmed(now, t.opts.Trim+1)
	best := cheapestQualifying(st)
	if best < 0 || st[best].Cost*letThroughCost >= coverCost {
		return Standing{}, 0, false
	}
	all := t.all()
	i := slices.IndexFunc(all, func(c *candidate) bool { return c.name == st[best].Name })
	if i < 0 {
		return Standing{}, 0, false
	}
	w, _ := t.standing(all[i], now, t.opts.Trim)
	return st[best], w.SLO, 1-w.SLO <= letThroughMisses*t.budget()
}

// letThroughCost and letThroughMisses bound the bursts the choice lets
// through (letThrough): covering one must cost over three times as much,
// and letting it through must spend at most three times the window's miss
// budget.
const letThroughCost, letThroughMisses = 3, 3

// forgive sets the named candidate's calibration back to its memory at
// the start of the day the let-through rule leaves out (the earliest, if
// tune.trim leaves out more), where that day's burst pushed it stricter:
// a burst let through on purpose is not bought back with days of extra
// headroom. It returns the day, and false when the candidate has no
// calibration, no memory of that day, or a memory already as loose.
func (t *Tuner) forgive(name string, now time.Time) (day int64, ok bool) {
	c := t.find(name)
	if c == nil || c.ctl == nil {
		return 0, false
	}
	today := dayOf(now)
	first := c.windowStart(today, int64(t.opts.Window/(24*time.Hour)), t.tuneFrom)
	left := worstDays(c.days, first, today, t.opts.Trim+1)
	if len(left) == 0 {
		return 0, false
	}
	day = slices.Min(left)
	i := slices.IndexFunc(c.memory, func(m DayMemory) bool { return m.Day == day })
	if i < 0 {
		return 0, false
	}
	before := c.ctl.CalibrationMemory()
	c.ctl.Forgive(c.memory[i].LnTail)
	return day, c.ctl.CalibrationMemory() != before
}

// qualifiedWhy says why st[best] is chosen among the candidates that
// qualified, st[cheapest] the cheapest of them.
func qualifiedWhy(st []Standing, best, cheapest int) string {
	if best == cheapest {
		return fmt.Sprintf("cheapest that met the SLO over %d days: %s at %s (%s)",
			st[best].Days, st[best].Name, percent(st[best].SLO), costs(st, best))
	}
	return fmt.Sprintf("%s met the SLO over %d days at %s, %s the cost of %s, which fell short of it within the calibration's slack at %s (%s)",
		st[best].Name, st[best].Days, percent(st[best].SLO), ratio(st[best].Cost, st[cheapest].Cost), st[cheapest].Name,
		percent(st[cheapest].SLO), costs(st, best))
}

// safer is best, the cheapest candidate that qualifies, unless it
// qualified only through the calibration's slack (its window fell short
// of the SLO) and a candidate that met the SLO outright cost at most
// saferPremium more: then it is the cheapest such. Within that premium
// the replayed costs are as good as equal, and a calibration that fell
// short has yet to show it will close the gap.
func (t *Tuner) safer(st []Standing, best int) int {
	if best < 0 || st[best].SLO >= t.base.SLO.Quantile {
		return best
	}
	safer := best
	for i, s := range st {
		met := s.Qualifies && s.SLO >= t.base.SLO.Quantile
		if met && s.Cost <= (1+saferPremium)*st[best].Cost && (safer == best || s.Cost < st[safer].Cost) {
			safer = i
		}
	}
	return safer
}

// saferPremium is how much more a candidate that met the SLO outright may
// cost than one that fell short of it within the calibration's slack and
// still be chosen over it (safer): twice the default hysteresis.
const saferPremium = 0.1

// ratio writes a/b as "0.21×".
func ratio(a, b float64) string { return fmt.Sprintf("%.2f×", a/b) }

// cheapestQualifying is the index of the cheapest standing that
// qualifies, or -1 when none does.
func cheapestQualifying(st []Standing) int {
	best := -1
	for i, s := range st {
		if s.Qualifies && (best < 0 || s.Cost < st[best].Cost) {
			best = i
		}
	}
	return best
}

// maxTrim is the most days of a window the choice leaves out.
const maxTrim = 3

// hasHistory reports whether a candidate was replayed long enough to be
// chosen.
func (t *Tuner) hasHistory(s Standing) bool {
	return time.Duration(s.Days)*24*time.Hour >= t.opts.MinHistory
}

// adopt puts a candidate in force: the live controller follows its
// twin's controller (or holds the flat size, or the schedule's size for
// the hour).
func (t *Tuner) adopt(name string, now time.Time, why string) {
	t.why = fmt.Sprintf("%s: %s", now.UTC().Format("2006-01-02 15:04"), why)
	if n, ok := strings.CutPrefix(name, Flat+" "); ok {
		var size int
		fmt.Sscan(n, &size)
		t.chosen, t.flatN = Flat, size
		t.live.Follow(t.cands[0].ctl)
		t.holdSize(size)
		return
	}
	t.chosen, t.flatN = name, 0
	if name == Schedule && t.sched != nil {
		t.live.Follow(t.cands[0].ctl)
		t.holdSize(t.sched.size(now))
		return
	}
	if c := t.find(name); c != nil {
		t.live.Follow(c.ctl)
	}
}

// trackLive adds the live controller's new estimates to its hours and
// trips the guard when the miss budget burns too fast: faster than
// GuardBurn times its allowed rate over the guard window and over the
// last hour too (still burning now), as SRE's multi-window burn-rate
// alerts ask, so that a bad hour inside a good day does not trip it.
// The guard then adopts the cheapest candidate that met the SLO over the
// guard window and in the hour so far and whose twin holds what the
// demand observed now needs (copes), or the one that missed least in the
// hour when none did: the safer choice is the one that copes now. An
// hour's record lags a surge that began minutes ago, which a size that
// covered the hour's first minutes will not meet. While the guard waits
// to judge its last move, a flat size or the schedule in force that the
// demand has outgrown is replaced at once, as the surge will not wait for the
// judgement either.
func (t *Tuner) trackLive(now time.Time, obs planner.Observation) {
	est := t.live.Estimated()
	d := score{At: hourOf(now), Arrived: est.Arrived - t.lastEst.Arrived, Late: est.Late - t.lastEst.Late}
	t.lastEst = est
	hours := int64(t.opts.GuardWindow / time.Hour)
	t.liveRecent = addScore(t.liveRecent, d, hours+1)
	hour := recentScore(t.liveRecent, hourOf(now), 1)
	w := recentScore(t.liveRecent, hourOf(now), hours)
	limit := t.opts.GuardBurn * t.budget()
	if t.tuneFrom == 0 || dayOf(now) < t.tuneFrom {
		return // no candidate has a scored day to compare
	}
	judging := now.Before(t.guardedAt.Add(t.guardCooldown()))
	// A burn needs evidence to be told from noise: ten requests late in
	// the window, at over the guard's rate. A quiet pool's window may hold
	// too few requests for the budget to allow ten misses; a surge there
	// is no less a burn when most of it waits.
	burning := !judging && w.Late >= 10 && w.missShare() > limit && hour.missShare() > limit
	fixed := t.chosen == Flat || t.chosen == Schedule
	outgrown := judging && fixed && t.live.Strategy().Flat < t.need(obs, now)
	if !burning && !outgrown {
		return
	}
	need := t.need(obs, now)
	best, bestCost, bestMiss, fallback, current := "", math.Inf(1), math.Inf(1), "", math.NaN()
	bestHolds, fallbackHolds := 0, 0
	for _, c := range t.all() {
		if !t.judgeable(c, now) {
			continue
		}
		r, hr := recentScore(c.recent, hourOf(now), hours), recentScore(c.recent, hourOf(now), 1)
		if r.Arrived <= 0 || hr.Arrived <= 0 {
			continue
		}
		if c.name == t.chosenName() {
			current = hr.missShare()
		}
		n := t.holds(c, now)
		if r.missShare() <= t.budget() && hr.missShare() <= t.budget() && r.Cost < bestCost && n >= need {
			best, bestCost, bestHolds = c.name, r.Cost, n
		}
		// The one that missed least this hour (sums of many ticks a hair
		// apart are alike: the first of them).
		if m := hr.missShare(); m < bestMiss-1e-9 {
			fallback, bestMiss, fallbackHolds = c.name, m, n
		}
	}
	held := "held the SLO there and this hour"
	if best == "" {
		// None held it: move only to one that missed under half as much
		// as the one in force, or the move buys nothing but churn.
		if outgrown || !(bestMiss <= current/2) {
			return
		}
		best, bestHolds, held = fallback, fallbackHolds, fmt.Sprintf("missed least this hour (%s within the SLO)", percent(1-bestMiss))
	}
	if best == "" || best == t.chosenName() {
		return
	}
	why := fmt.Sprintf("the demand now needs %d, more than the %d in force, before its last move could be judged", need, t.live.Strategy().Flat)
	if burning {
		span := "over the last " + shortDuration(t.opts.GuardWindow)
		if since := now.Sub(t.guardedAt); since < t.opts.GuardWindow {
			span = "in the " + shortDuration(since.Truncate(time.Minute)) + " since its last move"
		}
		why = fmt.Sprintf("the live pool spent the miss budget %.1f× as fast as allowed %s and is still burning", w.missShare()/t.budget(), span)
	}
	t.adopt(best, now, fmt.Sprintf("guard: %s; %s %s and holds %d", why, best, held, bestHolds))
	t.liveRecent, t.guardedAt = nil, now // the burn is answered: judge the new choice afresh
}

// need is what the demand of obs needs, or the largest flat size the
// guard can judge when it needs more: the most the twins vouch for (a
// size added at this very peak is too new). 0 without a demand.
func (t *Tuner) need(obs planner.Observation, now time.Time) int {
	if math.IsNaN(obs.DemandRPS) {
		return 0
	}
	top := 0
	for _, c := range t.flats {
		if t.judgeable(c, now) {
			top = max(top, c.flat)
		}
	}
	return min(t.base.Bounded(t.base.InstancesFor(obs.DemandRPS)), top)
}

// judgeable reports whether a candidate has replayed the whole guard
// window, so that the guard can judge it.
func (t *Tuner) judgeable(c *candidate, now time.Time) bool {
	return !c.since.After(now.Add(-t.opts.GuardWindow))
}

// holds is how many instances a candidate's twin holds now, booting or
// ready (0 before its twin starts).
func (t *Tuner) holds(c *candidate, now time.Time) int {
	switch {
	case c.twin == nil:
		return 0
	case c.ctl == nil:
		return c.size(now)
	}
	return c.twin.Counts().Desired
}

// guardCooldown is how long the guard lets a choice it made run before it
// judges it: a boot for the fleet it sized to arrive and a few minutes of
// its own misses; sooner it would judge the old choice's queue, later it
// would leave a wrong pick burning.
func (t *Tuner) guardCooldown() time.Duration {
	return max(t.base.Fleet.BootDelay, 5*time.Minute) + 5*time.Minute
}

// holdSize has the live controller hold n instances, no plan and no
// reactive rules: a flat size, or the schedule's size for the hour.
func (t *Tuner) holdSize(n int) {
	t.live.SetStrategy(control.Strategy{NoPlan: true, NoReactive: true, Flat: n})
}

// Choice is the tuner's state for the status page, the API and the
// decision log.
type Choice struct {
	// Candidate is the candidate in force and Why the reason it was
	// chosen, with the time.
	Candidate string `json:"candidate"`
	Why       string `json:"why"`
	// Burn is the live pool's burn rate of the miss budget over the guard
	// window (1: as fast as the SLO allows).
	Burn       float64    `json:"burn_rate"`
	Candidates []Standing `json:"candidates"`
	// Saving is the candidate in force against the baseline without a
	// forecast, both replayed over the window.
	Saving Saving `json:"saving"`
}

// Choice returns the candidate in force, why, and every candidate's
// standing over the window up to now.
func (t *Tuner) Choice(now time.Time) Choice {
	w := recentScore(t.liveRecent, hourOf(now), int64(t.opts.GuardWindow/time.Hour))
	ch := Choice{Candidate: t.chosenName(), Why: t.why}
	if b := t.budget(); b > 0 {
		ch.Burn = w.missShare() / b
	}
	if t.opts.Enabled {
		ch.Candidates = t.standings(now)
		ch.Saving = t.saving(now)
	}
	return ch
}

func percent(a float64) string { return fmt.Sprintf("%.2f%%", 100*a) }

// costs describes the chosen candidate's cost against the others'.
func costs(st []Standing, best int) string {
	var parts []string
	for i, s := range st {
		if i == best || s.Cost <= 0 || st[best].Cost <= 0 {
			continue
		}
		parts = append(parts, s.Name+" "+ratio(s.Cost, st[best].Cost))
	}
	if len(parts) == 0 {
		return "the only one"
	}
	return "others cost " + strings.Join(parts, ", ")
}

func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// Totals is every candidate's record over all the days it kept (for tests).
func (t *Tuner) Totals() []Standing {
	var out []Standing
	for _, c := range t.all() {
		var w score
		for _, d := range c.days {
			w.Cost += d.Cost
			w.Arrived += d.Arrived
			w.Late += d.Late
		}
		out = append(out, Standing{Name: c.name, Days: len(c.days), Cost: w.Cost, SLO: 1 - w.missShare()})
	}
	return out
}

// Candidate names the candidate in force.
func (t *Tuner) Candidate() string { return t.chosenName() }

// Kind is the kind of a candidate's name: a flat size is Flat, a setting
// of the reactive grid Reactive, the others their own names.
func Kind(name string) string {
	switch {
	case strings.HasPrefix(name, Flat+" "):
		return Flat
	case strings.HasPrefix(name, Reactive+" "):
		return Reactive
	}
	return name
}
