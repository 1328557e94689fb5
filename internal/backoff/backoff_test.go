package backoff

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	const ms = time.Millisecond
	half := func() float64 { return 0.5 }
	tests := []struct {
		name   string
		policy Policy
		// want[i] is the delay before retry i+1.
		want []time.Duration
	}{
		{"doubles up to the cap", Policy{Base: 500 * ms, Max: 5 * time.Second},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}},
		{"no cap keeps doubling", Policy{Base: 500 * ms},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"a base above the cap starts at the cap", Policy{Base: time.Hour, Max: time.Minute},
			[]time.Duration{time.Minute, time.Minute}},
		{"a cap that is not a power of two of the base", Policy{Base: 200 * ms, Max: 700 * ms},
			[]time.Duration{200 * ms, 400 * ms, 700 * ms, 700 * ms}},
		{"full jitter scales the ceiling", Policy{Base: 200 * ms, Max: 2 * time.Second, Jitter: half},
			[]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{"jitter of zero waits not at all", Policy{Base: time.Second, Jitter: func() float64 { return 0 }},
			[]time.Duration{0, 0}},
		{"jitter above one is clamped to the ceiling", Policy{Base: time.Second, Max: 3 * time.Second, Jitter: func() float64 { return 7 }},
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{"negative or NaN jitter is clamped to zero", Policy{Base: time.Second, Jitter: func() float64 { return math.NaN() }},
			[]time.Duration{0}},
		{"no base waits not at all", Policy{Max: time.Second}, []time.Duration{0, 0}},
		{"zero value waits not at all", Policy{}, []time.Duration{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.policy.Delay(i + 1); got != want {
					t.Errorf("Delay(%d) = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

// Far-off retries saturate instead of overflowing into short or negative
// waits, and retry numbers below 1 count as the first.
func TestDelayEdges(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		retry  int
		want   time.Duration
	}{
		{"capped, retry 10000", Policy{Base: time.Hour, Max: 10 * time.Second}, 10000, 10 * time.Second},
		{"uncapped, retry 10000", Policy{Base: 500 * time.Millisecond}, 10000, math.MaxInt64},
		{"uncapped, one nanosecond, retry 64", Policy{Base: 1}, 64, math.MaxInt64},
		{"uncapped, one nanosecond, retry 63", Policy{Base: 1}, 63, 1 << 62},
		{"cap just below the longest duration", Policy{Base: 3, Max: math.MaxInt64 - 1}, 200, math.MaxInt64 - 1},
		{"almost-one jitter on the longest wait", Policy{Base: 1, Jitter: func() float64 { return math.Nextafter(1, 0) }}, 100, math.MaxInt64 - 1023},
		{"retry 0", Policy{Base: time.Second, Max: time.Minute}, 0, time.Second},
		{"retry -5", Policy{Base: time.Second, Max: time.Minute}, -5, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Delay(tt.retry); got != tt.want {
				t.Errorf("Delay(%d) = %v, want %v", tt.retry, got, tt.want)
			}
		})
	}
}

// Jitter is drawn once per delay, so each retry gets its own draw.
func TestDelayDrawsJitterEachTime(t *testing.T) {
	draws := []float64{0.25, 0.75, 0.5}
	p := Policy{Base: time.Second, Max: time.Second, Jitter: func() float64 {
		d := draws[0]
		draws = draws[1:]
		return d
	}}
	for i, want := range []time.Duration{250 * time.Millisecond, 750 * time.Millisecond, 500 * time.Millisecond} {
		if got := p.Delay(1); got != want {
			t.Errorf("draw %d: Delay = %v, want %v", i, got, want)
		}
	}
}

func TestSleep(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelExpired()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		// minWait, maxWait bound how long Sleep took.
		minWait, maxWait time.Duration
		wantErr          error
	}{
		{"waits the delay", context.Background(), 30 * time.Millisecond, 30 * time.Millisecond, 5 * time.Second, nil},
		{"zero returns at once", context.Background(), 0, 0, time.Second, nil},
		{"negative returns at once", context.Background(), -time.Hour, 0, time.Second, nil},
		{"an ended context returns at once", canceled, time.Hour, 0, time.Second, context.Canceled},
		{"an ended context with zero delay reports it", canceled, 0, 0, time.Second, context.Canceled},
		{"a deadline cuts the wait short", expired, time.Hour, 0, 10 * time.Second, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := Sleep(tt.ctx, tt.d)
			took := time.Since(start)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("Sleep(%v) = %v, want %v", tt.d, err, tt.wantErr)
			}
			if took < tt.minWait || took > tt.maxWait {
				t.Errorf("Sleep(%v) took %v, want between %v and %v", tt.d, took, tt.minWait, tt.maxWait)
			}
		})
	}
}

// A cancel while Sleep waits ends the wait.
func TestSleepCancelWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, time.Hour) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sleep still waiting 5s after its context was canceled")
	}
}
