package tune

import (
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

// The schedule starts an hour's larger size a boot before the hour, so
// that it is ready when the hour starts, and leaves a larger size when
// its hour ends.
func TestScheduleStartsTheNextHourWithinABoot(t *testing.T) {
	sizes := make([]int, hoursPerDay)
	for h := range sizes {
		sizes[h] = 3
	}
	sizes[6] = 9
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
	back := importHours(m.export())
	if h, ok := back.at(200); !ok || h.arrived != 3 || back.end != m.end {
		t.Errorf("export and import: %+v, want hour 200 with 3 requests", back)
	}
}
