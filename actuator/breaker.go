package actuator

import (
	"sync"
	"time"
)

// BreakerState is the state of a pool's circuit breaker.
type BreakerState int

// Circuit breaker states. Closed lets calls through; Open refuses them with
// ErrCircuitOpen and leaves capacity where it is; HalfOpen, after the
// cool-off, lets one trial call through: success closes the breaker, failure
// opens it again for another cool-off.
const (
	BreakerClosed BreakerState = iota
	BreakerHalfOpen
	BreakerOpen
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerHalfOpen:
		return "half-open"
	case BreakerOpen:
		return "open"
	}
	return "unknown"
}

// breaker counts consecutive failures of logical calls (after retries).
type breaker struct {
	mu        sync.Mutex
	threshold int
	coolOff   time.Duration
	state     BreakerState
	failures  int
	openedAt  time.Time
	trial     bool // a half-open trial call is in flight
}

// allow reports whether a call may proceed at now. In half-open state only
// one trial is let through at a time.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if now.Sub(b.openedAt) < b.coolOff {
			return false
		}
		b.state = BreakerHalfOpen
		b.trial = true
		return true
	case BreakerHalfOpen:
		if b.trial {
			return false
		}
		b.trial = true
		return true
	}
	return true
}

// success records a successful call; it reports whether the breaker was
// not closed before (a recovery worth logging).
func (b *breaker) success() (recovered bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	recovered = b.state != BreakerClosed
	b.state, b.failures, b.trial = BreakerClosed, 0, false
	return recovered
}

// failure records a failed call at now; it reports whether this failure
// opened the breaker, and the consecutive failure count.
func (b *breaker) failure(now time.Time) (opened bool, failures int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	if b.state == BreakerOpen {
		// A call let through before the breaker opened (concurrent
		// releases) failed late: already open, no second trip or alert,
		// and the cool-off is not extended.
		return false, b.failures
	}
	b.trial = false
	if b.state == BreakerHalfOpen || b.failures >= b.threshold {
		opened = true
		b.state = BreakerOpen
		b.openedAt = now
	}
	return opened, b.failures
}

// abandon ends a call that neither succeeded nor failed on the back-end's
// account (the caller's context ended, or the input was refused).
func (b *breaker) abandon() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerHalfOpen {
		b.trial = false
	}
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
