package control

import (
	"slices"
	"time"
)

// StartKind is how an instance comes to serve: booted cold (launched,
// planner.Fleet.BootDelay) or started warm (a stopped instance of the
// warm tier, its image and weights on disk: planner.Fleet.WarmStart).
// The two take very different times, so StartTimes learns them apart.
type StartKind int

const (
	// ColdBoot is an instance launched and booted: what boot_delay says.
	ColdBoot StartKind = iota
	// WarmStart is a stopped instance of the warm tier started: what
	// warm_start says.
	WarmStart
	startKinds
)

// String names the kind as the configuration's key does.
func (k StartKind) String() string {
	if k == WarmStart {
		return "warm_start"
	}
	return "boot_delay"
}

// FleetRead is what a decision's capacity read shows of the fleet.
type FleetRead struct {
	// Asked is the size the fleet is asked to reach; Ready how many
	// instances serve.
	Asked, Ready int
	// Stopped is how many stopped instances of a warm tier the fleet
	// holds, when StoppedKnown. Unknown, every start counts as a cold
	// boot.
	Stopped      int
	StoppedKnown bool
}

// StartTimes learns how long the fleet takes to bring an instance from
// being asked for to ready, from what it shows at each decision: the size
// it is asked to reach and how many instances serve. A configured boot
// delay (or warm start) that is wrong by half is a silent SLO breach (the
// plan asks too late) or a standing cost (too early); the measured one
// says which.
//
// The fleet owes max(asked − ready, 0) instances at each observation. Each
// owed instance is dated when it was first owed: asked for (at the
// observation), or replacing one that stopped serving (between the last
// observation and this one). An instance asked for while the fleet holds
// k stopped instances of a warm tier is a warm start if it is among the
// first k of the increase (a scale-out starts stopped instances first),
// else a cold boot; replacements and every start of a fleet whose
// stopped count is unknown are cold boots. When more instances serve than
// at the last observation, the owed instances expected to serve first
// (when owed plus their kind's median once five are measured, else the
// Expect'ed time) are settled, each a measured start time of its kind.
// When the debt shrinks otherwise (a scale-in before the boots ended),
// the newest are dropped. An instance seen ready became so between the
// last observation and this one: its start is counted to the middle of
// that span, which makes the estimate unbiased for boots of any length
// (and half a span short for boots that end exactly at an observation).
//
// Call Observe at each decision with what its read showed and the size
// it asked for, so that a request is dated when it was made.
//
// The zero value is ready to use; it is not safe for concurrent use.
type StartTimes struct {
	owed     []owedStart                 // oldest first
	measured [startKinds][]time.Duration // the last maxStarts start times of each kind, oldest first
	expect   [startKinds]time.Duration   // Expect's start times
	asked    int                         // the size asked for at the last observation
	ready    int                         // ready instances at the last observation
	held     int                         // stopped instances left after the last observation's requests
	heldOK   bool                        // held is known
	last     time.Time                   // the last observation
	seen     bool                        // an observation was made
	recorded int                         // starts measured since the zero value or Restore
}

// owedStart is an instance the fleet owes: since when (zero: unknown)
// and how it starts.
type owedStart struct {
	since time.Time
	kind  StartKind
}

// Start-time learning bounds: the estimate is made from the last
// maxStarts starts, once minStarts have been measured.
const (
	maxStarts = 128
	minStarts = 5
)

// Expect sets the start times assumed for each kind until five of it are
// measured (the configured boot_delay and warm_start): they tell which
// owed instance a newly serving one was, a warm start asked a minute ago
// before a cold boot asked five minutes ago. Zero assumes the oldest
// owed serves first.
func (s *StartTimes) Expect(cold, warm time.Duration) {
	s.expect = [startKinds]time.Duration{ColdBoot: cold, WarmStart: warm}
}

// Observe records one decision at now: read is what the fleet showed
// before it, asked the size the decision asked for (read.Asked when it
// changed nothing). An increase found in read.Asked was asked elsewhere
// since the last observation (a scheduled policy, the console): it
// starts warm as many as the fleet held stopped after the last one.
func (s *StartTimes) Observe(now time.Time, read FleetRead, asked int) {
	stoppedBefore := 0
	if s.heldOK && read.StoppedKnown {
		stoppedBefore = s.held
	}
	s.observe(now, read.Asked, read.Ready, stoppedBefore)
	s.held, s.heldOK = max(read.Stopped, 0), read.StoppedKnown
	if asked != read.Asked {
		warm := s.observe(now, asked, read.Ready, s.held)
		s.held -= warm
	}
}

