package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
)

// A pool's decision history is kept in the state file (service/state), so
// that GET /api/v1/pools/NAME/decisions pages through it after restarts
// with bounded memory: each page is one read of the file. Not every tick
// is a new entry: a decision is recorded when it made a change (applied,
// limited) or when what it decided differs from the entry before it (the
// mode, the gate, the tuner's candidate, the wished or desired size, the
// outcome, the limit or the error). A pool holding steady for a week is one entry, not 10,000.

// keepDecisions is how many entries each pool keeps (a few hundred KB).
const keepDecisions = 2000

// Decision is one entry of a pool's decision history.
type Decision struct {
	// Seq numbers the pool's entries, newest highest; the API's `before`
	// cursor.
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
	// Mode and Gate are the mode in force and the forecast level followed;
	// Candidate the tuner's candidate in force and CandidateWhy why it
	// was chosen.
	Mode         poolspec.Mode `json:"mode"`
	Gate         string        `json:"gate,omitempty"`
	Candidate    string        `json:"candidate,omitempty"`
	CandidateWhy string        `json:"candidate_why,omitempty"`
	// Current, Ready: the capacity read; Wished what the policy wanted;
	// Desired what was (or would be) applied within the limits.
	Current int `json:"current"`
	Ready   int `json:"ready"`
	Wished  int `json:"wished"`
	Desired int `json:"desired"`
	// Outcome is applied, unchanged, limited, rate_limited, not_applied or
	// failed; LimitedBy the limit that cut Wished (min, max, max_step);
	// NextChangeAt when min_interval allows the next change.
	Outcome      string    `json:"outcome"`
	LimitedBy    string    `json:"limited_by,omitempty"`
	NextChangeAt time.Time `json:"next_change_at,omitzero"`
	DemandRPS    Number    `json:"demand_rps"`
	Reason       string    `json:"reason"`
	Error        string    `json:"error,omitempty"`
	// From is the size a change stepped from and RequestID its
	// idempotency token, the audit log line's request_id (applied and
	// limited changes only).
	From      *int   `json:"from,omitempty"`
	RequestID string `json:"request_id,omitempty"`
}

// same reports whether d decided what prev did and made no change, so
// that it need not be recorded: after a change, holding the size it made
// is the same decision.
func (d Decision) same(prev Decision) bool {
	if d.changed() {
		return false
	}
	outcome := prev.Outcome
	if prev.changed() {
		outcome = OutcomeUnchanged
	}
	return d.Mode == prev.Mode && d.Gate == prev.Gate && d.Candidate == prev.Candidate && d.Wished == prev.Wished && d.Desired == prev.Desired &&
		d.Outcome == outcome && (d.LimitedBy == prev.LimitedBy || prev.changed()) && d.Error == prev.Error
}

// changed reports whether the decision changed the pool's size.
func (d Decision) changed() bool { return d.Outcome == OutcomeApplied || d.Outcome == OutcomeLimited }

// decisionOf is the entry of the pool's last decision. s.mu held.
func decisionOf(st PoolStatus) Decision {
	d := Decision{At: st.At, Mode: st.Mode, Gate: st.Gate, Candidate: st.Tuning.Candidate, CandidateWhy: st.Tuning.Why,
		Current: st.Current, Ready: st.Ready, Wished: st.Wished,
		Desired: st.Desired, Outcome: st.Outcome, LimitedBy: st.LimitedBy, NextChangeAt: st.NextChangeAt,
		DemandRPS: st.DemandRPS, Reason: st.Reason, Error: st.Error}
	if st.Outcome == OutcomeFailed && st.Error != "" {
		d.DemandRPS = NaN() // the decision did not get to read it
	}
	if a := st.Applied; a != nil && a.At.Equal(st.At) && (st.Outcome == OutcomeApplied || st.Outcome == OutcomeLimited) {
		from := a.From
		d.RequestID, d.From = a.RequestID, &from
	}
	return d
}

// recordDecision adds the pool's last decision to its history when it is
// new (decision goroutine; takes s.mu).
func (s *Service) recordDecision(p *pool) {
	db := s.deps.State
	if db == nil || s.deps.Preview {
		return
	}
	s.mu.Lock()
	d := decisionOf(p.status)
	s.mu.Unlock()
	if d.At.IsZero() || (p.decisions.seq > 0 && d.same(p.decisions.last)) {
		return
	}
	d.Seq = p.decisions.seq + 1
	v, err := json.Marshal(d)
	if err != nil {
		s.log.Error("decision not recorded", "pool", p.spec.Name, "err", err)
		return
	}
	db.SaveDecision(p.spec.Name, d.Seq, v, keepDecisions)
	p.decisions.seq, p.decisions.last = d.Seq, d
}

// decisionLog is where a pool's history stands (decision goroutine).
type decisionLog struct {
	seq  uint64   // the last entry's number (0: none)
	last Decision // the last entry
}

// restoreDecisions numbers on from the history in the state file.
func (s *Service) restoreDecisions(p *pool) {
	if s.deps.State == nil {
		return
	}
	r, err := s.deps.State.LastDecision(p.spec.Name)
	if err != nil {
		s.log.Warn("pool's decision history starts afresh", "pool", p.spec.Name, "reason", err)
		return
	}
	if r.Seq == 0 {
		return
	}
	var d Decision
	if err := json.Unmarshal(r.Value, &d); err != nil {
		s.log.Warn("pool's last recorded decision is unreadable; numbering on from it", "pool", p.spec.Name, "reason", err)
	}
	d.Seq = r.Seq
	p.decisions = decisionLog{seq: r.Seq, last: d}
}

// DecisionPage is GET /api/v1/pools/NAME/decisions: newest first, and the
// cursor of the next (older) page when there is one.
type DecisionPage struct {
	Pool      string     `json:"pool"`
	Decisions []Decision `json:"decisions"`
	// Next is the `before` of the next page; 0 when this is the last.
	Next uint64 `json:"next,omitempty"`
	// Persisted is false when the service runs without a state file
	// (serve --once): no history is kept then.
	Persisted bool `json:"persisted"`
}

// errBadPage marks a page request the API answers 400.
var errBadPage = errors.New("bad page")

// Decisions returns a page of a pool's decision history: up to limit
// entries older than before (0: from the newest).
func (s *Service) Decisions(name string, before uint64, limit int) (DecisionPage, error) {
	if _, ok := s.PoolStatus(name); !ok {
		return DecisionPage{}, fmt.Errorf("%w %q", ErrUnknownPool, name)
	}
	page := DecisionPage{Pool: name, Decisions: []Decision{}}
	db := s.deps.State
	if db == nil {
		return page, nil
	}
	recs, more, err := db.Decisions(name, before, limit)
	if errors.Is(err, state.ErrBadPage) {
		return page, fmt.Errorf("%w: limit %d: %w", errBadPage, limit, err)
	}
	if err != nil {
		return page, err
	}
	page.Persisted = true
	for _, r := range recs {
		var d Decision
		if err := json.Unmarshal(r.Value, &d); err != nil {
			return page, fmt.Errorf("decision %d of pool %q in the state file: %w", r.Seq, name, err)
		}
		d.Seq = r.Seq
		page.Decisions = append(page.Decisions, d)
	}
	if more && len(recs) > 0 {
		page.Next = recs[len(recs)-1].Seq
	}
	return page, nil
}
