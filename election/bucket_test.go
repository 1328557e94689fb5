package election

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestBucketIsStableAndInRange(t *testing.T) {
	cases := []struct {
		pool    string
		buckets int
		want    int
	}{
		// FNV-1a 32 of "" is 2166136261, of "a" 3826002220.
		{"", 16, 2166136261 % 16},
		{"a", 16, 3826002220 % 16},
		{"a", 1, 0},
		{"a", 0, 0},
		{"a", -3, 0},
	}
	for _, tc := range cases {
		if got := Bucket(tc.pool, tc.buckets); got != tc.want {
			t.Errorf("Bucket(%q, %d) = %d, want %d", tc.pool, tc.buckets, got, tc.want)
		}
	}
	counts := make([]int, 16)
	for i := range 1600 {
		counts[Bucket(fmt.Sprintf("pool-%d", i), 16)]++
	}
	for b, n := range counts {
		if n < 50 || n > 150 {
			t.Errorf("bucket %d got %d of 1600 pools, want about 100", b, n)
		}
	}
}

func TestTimingsValidate(t *testing.T) {
	cases := []struct {
		name string
		t    Timings
		want string // "" for valid
	}{
		{"defaults", DefaultTimings(), ""},
		{"test periods", fastTimings, ""},
		{"lease under a second", Timings{500 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond}, "election.lease_duration"},
		{"fractional lease", Timings{1500 * time.Millisecond, 600 * time.Millisecond, 100 * time.Millisecond}, "whole seconds"},
		{"lease too long", Timings{time.Hour, 10 * time.Second, 2 * time.Second}, "election.lease_duration"},
		{"deadline not shorter", Timings{15 * time.Second, 15 * time.Second, 2 * time.Second}, "election.renew_deadline"},
		{"deadline within jitter", Timings{15 * time.Second, 2400 * time.Millisecond, 2 * time.Second}, "election.retry_period"},
		{"retry too short", Timings{15 * time.Second, 10 * time.Second, time.Millisecond}, "election.retry_period"},
	}
	for _, tc := range cases {
		err := tc.t.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
}
