package actuator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Outcomes of a call through Safe, used in the audit log and in the
// outcome label of prewarm_actuator_calls_total.
const (
	OutcomeOK             = "ok"              // the back-end applied the change
	OutcomeNoop           = "noop"            // nothing to change; the back-end was not asked
	OutcomeRefused        = "refused"         // invalid input or unknown pool; nothing applied
	OutcomeRateLimited    = "rate_limited"    // the pool changed too recently; nothing applied
	OutcomeCircuitOpen    = "circuit_open"    // calls suspended after repeated failures
	OutcomeNotImplemented = "not_implemented" // the back-end lacks this optional method
	OutcomeError          = "error"           // the back-end failed (after retries)
	// OutcomeAuditUnavailable: the change was held because the audit log
	// failed its last write (a full disk); nothing applied.
	OutcomeAuditUnavailable = "audit_unavailable"
)

// ErrAuditUnavailable is returned by Resize (and so SetDesired and Apply)
// while the audit log cannot be written: a resize is never made without a
// record of it. The first change whose record fails is logged in full to
// the process log instead (its record could only be written after the
// back-end answered); from then on every resize is held, its refusal
// offered to the audit log, until a record is written again.
var ErrAuditUnavailable = errors.New("audit log cannot be written: resize held")

// AuditRecord is one line of the audit log. Only these fields are written;
// free text (reason, error) passes through the secret redactor first.
type AuditRecord struct {
	Time    time.Time `json:"time"`
	Op      string    `json:"op"` // set_desired, publish_schedule, release
	Pool    string    `json:"pool,omitempty"`
	Backend string    `json:"backend"`
	// Instance is the released instance (release only).
	Instance string `json:"instance,omitempty"`
	// From is the back-end's desired size before the call, To the size
	// asked for (after bounds and step limits); Requested what the caller
	// wanted. Nil when unknown (refused before reading the pool).
	From      *int `json:"from,omitempty"`
	To        *int `json:"to,omitempty"`
	Requested *int `json:"requested,omitempty"`
	// LimitedBy names the rule that changed Requested into To: "min",
	// "max", "max_step".
	LimitedBy string `json:"limited_by,omitempty"`
	// Steps is the number of schedule steps published (publish only).
	Steps  int    `json:"steps,omitempty"`
	Reason string `json:"reason,omitempty"`
	// RequestID is prewarm's idempotency token for the call, the same on
	// every retry; ProviderRequestID the provider's own ID when the
	// back-end reported one.
	RequestID         string `json:"request_id"`
	ProviderRequestID string `json:"provider_request_id,omitempty"`
	Attempts          int    `json:"attempts,omitempty"`
	Outcome           string `json:"outcome"`
	Error             string `json:"error,omitempty"`
}

// auditLog writes AuditRecords as JSON lines. Writes are serialised so lines
// never interleave. It remembers whether its last write failed, so that
// Safe holds resizes until a record can be written again.
type auditLog struct {
	mu     sync.Mutex
	w      io.Writer
	broken error // the last write's error; nil when it succeeded
}

// unavailable is the error of the last write when it failed, else nil.
func (a *auditLog) unavailable() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.broken
}

func (a *auditLog) write(rec AuditRecord) error {
	if a == nil || a.w == nil {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding audit record: %w", err)
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.w.Write(line); err != nil {
		a.broken = fmt.Errorf("writing audit log: %w", err)
		return a.broken
	}
	a.broken = nil
	return nil
}

func intPtr(v int) *int { return &v }

// NewSyncWriter returns a writer that serialises writes to w, so one audit
// file can be shared by several Safe wrappers without interleaving lines
// (each Safe writes a line in one Write call).
func NewSyncWriter(w io.Writer) io.Writer { return &syncWriter{w: w} }

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
