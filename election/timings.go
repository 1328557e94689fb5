package election

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// Timings are the leader-election periods every Lease of a replica uses.
// LeaseDuration is how long other replicas wait without seeing a renewal
// before they take a Lease over; RenewDeadline is how long the holder keeps
// acting while its renewals fail (it must be shorter, so the holder stops
// first); RetryPeriod is the time between tries, and so between renewals.
//
// A pool file's election: block embeds it, so its keys are declared here
// once.
type Timings struct {
	LeaseDuration time.Duration `yaml:"lease_duration"`
	RenewDeadline time.Duration `yaml:"renew_deadline"`
	RetryPeriod   time.Duration `yaml:"retry_period"`
}

// DefaultTimings are client-go's usual periods: 15s, 10s and 2s.
func DefaultTimings() Timings {
	return Timings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
}

// Bounds of the timings, wide enough for tests and for slow clusters: a
// lease of MinLeaseDuration to MaxLeaseDuration, a retry period of at
// least MinRetryPeriod, and a renew deadline longer than RenewRetryJitter
// retry periods (client-go's leaderelection.JitterFactor), so that a
// renewal can be retried.
const (
	MinLeaseDuration = time.Second
	MaxLeaseDuration = 10 * time.Minute
	MinRetryPeriod   = 10 * time.Millisecond
	RenewRetryJitter = leaderelection.JitterFactor
)

// TimingError is a timing out of its range, or out of step with the
// others: Key is its key under election: (lease_duration), Msg says what
// is wrong with its value. A pool file reports it at the key's line.
type TimingError struct{ Key, Msg string }

// Error names the key with the election: prefix, then what is wrong.
func (e *TimingError) Error() string { return "election." + e.Key + " " + e.Msg }

// Validate checks the timings against each other and their ranges,
// returning the first problem as a *TimingError. The lease duration is
// whole seconds because a Lease stores leaseDurationSeconds: a fraction
// would be cut off and the other replicas would wait less than the
// holder assumes.
func (t Timings) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &TimingError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case t.LeaseDuration < MinLeaseDuration || t.LeaseDuration > MaxLeaseDuration:
		return bad("lease_duration", "%s: must be from %s to %s", t.LeaseDuration, MinLeaseDuration, MaxLeaseDuration)
	case t.LeaseDuration%time.Second != 0:
		return bad("lease_duration", "%s: must be whole seconds (a Lease stores leaseDurationSeconds)", t.LeaseDuration)
	case t.RetryPeriod < MinRetryPeriod:
		return bad("retry_period", "%s: must be at least %s", t.RetryPeriod, MinRetryPeriod)
	case t.RenewDeadline >= t.LeaseDuration:
		return bad("renew_deadline", "%s: must be shorter than election.lease_duration %s, so a leader stops before another can take over",
			t.RenewDeadline, t.LeaseDuration)
	case float64(t.RenewDeadline) <= RenewRetryJitter*float64(t.RetryPeriod):
		return bad("renew_deadline", "%s: must be longer than %.1f x election.retry_period %s, so a renewal can be retried",
			t.RenewDeadline, RenewRetryJitter, t.RetryPeriod)
	}
	return nil
}
