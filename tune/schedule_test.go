package tune

import (
	"math"
	"slices"
	"testing"
	"time"
)

// hourly is a flat size's record over the 14 days before today: every
// hour arrived requests (by hour of the day), late of them when the size
// is below the hour's cover, none at or above it.
func hourly(today int64, size int, arrived func(h int) float64, cover func(day int64, h int) int, lateShare float64) hourMisses {
	var out hourMisses
	for hour := (today - 14) * hoursPerDay; hour < today*hoursPerDay; hour++ {
		h := int(hour % hoursPerDay)
		late := 0.0
		if size < cover(hour/hoursPerDay, h) {
			late = lateShare * arrived(h)
		}
		out.add(hour, arrived(h), late, 15*hoursPerDay)
	}
	return out
}

// scheduleTuner is a Tuner of testPlan (10 req/s an instance at 80%)
// with flat sizes 2 to 12, each with the record hourly gives it.
func scheduleTuner(today int64, arrived func(h int) float64, cover func(day int64, h int) int, lateShare float64) *Tuner {
	tu := &Tuner{opts: Options{HalfLife: -1}.WithDefaults(), base: testPlan(), tuneFrom: today - 30}
	for n := 2; n <= 12; n++ {
		tu.flats = append(tu.flats, &candidate{name: flatName(n), flat: n, hourly: hourly(today, n, arrived, cover, lateShare)})
	}
	return tu
}

// The schedule is fitted to the flat sizes' hours: it covers the night
// at the night's size and the day at the day's, where one flat size
// would hold the day's all night; a burst that fell in one hour of the
// window and fits in the miss budget does not buy that hour its own
// cover; and when no size meets the bar every hour gets the largest.
func TestScheduleSpendsTheBudgetAcrossTheDay(t *testing.T) {
	const today = int64(20000)
	day := func(h int) bool { return h >= 8 && h < 20 }
	// 10 req/s by night (need 2 at 80%), 40 by day (need 5).
	arrived := func(h int) float64 {
		if day(h) {
			return 40 * 3600
		}
		return 10 * 3600
	}
	base := func(_ int64, h int) int {
		if day(h) {
			return 8
		}
		return 3
	}
	nightAndDay := func(night, day int) []int {
		out := make([]int, hoursPerDay)
		for h := range out {
			out[h] = night
			if h >= 8 && h < 20 {
				out[h] = day
			}
		}
		return out
	}
	cases := []struct {
		name      string
		cover     func(day int64, h int) int
		lateShare float64
		want      []int
	}{
		{"night and day", base, 0.05, nightAndDay(3, 8)},
		{"a burst in one hour of one day is let through", func(d int64, h int) int {
			if d == today-3 && h == 2 {
				return 12 // 10 req/s for an hour at 0.5%: within the budget
			}
			return base(d, h)
		}, 0.05, nightAndDay(3, 8)},
		{"no size meets the bar", func(int64, int) int { return 13 }, 0.05, nightAndDay(12, 12)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tu := scheduleTuner(today, arrived, c.cover, c.lateShare)
			now := time.Unix(today*86400, 0)
			if got := tu.fitSchedule(now); !slices.Equal(got, c.want) {
				t.Errorf("fitSchedule = %v, want %v", got, c.want)
			}
		})
	}
	// Without an hour of record there is no schedule.
	empty := &Tuner{opts: Options{}.WithDefaults(), base: testPlan(), tuneFrom: today,
		flats: []*candidate{{name: flatName(3), flat: 3}}}
	if got := empty.fitSchedule(time.Unix(today*86400, 0)); got != nil {
		t.Errorf("fitSchedule with no record = %v, want nil", got)
	}
}

// sixOClockPeak is a schedule of 3 instances but for 9 from 06:00 to
// 07:00.
func sixOClockPeak() []int {
	sizes := make([]int, hoursPerDay)
	for h := range sizes {
		sizes[h] = 3
	}
	sizes[6] = 9
	return sizes
}