// observe records the fleet asked to reach asked with ready serving at
// now, the increase since the last observation starting warm up to
// stopped; it returns how many of the increase start warm.
func (s *StartTimes) observe(now time.Time, asked, ready, stopped int) (warm int) {
	asked, ready = max(asked, 0), max(ready, 0)
	if s.seen && ready > s.ready {
		s.settle(s.last.Add(now.Sub(s.last)/2), ready-s.ready)
	}
	owed := max(asked-ready, 0)
	if len(s.owed) > owed {
		s.owed = s.owed[:owed] // the newest were cancelled
	}
	// New debts are requests made now (asked for more) or replacements of
	// instances that stopped serving since the last look (dated to its
	// middle, and older than the requests); before the first look, unknown.
	added := max(owed-len(s.owed), 0)
	requests := min(max(asked-s.asked, 0), added)
	warm = min(requests, max(stopped, 0))
	replaced, requested := time.Time{}, time.Time{}
	if s.seen {
		replaced, requested = s.last.Add(now.Sub(s.last)/2), now
	}
	for range added - requests {
		s.owed = append(s.owed, owedStart{replaced, ColdBoot})
	}
	for i := range requests {
		kind := ColdBoot
		if i < warm {
			kind = WarmStart
		}
		s.owed = append(s.owed, owedStart{requested, kind})
	}
	s.asked, s.ready, s.last, s.seen = asked, ready, now, true
	return warm
}

// settle records n owed instances as serving from readyAt: those
// expected to serve first (expectedAt), the oldest first among equals.
func (s *StartTimes) settle(readyAt time.Time, n int) {
	n = min(n, len(s.owed))
	typical := s.typical()
	order := make([]int, len(s.owed))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return expectedAt(s.owed[a], typical).Compare(expectedAt(s.owed[b], typical))
	})
	settled := make([]bool, len(s.owed))
	for _, i := range order[:n] {
		settled[i] = true
		if o := s.owed[i]; !o.since.IsZero() && readyAt.After(o.since) {
			s.record(o.kind, readyAt.Sub(o.since))
		}
	}
	left := s.owed[:0]
	for i, o := range s.owed {
		if !settled[i] {
			left = append(left, o)
		}
	}
	s.owed = left
}

// typical is each kind's typical start time: the measured median once
// five are measured, else Expect's.
func (s *StartTimes) typical() [startKinds]time.Duration {
	t := s.expect
	for kind := range StartKind(startKinds) {
		if est, ok := s.Estimate(kind); ok {
			t[kind] = est.Median
		}
	}
	return t
}

// expectedAt is when an owed instance is expected to serve: when it was
// owed plus its kind's typical start time (an unknown since: first).
func expectedAt(o owedStart, typical [startKinds]time.Duration) time.Time {
	if o.since.IsZero() {
		return o.since
	}
	return o.since.Add(typical[o.kind])
}

func (s *StartTimes) record(kind StartKind, d time.Duration) {
	m := s.measured[kind]
	if len(m) == maxStarts {
		m = slices.Delete(m, 0, 1)
	}
	s.measured[kind] = append(m, d)
	s.recorded++
}

// Measured returns the start times of kind the estimate is made from,
// oldest first: what a state file keeps across restarts (Restore).
func (s *StartTimes) Measured(kind StartKind) []time.Duration {
	return slices.Clone(s.measured[kind])
}

// Recorded counts the starts of either kind measured since the zero
// value or Restore: it changes when Measured does.
func (s *StartTimes) Recorded() int { return s.recorded }

// Restore replaces the measured start times with saved ones (Measured of
// each kind), keeping the last 128 of each of those that are positive;
// the debts in flight and the last observation start afresh, Expect's
// times stay.
func (s *StartTimes) Restore(cold, warm []time.Duration) {
	*s = StartTimes{expect: s.expect}
	for kind, saved := range [startKinds][]time.Duration{ColdBoot: cold, WarmStart: warm} {
		for _, d := range saved {
			if d > 0 {
				s.record(StartKind(kind), d)
			}
		}
	}
	s.recorded = 0
}

// StartEstimate is what StartTimes has measured of one kind.
type StartEstimate struct {
	// Starts is how many start times the figures come from (the last
	// ones, at most 128).
	Starts int `json:"starts"`
	// Median and P90 are those starts' median and 90th percentile.
	Median time.Duration `json:"median"`
	P90    time.Duration `json:"p90"`
}

// Estimate returns the measured start times of kind, and whether enough
// starts (five) were seen for them to stand in for a configured boot
// delay or warm start.
func (s *StartTimes) Estimate(kind StartKind) (StartEstimate, bool) {
	m := s.measured[kind]
	if len(m) == 0 {
		return StartEstimate{}, false
	}
	sorted := slices.Sorted(slices.Values(m))
	at := func(q float64) time.Duration { return sorted[min(int(q*float64(len(sorted))), len(sorted)-1)] }
	return StartEstimate{Starts: len(sorted), Median: at(0.5), P90: at(0.9)}, len(sorted) >= minStarts
}
