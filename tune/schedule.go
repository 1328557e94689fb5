package tune

import (
	"math"
	"slices"
	"time"
)

// The schedule candidate is a fleet sized per hour of the UTC day,
// fitted again each day to the pool's own history, as a team would write a
// schedule from it. The flat sizes' twins record what each size missed in every hour;
// the day's fit holds every hour at a sum of a share of the hour's mean
// need and a common headroom (a flat fleet is the share 0), the
// cheapest of that family whose misses over the window stay within the
// bar a fixed rule must clear. So the miss budget goes where covering
// costs most per request saved: a flat fleet covers the quiet hours' bursts
// at no extra cost and spends the budget in the busy ones only. Two
// numbers are fitted, not a size per hour, so that a burst in one hour of
// the window does not buy that hour alone its cover. The candidate's own
// twin follows each day's fit, so its record is walk-forward, never
// in-sample.

// Schedule names the candidate that holds a size per hour of the day.
const Schedule = "schedule"

// hoursPerDay is the schedule's resolution: one size per UTC hour.
const hoursPerDay = 24

// scheduleShares are the shares of each hour's mean need the fit tries,
// each with the smallest common headroom that meets the bar.
var scheduleShares = []float64{0, 0.5, 1, 1.5, 2, 3}

// size is the fleet a candidate holds at when it holds one: a flat size,
// or the largest of the schedule's sizes for the hours from at to a boot
// (lead) later, so that a larger size is ready when its hour starts.
func (c *candidate) size(at time.Time) int {
	if len(c.schedule) != hoursPerDay {
		return c.flat
	}
	first := hourOf(at)
	last := min(hourOf(at.Add(max(c.lead, 0))), first+hoursPerDay-1) // a boot of a day or more: every hour
	n := 0
	for h := first; h <= last; h++ {
		n = max(n, c.schedule[hourOfDay(h)])
	}
	return n
}

// hourOfDay is the UTC hour of the day of an hour since the epoch.
func hourOfDay(hour int64) int { return int((hour%hoursPerDay + hoursPerDay) % hoursPerDay) }

// hourMisses is a flat size's requests and misses per hour, the newest
// last, over the window and a day: what the schedule is fitted to. A twin
// replays every tick (a gap as ticks without demand), so the hours are
// contiguous and only the hour after the last is kept with them.
type hourMisses struct {
	end  int64 // the hour after the last, since the epoch
	list []hourMiss
}

// hourMiss is one hour's requests and requests late.
type hourMiss struct{ arrived, late float64 }

// add counts a tick's requests and misses in its hour, keeping keep hours.
func (m *hourMisses) add(hour int64, arrived, late float64, keep int) {
	if len(m.list) == 0 || (hour >= m.end && hour-m.end >= int64(keep)) {
		m.list, m.end = m.list[:0], hour // the first hour, or a gap longer than what is kept
	}
	for ; m.end <= hour; m.end++ { // at most keep hours: a longer gap started afresh above
		m.list = append(m.list, hourMiss{})
	}
	if over := len(m.list) - keep; over > 0 {
		m.list = m.list[over:]
	}
	if i := len(m.list) - int(m.end-hour); i >= 0 {
		m.list[i].arrived += arrived
		m.list[i].late += late
	}
}

// at is the record of an hour; false when it is not kept.
func (m *hourMisses) at(hour int64) (hourMiss, bool) {
	i := len(m.list) - int(m.end-hour)
	if i < 0 || i >= len(m.list) {
		return hourMiss{}, false
	}
	return m.list[i], true
}

// hourTable is the flat sizes' record by hour of the day over the
// window, recent days weighing more as in the standings.
type hourTable struct {
	sizes []int                  // the flat sizes, smallest first
	late  [][hoursPerDay]float64 // late[k][h]: size k's weighted misses in hour h
	need  [hoursPerDay]float64   // each hour's need at its mean demand
	// arrived is the weighted sum of the requests over the window.
	arrived float64
}

// hourTable gathers the flat sizes' hourly records of the window up to
// now; false when there is none yet.
func (t *Tuner) hourTable(now time.Time) (hourTable, bool) {
	today, days := dayOf(now), int64(t.opts.Window/(24*time.Hour))
	first := max(today-days, t.tuneFrom)
	if len(t.flats) == 0 || first >= today {
		return hourTable{}, false
	}
	tab := hourTable{sizes: make([]int, len(t.flats)), late: make([][hoursPerDay]float64, len(t.flats))}
	for k, c := range t.flats {
		tab.sizes[k] = c.flat
	}
	halfLife := t.opts.HalfLife.Hours() / 24
	var arrived, weight [hoursPerDay]float64
	for hour := first * hoursPerDay; hour < today*hoursPerDay; hour++ {
		w, h := 1.0, hourOfDay(hour)
		if halfLife > 0 {
			w = math.Exp2(-float64(today-1-hour/hoursPerDay) / halfLife)
		}
		for k := range tab.sizes {
			s, ok := hourRecord(t.flats, k, hour)
			if !ok {
				break // no size replayed the hour
			}
			if k == 0 {
				arrived[h] += w * s.arrived
				weight[h] += w
			}
			tab.late[k][h] += w * s.late
		}
	}
	for h := range hoursPerDay {
		tab.arrived += arrived[h]
		if weight[h] > 0 {
			tab.need[h] = float64(t.base.InstancesFor(arrived[h] / weight[h] / time.Hour.Seconds()))
		}
	}
	return tab, tab.arrived > 0
}