// The schedule starts an hour's larger size a boot before the hour, so
// that it is ready when the hour starts, and leaves a larger size when
// its hour ends.
func TestScheduleStartsTheNextHourWithinABoot(t *testing.T) {
	sizes := sixOClockPeak()
	c := &candidate{name: Schedule, schedule: sizes, lead: 10 * time.Minute}
	at := func(h, m int) time.Time { return time.Date(2026, 3, 2, h, m, 0, 0, time.UTC) }
	cases := []struct {
		at   time.Time
		want int
	}{
		{at(5, 49), 3},
		{at(5, 50), 9},
		{at(6, 30), 9},
		{at(6, 59), 9},
		{at(7, 0), 3},
		{at(23, 55), 3},
	}
	for _, k := range cases {
		if got := c.size(k.at); got != k.want {
			t.Errorf("size at %s = %d, want %d", k.at.Format("15:04"), got, k.want)
		}
	}
	if got := (&candidate{flat: 4}).size(at(6, 0)); got != 4 {
		t.Errorf("a flat size's size = %d, want 4", got)
	}
	// A boot of two hours starts hour 6's size from 4:00 and holds it.
	slow := &candidate{name: Schedule, schedule: sizes, lead: 2 * time.Hour}
	for _, k := range []struct {
		at   time.Time
		want int
	}{{at(3, 59), 3}, {at(4, 0), 9}, {at(5, 30), 9}, {at(7, 0), 3}} {
		if got := slow.size(k.at); got != k.want {
			t.Errorf("with a 2h boot, size at %s = %d, want %d", k.at.Format("15:04"), got, k.want)
		}
	}
	// Before the epoch the hours of the day are the same.
	if got := c.size(time.Date(1969, 12, 31, 6, 30, 0, 0, time.UTC)); got != 9 {
		t.Errorf("size at 06:30 on 1969-12-31 = %d, want 9", got)
	}
}

