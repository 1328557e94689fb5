package tune

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
)

// StateVersion is the version of State's encoding. A state of another
// version, or the live controller's state saved alone before the tuner
// existed, is read by DecodeState as the controller's memory with the
// tuning started afresh.
const StateVersion = 1

// State is what a Tuner remembers across restarts: the live controller's
// memory, the candidate in force and why, every candidate's scores and
// its controller's policy state, and the live estimates the guard reads.
// The twins' fleets are not kept: after a restart each starts again at
// the instances the next demand needs, its scores carried on.
type State struct {
	Version    int
	Controller control.State
	Chosen     string
	FlatN      int
	Why        string
	TunedDay   int64
	TuneFrom   int64
	Started    time.Time
	PeakNeed   int
	Candidates []CandidateState
	// HourlyArrived is the requests of each hour the flat sizes replayed:
	// the pool's own demand, the same for every size, so kept once.
	HourlyArrived HourSeries
	LiveRecent    []Score
	LastEst       control.Estimate
	GuardedAt     time.Time
}

// CandidateState is one candidate's record.
type CandidateState struct {
	Name         string
	Flat         int
	Since        time.Time
	Adopted      time.Time
	Days, Recent []Score
	// HourlyLate is a flat size's requests late in each hour of the
	// window (with State.HourlyArrived, the record the schedule is
	// fitted to); Schedule the schedule candidate's size per hour of the
	// day.
	HourlyLate HourSeries
	Schedule   []int
	// Hourly is a flat size's hours in the other form a state file may
	// hold them: one Score an hour (At: the hour since the epoch) with its
	// requests and requests late. Restore reads it for a size whose
	// HourlyLate is empty; State writes HourlyLate.
	Hourly []Score
	// Policy is its controller's policy state (none for a flat size).
	Policy *control.PolicyState
	// Memory is its controller's calibration memory at the start of each
	// day of the window, oldest first (none for a flat size or the
	// schedule).
	Memory []DayMemory
}

// DayMemory is a controller's calibration memory ln(1 − q) at the start
// of a day (Day: the day number since the epoch).
type DayMemory struct {
	Day    int64
	LnTail float64
}

// Score is a day's or an hour's figures of a candidate (At is the day or
// hour number since the epoch).
type Score struct {
	At                  int64
	Cost, Arrived, Late float64
}

// HourSeries is one figure for each of consecutive hours: Values[i] is
// the figure of hour From+i since the epoch. With each hour's requests
// kept once for every flat size, a size's hours take about a quarter of
// the bytes a Score an hour took (41 KB against 151 KB for 19 sizes
// over 15 days).
type HourSeries struct {
	From   int64
	Values []float64
}

// at is the figure of an hour; false when the series does not hold it.
func (s HourSeries) at(hour int64) (float64, bool) {
	if i := hour - s.From; i >= 0 && i < int64(len(s.Values)) {
		return s.Values[i], true
	}
	return 0, false
}

// State returns a copy of what the tuner remembers.
func (t *Tuner) State() State {
	st := State{Version: StateVersion, Controller: t.live.State(), Chosen: t.chosen, FlatN: t.flatN, Why: t.why,
		TunedDay: t.tunedDay, TuneFrom: t.tuneFrom, Started: t.started, PeakNeed: t.peakNeed,
		LiveRecent: exportScores(t.liveRecent), LastEst: t.lastEst, GuardedAt: t.guardedAt,
		HourlyArrived: exportArrived(t.flats)}
	for _, c := range t.all() {
		cs := CandidateState{Name: c.name, Flat: c.flat, Since: c.since, Adopted: c.adopted,
			Days: exportScores(c.days), Recent: exportScores(c.recent), HourlyLate: c.hourly.exportLate(),
			Schedule: slices.Clone(c.schedule)}
		if c.ctl != nil {
			p := c.ctl.Policy()
			cs.Policy = &p
		}
		cs.Memory = slices.Clone(c.memory)
		st.Candidates = append(st.Candidates, cs)
	}
	return st
}

