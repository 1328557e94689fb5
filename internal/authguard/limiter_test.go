package authguard

import (
	"fmt"
	"testing"
	"time"
)

// The failed-authentication buckets: a burst, then one failure per
// interval, per client and for everyone, with the wait until the next
// check.
func TestAuthLimiterBuckets(t *testing.T) {
	perClient := Limit{Burst: 3, Every: 6 * time.Second}
	global := Limit{Burst: 5, Every: time.Second}
	type step struct {
		after      time.Duration // clock advance before the step
		client     string
		fail       bool // spend a failure instead of checking
		wantWait   time.Duration
		wantGlobal bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a fresh client is checked", []step{{client: "a"}}},
		{"the burst, then a wait of one interval", []step{
			{client: "a", fail: true}, {client: "a", fail: true}, {client: "a"},
			{client: "a", fail: true}, {client: "a", wantWait: 6 * time.Second},
			{after: 2 * time.Second, client: "a", wantWait: 4 * time.Second},
			{after: 4 * time.Second, client: "a"},
			{client: "a", fail: true}, {client: "a", wantWait: 6 * time.Second},
		}},
		{"a blocked client does not block another", []step{
			{client: "a", fail: true}, {client: "a", fail: true}, {client: "a", fail: true},
			{client: "a", wantWait: 6 * time.Second}, {client: "b"},
		}},
		{"a refill never exceeds the burst", []step{
			{client: "a", fail: true}, {after: time.Hour, client: "a", fail: true},
			{client: "a", fail: true}, {client: "a", fail: true},
			{client: "a", wantWait: 6 * time.Second},
		}},
		{"many clients hit the global limit", []step{
			{client: "a", fail: true}, {client: "b", fail: true}, {client: "c", fail: true},
			{client: "d", fail: true}, {client: "e", fail: true},
			{client: "f", wantWait: time.Second, wantGlobal: true},
			{after: 500 * time.Millisecond, client: "f", wantWait: 500 * time.Millisecond, wantGlobal: true},
			{after: 500 * time.Millisecond, client: "f"},
		}},
		{"the client's own limit is reported before the global one", []step{
			{client: "a", fail: true}, {client: "a", fail: true}, {client: "a", fail: true},
			{client: "b", fail: true}, {client: "c", fail: true},
			{client: "a", wantWait: 6 * time.Second},
			{client: "b", wantWait: time.Second, wantGlobal: true},
		}},
		{"a failure on an empty bucket adds no wait", []step{
			{client: "a", fail: true}, {client: "a", fail: true}, {client: "a", fail: true},
			{client: "a", fail: true}, {client: "a", fail: true},
			{client: "a", wantWait: 6 * time.Second},
		}},
		{"a clock going back refills nothing", []step{
			{client: "a", fail: true}, {client: "a", fail: true}, {client: "a", fail: true},
			{after: -time.Hour, client: "a", wantWait: 6 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
			l := newAuthLimiter(perClient, global, func() time.Time { return now })
			for i, s := range tt.steps {
				now = now.Add(s.after)
				if s.fail {
					l.fail(s.client)
					continue
				}
				if wait, isGlobal := l.blocked(s.client); wait != s.wantWait || isGlobal != s.wantGlobal {
					t.Errorf("step %d, client %s: wait %v (global %v), want %v (global %v)", i, s.client, wait, isGlobal, s.wantWait, s.wantGlobal)
				}
			}
		})
	}
}

// Past maxClients addresses, the buckets that refilled are forgotten to
// make room; while none has, a new address is held to the global limit
// only.
func TestAuthLimiterForgetsRecoveredClients(t *testing.T) {
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	l := newAuthLimiter(Limit{Burst: 1, Every: time.Minute}, Limit{Burst: 1 << 30, Every: time.Nanosecond},
		func() time.Time { return now })
	for i := range maxClients {
		l.fail(fmt.Sprintf("client-%d", i))
	}
	l.fail("one-too-many")
	if w, _ := l.blocked("one-too-many"); w != 0 {
		t.Errorf("an address beyond maxClients while none refilled: wait %v, want none (not tracked)", w)
	}
	if w, _ := l.blocked("client-0"); w != time.Minute {
		t.Errorf("a tracked address: wait %v, want 1m", w)
	}
	now = now.Add(time.Minute)
	l.fail("newcomer")
	if n := len(l.clients); n != 1 {
		t.Errorf("%d buckets kept after all refilled and one newcomer failed, want 1", n)
	}
	if w, _ := l.blocked("newcomer"); w != time.Minute {
		t.Errorf("the newcomer: wait %v, want 1m", w)
	}
}