// hourRecord is size k's record of an hour, or, when it was not replayed
// then (added later at a new peak), the record of the largest smaller
// size that was, which missed at least as much; failing that, the
// smallest larger one's.
func hourRecord(flats []*candidate, k int, hour int64) (hourMiss, bool) {
	for j := k; j >= 0; j-- {
		if s, ok := flats[j].hourly.at(hour); ok {
			return s, true
		}
	}
	for j := k + 1; j < len(flats); j++ {
		if s, ok := flats[j].hourly.at(hour); ok {
			return s, true
		}
	}
	return hourMiss{}, false
}

// fit is the schedule that holds share·need + headroom in every hour
// (each rounded up to a flat size, the largest at most), its misses and
// its instance-hours a day.
func (tab hourTable) fit(share, headroom float64) (sizes []int, misses float64, instanceHours int) {
	sizes = make([]int, hoursPerDay)
	top := len(tab.sizes) - 1
	for h := range hoursPerDay {
		k, _ := slices.BinarySearch(tab.sizes, int(math.Ceil(share*tab.need[h]+headroom-1e-9)))
		k = min(k, top)
		sizes[h] = tab.sizes[k]
		misses += tab.late[k][h]
		instanceHours += tab.sizes[k]
	}
	return sizes, misses, instanceHours
}

// headrooms are the whole headrooms, from 0 up to the largest flat size,
// at which some hour's size changes for share: the fit is the same
// between two of them, so trying these finds the smallest that meets the
// bar as trying every one would.
func (tab hourTable) headrooms(share float64) []int {
	top := tab.sizes[len(tab.sizes)-1]
	out := []int{0}
	for h := range hoursPerDay {
		for _, n := range tab.sizes {
			// the smallest b with ⌈share·need + b⌉ past n (as fit rounds)
			if b := int(math.Floor(float64(n)-share*tab.need[h]+1e-9)) + 1; b > 0 && b <= top {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fitSchedule is the cheapest schedule of the family whose misses over
// the window leave Margin of the miss budget unspent, as a fixed rule's
// must; every hour at the largest flat size when none does. Nil when
// the flat sizes have no hourly record yet.
func (t *Tuner) fitSchedule(now time.Time) []int {
	tab, ok := t.hourTable(now)
	if !ok {
		return nil
	}
	allowed := (1 - t.opts.Margin) * t.budget() * tab.arrived
	var best []int
	bestCost := math.MaxInt
	for _, share := range scheduleShares {
		for _, headroom := range tab.headrooms(share) {
			sizes, misses, cost := tab.fit(share, float64(headroom))
			if misses <= allowed {
				if cost < bestCost {
					best, bestCost = sizes, cost
				}
				break
			}
		}
	}
	if best == nil {
		best, _, _ = tab.fit(0, float64(tab.sizes[len(tab.sizes)-1]))
	}
	return best
}

// refitSchedule fits the day's schedule; the first fit starts the
// schedule candidate, its twin at the flat twins' clock.
func (t *Tuner) refitSchedule(now time.Time) {
	sizes := t.fitSchedule(now)
	if sizes == nil {
		return
	}
	if t.sched != nil {
		t.sched.schedule = sizes
		return
	}
	if t.flats[0].twin == nil {
		return // the twins start again at the next observation (Restore)
	}
	clock := t.flats[0].twin.Now()
	// Scored from the next whole day, as a flat size added at a new peak.
	c := &candidate{name: Schedule, schedule: sizes, lead: t.base.Fleet.BootDelay, since: clock}
	if c.twin = t.newTwin(clock, c.size(clock), scheduleStream); c.twin != nil {
		t.sched = c
	}
}

// scheduleStream is the schedule twin's random stream (boot times).
const scheduleStream = 2000

// holdSchedule keeps the live controller at the schedule's size for now
// while the schedule is in force.
func (t *Tuner) holdSchedule(now time.Time) {
	if t.chosen != Schedule || t.sched == nil {
		return
	}
	if n := t.sched.size(now); n != t.live.Strategy().Flat {
		t.holdSize(n)
	}
}