// Restore replaces what the tuner remembers with st, taken by State from
// a tuner of the same pool; a state out of range is refused and leaves
// the tuner as it was. A candidate that the tuner no longer replays is
// dropped and a new one starts afresh. The twins start again at the next
// observation.
func (t *Tuner) Restore(st State) error {
	if st.Version != StateVersion {
		return fmt.Errorf("tuner state version %d, want %d", st.Version, StateVersion)
	}
	for _, cs := range st.Candidates {
		if cs.Policy == nil {
			continue
		}
		if err := cs.Policy.Validate(); err != nil {
			return fmt.Errorf("candidate %s: %w", cs.Name, err)
		}
	}
	if err := t.live.Restore(st.Controller); err != nil {
		return err
	}
	if !t.opts.Enabled {
		return nil
	}
	t.chosen, t.flatN, t.why = st.Chosen, st.FlatN, st.Why
	t.tunedDay, t.tuneFrom, t.peakNeed, t.lastEst = st.TunedDay, st.TuneFrom, st.PeakNeed, st.LastEst
	t.liveRecent, t.guardedAt = importScores(st.LiveRecent), st.GuardedAt
	t.started, t.pending = time.Time{}, nil // the twins start again at the next observation
	byName := map[string]CandidateState{}
	for _, cs := range st.Candidates {
		byName[cs.Name] = cs
	}
	for _, c := range t.cands {
		cs, ok := byName[c.name]
		if !ok {
			continue
		}
		c.since, c.adopted, c.days, c.recent = cs.Since, cs.Adopted, importScores(cs.Days), importScores(cs.Recent)
		c.memory = slices.Clone(cs.Memory)
		if cs.Policy != nil {
			if err := c.ctl.RestorePolicy(*cs.Policy); err != nil {
				return fmt.Errorf("candidate %s: %w", c.name, err)
			}
		}
	}
	for _, c := range t.cands {
		c.ctl.Replan(t.live)
	}
	t.flats, t.sched = nil, nil
	for _, cs := range st.Candidates {
		switch {
		case cs.Flat > 0:
			t.flats = append(t.flats, &candidate{name: flatName(cs.Flat), flat: cs.Flat, since: cs.Since,
				days: importScores(cs.Days), recent: importScores(cs.Recent),
				hourly: importFlatHours(cs, st.HourlyArrived)})
		case cs.Name == Schedule && len(cs.Schedule) == hoursPerDay:
			t.sched = &candidate{name: Schedule, schedule: slices.Clone(cs.Schedule), lead: t.base.Fleet.BootDelay,
				since: cs.Since, days: importScores(cs.Days), recent: importScores(cs.Recent)}
		}
	}
	if t.find(t.chosen) == nil && t.chosen != Flat && !(t.chosen == Schedule && t.sched != nil) {
		t.chosen, t.flatN = Hybrid, 0 // a candidate no longer replayed
	}
	if c := t.followed(); c != nil {
		t.live.Follow(c.ctl)
		switch t.chosen {
		case Flat:
			t.holdSize(t.flatN)
		case Schedule: // the schedule's largest until the next decision sets the hour's
			t.holdSize(slices.Max(t.sched.schedule))
		}
	}
	return nil
}

// exportLate lists the requests late in each hour.
func (m *hourMisses) exportLate() HourSeries {
	if len(m.list) == 0 {
		return HourSeries{}
	}
	s := HourSeries{From: m.end - int64(len(m.list)), Values: make([]float64, len(m.list))}
	for i, h := range m.list {
		s.Values[i] = h.late
	}
	return s
}

// exportArrived lists the requests of each hour any flat size replayed,
// as the smallest size that replayed it counted them (the one the
// schedule's fit reads: hourTable), over the last maxHours hours.
func exportArrived(flats []*candidate) HourSeries {
	var first, end int64
	seen := false
	for _, c := range flats {
		if n := int64(len(c.hourly.list)); n > 0 {
			if !seen {
				first, end, seen = c.hourly.end-n, c.hourly.end, true
			}
			first, end = min(first, c.hourly.end-n), max(end, c.hourly.end)
		}
	}
	first = max(first, end-int64(maxHours))
	s := HourSeries{From: first, Values: make([]float64, end-first)}
	for i := range s.Values {
		h, _ := hourRecord(flats, 0, first+int64(i))
		s.Values[i] = h.arrived
	}
	return s
}

// importHours is the hours that exportLate and exportArrived listed
// (checkHours checked), from the first whose requests arrived holds: an
// hour late without its requests would read as all of them late.
func importHours(late, arrived HourSeries) hourMisses {
	var m hourMisses
	for i, v := range late.Values {
		hour := late.From + int64(i)
		if a, ok := arrived.at(hour); ok {
			m.add(hour, a, v, maxHours)
		}
	}
	return m
}

// importFlatHours is a flat size's hours from whichever form cs holds.
func importFlatHours(cs CandidateState, arrived HourSeries) hourMisses {
	if len(cs.HourlyLate.Values) > 0 || len(cs.Hourly) == 0 {
		return importHours(cs.HourlyLate, arrived)
	}
	var m hourMisses
	for _, h := range cs.Hourly {
		m.add(h.At, h.Arrived, h.Late, maxHours)
	}
	return m
}

// checkScoreHours refuses hours, one Score each, that do not increase,
// span more than maxHours or lie beyond the years ±100,000 from the
// epoch.
func checkScoreHours(l []Score) error {
	for i, h := range l {
		if h.At < -farHours || h.At > farHours || (i > 0 && h.At <= l[i-1].At) || h.At-l[0].At >= int64(maxHours) {
			return fmt.Errorf("hour %d is out of order or range", h.At)
		}
	}
	return nil
}

