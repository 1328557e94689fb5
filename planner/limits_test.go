package planner

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		want   []string // the keys out of range, in order
	}{
		{"defaults", DefaultLimits(), nil},
		{"no min", Limits{MaxInstances: 1}, nil},
		{"step of the whole fleet", Limits{MinInstances: 1, MaxInstances: 8, MaxStep: 8, MinInterval: 24 * time.Hour}, nil},
		{"negative min", Limits{MinInstances: -1, MaxInstances: 4}, []string{"min"}},
		{"max below min", Limits{MinInstances: 5, MaxInstances: 3}, []string{"max"}},
		{"no max", Limits{}, []string{"max"}},
		{"max past the sanity limit", Limits{MaxInstances: MaxFleet + 1}, []string{"max"}},
		{"step above max", Limits{MaxInstances: 4, MaxStep: 5}, []string{"max_step"}},
		{"negative step", Limits{MaxInstances: 4, MaxStep: -1}, []string{"max_step"}},
		{"negative interval", Limits{MaxInstances: 4, MinInterval: -time.Second}, []string{"min_interval"}},
		{"interval past a day", Limits{MaxInstances: 4, MinInterval: 25 * time.Hour}, []string{"min_interval"}},
		{"several", Limits{MinInstances: -1, MaxInstances: 4, MaxStep: 9}, []string{"min", "max_step"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limits.Validate()
			var keys []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var re *RangeError
					if !errors.As(e, &re) {
						t.Fatalf("%v is not a *RangeError", e)
					}
					if !strings.HasPrefix(re.Error(), re.Key+" ") {
						t.Errorf("%q does not start with its key %s", re, re.Key)
					}
					keys = append(keys, re.Key)
				}
			}
			if strings.Join(keys, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Validate() = %v: keys %v, want %v", err, keys, tt.want)
			}
		})
	}
}

// Every limit is in the range table under its YAML key, and its default
// lies in its range.
func TestLimitsRangeTableNamesEveryKey(t *testing.T) {
	var seen rangeKeys
	DefaultLimits().CheckRanges(&seen)
	if got := strings.Join(seen.keys, ","); got != "min,max,max_step,min_interval" {
		t.Errorf("range table keys %s, want min,max,max_step,min_interval", got)
	}
	if len(seen.outside) > 0 {
		t.Errorf("defaults outside their ranges: %v", seen.outside)
	}
}

// rangeKeys records the keys a range table names, and those whose value
// lies outside.
type rangeKeys struct{ keys, outside []string }

func (r *rangeKeys) Int(x Range[int]) { r.add(x.Key, x.Contains()) }

func (r *rangeKeys) Duration(x Range[time.Duration]) { r.add(x.Key, x.Contains()) }

func (r *rangeKeys) Float(x Range[float64]) { r.add(x.Key, x.Contains()) }

func (r *rangeKeys) add(key string, in bool) {
	r.keys = append(r.keys, key)
	if !in {
		r.outside = append(r.outside, key)
	}
}

// A range says what it wants as a message states it, and a setting that
// a negative value switches off takes any negative value besides its
// range.
func TestRangeWantAndContains(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		r    Range[time.Duration]
		in   bool
		want string
	}{
		{Range[time.Duration]{Value: 2 * day, Lo: day, Hi: 4 * day}, true, "24h0m0s to 96h0m0s"},
		{Range[time.Duration]{Value: time.Hour, Lo: day, Hi: 4 * day, HiKey: "tune.window"}, false, "24h0m0s to tune.window 96h0m0s"},
		{Range[time.Duration]{Value: -time.Second, Lo: day, Hi: 4 * day, NegativeOff: true}, true, "24h0m0s to 96h0m0s, or negative for none"},
		{Range[time.Duration]{Value: 0, Lo: day, Hi: 4 * day, NegativeOff: true}, false, "24h0m0s to 96h0m0s, or negative for none"},
		{Range[time.Duration]{Value: -time.Second, Lo: day, Hi: 4 * day}, false, "24h0m0s to 96h0m0s"},
	} {
		if got := tc.r.Contains(); got != tc.in {
			t.Errorf("%+v: Contains() = %v, want %v", tc.r, got, tc.in)
		}
		if got := tc.r.Want(); got != tc.want {
			t.Errorf("%+v: Want() = %q, want %q", tc.r, got, tc.want)
		}
	}
}