// The live pool holds the schedule's size for the hour while the schedule
// is in force, turns it with the hour even while the metrics cannot be
// read, and comes back to it after a restart.
func TestLiveFollowsTheSchedule(t *testing.T) {
	sizes := sixOClockPeak()
	at := func(h, m int) time.Time { return start.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	tu := newTuner(t, Options{})
	tu.sched = &candidate{name: Schedule, schedule: sizes, lead: 10 * time.Minute}
	tu.adopt(Schedule, at(5, 0), "test")
	if st := tu.Live().Strategy(); st.Flat != 3 || !st.NoPlan || !st.NoReactive || tu.Candidate() != Schedule {
		t.Fatalf("after adopting the schedule at 05:00: %s with %+v, want schedule holding 3", tu.Candidate(), st)
	}
	tu.Hold(at(5, 55), 3, "no metrics")
	if got := tu.Live().Strategy().Flat; got != 9 {
		t.Errorf("held at 05:55 without metrics: the live pool holds %d, want hour 6's 9", got)
	}
	back := newTuner(t, Options{})
	if err := back.Restore(tu.State()); err != nil {
		t.Fatal(err)
	}
	if back.Candidate() != Schedule || back.Live().Strategy().Flat != 9 {
		t.Errorf("restored: %s holding %d, want the schedule holding its largest, 9", back.Candidate(), back.Live().Strategy().Flat)
	}
	// A state that chose the schedule but lost it comes back to the hybrid.
	st := tu.State()
	st.Candidates = slices.DeleteFunc(st.Candidates, func(c CandidateState) bool { return c.Name == Schedule })
	lost := newTuner(t, Options{})
	if err := lost.Restore(st); err != nil || lost.Candidate() != Hybrid {
		t.Errorf("restored without its schedule: %s (%v), want the hybrid", lost.Candidate(), err)
	}
}

// A flat size's hours keep the last keep of them, add a tick to its own
// hour, count the hours a gap skipped as empty, and start afresh after a
// gap longer than what they keep.
func TestHourMissesKeepTheLastHours(t *testing.T) {
	var m hourMisses
	m.add(100, 10, 1, 4)
	m.add(100, 5, 0, 4)
	m.add(102, 7, 2, 4) // hour 101 skipped
	cases := []struct {
		hour          int64
		ok            bool
		arrived, late float64
	}{
		{99, false, 0, 0}, {100, true, 15, 1}, {101, true, 0, 0}, {102, true, 7, 2}, {103, false, 0, 0},
	}
	for _, c := range cases {
		if h, ok := m.at(c.hour); ok != c.ok || h.arrived != c.arrived || h.late != c.late {
			t.Errorf("at(%d) = %+v, %v; want {%v %v}, %v", c.hour, h, ok, c.arrived, c.late, c.ok)
		}
	}
	m.add(104, 1, 0, 4) // hours 101–104 kept
	if _, ok := m.at(100); ok {
		t.Error("hour 100 is still kept past four hours")
	}
	m.add(200, 3, 3, 4)
	if _, ok := m.at(104); ok || len(m.list) != 1 {
		t.Errorf("after a long gap the hours are %+v, want hour 200 alone", m.list)
	}
	back := importHours(m.exportLate(), exportArrived([]*candidate{{hourly: m}}))
	if h, ok := back.at(200); !ok || h.arrived != 3 || back.end != m.end {
		t.Errorf("export and import: %+v, want hour 200 with 3 requests", back)
	}
	// Hours late without their requests are left out, not read as all late.
	part := importHours(HourSeries{From: 10, Values: []float64{1, 2, 3}}, HourSeries{From: 11, Values: []float64{5, 6}})
	if _, ok := part.at(10); ok || len(part.list) != 2 || part.list[0] != (hourMiss{arrived: 5, late: 2}) {
		t.Errorf("import with the requests from hour 11: %+v, want hours 11 and 12", part)
	}
}

// Trying the headrooms where some hour's size changes finds the same
// smallest headroom that meets any bar as trying every whole headroom.
func TestScheduleHeadroomsAreWhereTheFitChanges(t *testing.T) {
	tab := hourTable{sizes: []int{1, 2, 3, 5, 8, 13, 20}, late: make([][hoursPerDay]float64, 7)}
	for h := range hoursPerDay {
		tab.need[h] = float64(1 + h%7)
		for k, n := range tab.sizes {
			tab.late[k][h] = float64(max(0, 12-n-h%5))
		}
	}
	for _, share := range scheduleShares {
		for bar := 0.0; bar <= 200; bar += 7 {
			first := func(tries []int) (int, bool) {
				for _, b := range tries {
					if _, misses, _ := tab.fit(share, float64(b)); misses <= bar {
						return b, true
					}
				}
				return 0, false
			}
			every := make([]int, tab.sizes[len(tab.sizes)-1]+1)
			for b := range every {
				every[b] = b
			}
			want, wantOK := first(every)
			got, gotOK := first(tab.headrooms(share))
			if got != want || gotOK != wantOK {
				t.Errorf("share %v, bar %v: headrooms find %d (%v), every headroom %d (%v)", share, bar, got, gotOK, want, wantOK)
			}
		}
	}
}

// A standing's cost weighs the window's days by tune.cost_half_life and its
// misses by tune.half_life: a candidate that got cheaper lately is scored at about its recent cost while one bad
// day still counts towards its misses for days.
func TestStandingWeighsCostAndMissesApart(t *testing.T) {
	const today = int64(20000)
	c := &candidate{name: Hybrid, since: time.Unix((today-30)*86400, 0)}
	for d := int64(14); d >= 1; d-- {
		s := score{At: today - d, Cost: 10, Arrived: 1000}
		if d <= 2 {
			s.Cost = 4 // cheaper on the last two days
		}
		if d == 3 {
			s.Late = 30
		}
		c.days = append(c.days, s)
	}
	tu := &Tuner{opts: Options{}.WithDefaults(), base: testPlan(), tuneFrom: today - 40}
	st, _ := tu.standing(c, time.Unix(today*86400, 0), 0)
	var cost, late, arrived float64
	for _, d := range c.days {
		age := float64(today - 1 - d.At)
		cost += math.Exp2(-age/1) * d.Cost
		late += math.Exp2(-age/4) * d.Late
		arrived += math.Exp2(-age/4) * d.Arrived
	}
	if math.Abs(st.Cost-cost) > 1e-9 || math.Abs(st.SLO-(1-late/arrived)) > 1e-12 {
		t.Errorf("standing cost %v, SLO %v; want %v (cost by a 1-day half-life) and %v (misses by 4 days)", st.Cost, st.SLO, cost, 1-late/arrived)
	}
}