// checkMemory refuses calibration memories by day that do not increase,
// span more than the longest window and a day, lie beyond the years
// ±100,000 from the epoch, or hold a memory out of the range a
// controller's policy state allows.
func checkMemory(l []DayMemory) error {
	for i, m := range l {
		if m.Day < -farHours/hoursPerDay || m.Day > farHours/hoursPerDay || (i > 0 && m.Day <= l[i-1].Day) ||
			m.Day-l[0].Day >= int64(maxHours/hoursPerDay) {
			return fmt.Errorf("day %d is out of order or range", m.Day)
		}
		if !(m.LnTail <= 0 && m.LnTail > -100) {
			return fmt.Errorf("day %d holds the memory %v, want in (-100, 0]", m.Day, m.LnTail)
		}
	}
	return nil
}

// farHours bounds the hours a state may name: the years ±100,000 from
// the epoch.
const farHours = 100_000 * 366 * hoursPerDay

// maxHours bounds a flat size's hours: the longest window and a day.
const maxHours = int((MaxWindow + 24*time.Hour) / time.Hour)

// checkHours refuses hours that span more than maxHours, lie beyond the
// years ±100,000 from the epoch, or hold a figure that is not finite and
// non-negative.
func checkHours(s HourSeries) error {
	if s.From < -farHours || s.From > farHours || len(s.Values) > maxHours {
		return fmt.Errorf("%d hours from hour %d are out of range", len(s.Values), s.From)
	}
	for i, v := range s.Values {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("hour %d holds %v", s.From+int64(i), v)
		}
	}
	return nil
}

func exportScores(l []score) []Score {
	out := make([]Score, len(l))
	for i, s := range l {
		out[i] = Score(s)
	}
	return out
}

func importScores(l []Score) []score {
	out := make([]score, len(l))
	for i, s := range l {
		out[i] = score(s)
	}
	return out
}

// Encode serialises st with encoding/gob, which keeps NaN.
func (st State) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("encoding tuner state: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeState parses what Encode wrote, or the live controller's state
// saved alone (control.State.Encode, as earlier releases saved it): that reads
// as the controller's memory with the tuning started afresh, and fresh
// is true. Corrupt input is an error, never a panic.
func DecodeState(data []byte) (st State, fresh bool, err error) {
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err == nil && st.Version == StateVersion {
		if err := st.check(); err != nil {
			return State{}, false, fmt.Errorf("decoding tuner state: %w", err)
		}
		return st, false, nil
	}
	cs, err := control.DecodeState(data)
	if err != nil {
		return State{}, false, err
	}
	return State{Version: StateVersion, Controller: cs, Chosen: Hybrid}, true, nil
}

// check refuses scores that are not finite and non-negative, flat sizes,
// schedules and hourly records out of range, and a controller state out
// of range.
func (st State) check() error {
	data, err := st.Controller.Encode()
	if err == nil {
		_, err = control.DecodeState(data)
	}
	if err != nil {
		return err
	}
	bad := func(l []Score) bool {
		for _, s := range l {
			for _, v := range []float64{s.Cost, s.Arrived, s.Late} {
				if !(v >= 0) || math.IsInf(v, 0) {
					return true
				}
			}
		}
		return false
	}
	if bad(st.LiveRecent) || st.FlatN < 0 || st.PeakNeed < 0 {
		return fmt.Errorf("live scores, flat size %d or peak need %d out of range", st.FlatN, st.PeakNeed)
	}
	if err := checkHours(st.HourlyArrived); err != nil {
		return fmt.Errorf("the requests by hour: %w", err)
	}
	for _, c := range st.Candidates {
		if bad(c.Days) || bad(c.Recent) || bad(c.Hourly) || c.Flat < 0 {
			return fmt.Errorf("candidate %q: scores or flat size out of range", c.Name)
		}
		if len(c.Schedule) != 0 && (len(c.Schedule) != hoursPerDay || slices.Min(c.Schedule) < 1 || slices.Max(c.Schedule) > planner.MaxFleet) {
			return fmt.Errorf("candidate %q: want %d sizes of 1 to %d a day, have %v", c.Name, hoursPerDay, planner.MaxFleet, c.Schedule)
		}
		if err := checkHours(c.HourlyLate); err != nil {
			return fmt.Errorf("candidate %q: its requests late by hour: %w", c.Name, err)
		}
		if err := checkScoreHours(c.Hourly); err != nil {
			return fmt.Errorf("candidate %q: its hourly record: %w", c.Name, err)
		}
		if err := checkMemory(c.Memory); err != nil {
			return fmt.Errorf("candidate %q: its calibration memory by day: %w", c.Name, err)
		}
	}
	return nil
}
