// Package backoff computes and waits out exponential retry delays: before
// retry n (n = 1, 2, ...) the wait is Base·2^(n-1), capped at Max, and with
// full jitter a uniformly random part of that. The actuator's back-end
// calls, the collector's store writes and the webhook deliveries all retry
// through it, so that every retry loop doubles, caps and saturates the same
// way instead of each keeping its own arithmetic.
package backoff

import (
	"context"
	"math"
	"time"
)

// Policy is one retry loop's backoff. The zero value waits not at all.
type Policy struct {
	// Base is the delay before the first retry; zero or negative: no wait.
	Base time.Duration
	// Max caps every delay; zero or negative: no cap (delays stop growing
	// at the longest time.Duration rather than overflow).
	Max time.Duration
	// Jitter, if set, returns a number in [0, 1) that scales each delay
	// ("full jitter": a uniform draw spreads the retries of many clients
	// that failed together). Values outside [0, 1] are clamped. Nil: no
	// jitter, each delay is its ceiling.
	Jitter func() float64
}

// Delay returns the wait before retry number retry (1-based; below 1
// counts as 1): Jitter() · min(Max, Base·2^(retry-1)).
func (p Policy) Delay(retry int) time.Duration {
	return p.jitter(p.ceiling(retry))
}

// ceiling is min(Max, Base·2^(retry-1)) without overflowing.
func (p Policy) ceiling(retry int) time.Duration {
	if p.Base <= 0 {
		return 0
	}
	limit := p.Max
	if limit <= 0 {
		limit = math.MaxInt64
	}
	ceiling := min(p.Base, limit)
	for n := 1; n < retry && ceiling < limit; n++ {
		if ceiling > limit/2 {
			return limit
		}
		ceiling *= 2
	}
	return ceiling
}

// jitter scales ceiling by one draw of p.Jitter.
func (p Policy) jitter(ceiling time.Duration) time.Duration {
	if p.Jitter == nil {
		return ceiling
	}
	switch j := p.Jitter(); {
	case j <= 0 || math.IsNaN(j):
		return 0
	case j >= 1:
		return ceiling
	default:
		return time.Duration(j * float64(ceiling))
	}
}

// Sleep waits d or until ctx ends, whichever comes first, and returns
// ctx.Err() in the second case. A d of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
