package datasets

import (
	"strings"
	"testing"
	"time"
)

// Out-of-range generator flags, each refused naming the flag before anything is
// allocated; ordinary values pass.
func TestBounds(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string // "" : accepted
	}{
		{"28 days of history at 1m", stepsErr(StepsIn(28*24*time.Hour, "--history", time.Minute, "--step")), ""},
		{"--history -5h", stepsErr(StepsIn(-5*time.Hour, "--history", time.Minute, "--step")), "--history -5h0m0s must be positive"},
		{"--step 1ns", stepsErr(StepsIn(28*24*time.Hour, "--history", time.Nanosecond, "--step")), "--history 672h0m0s at --step 1ns is 2419200000000000 steps, more than 10000000"},
		{"--boot 30000h at 1s", stepsErr(StepsIn(30000*time.Hour, "--boot", time.Second, "--step")), "--boot 30000h0m0s at --step 1s is 108000000 steps"},
		{"--step 0", stepsErr(StepsIn(time.Hour, "--horizon", 0, "--step")), "--step 0s must be positive"},
		{"--synthetic-days 100000", daysErr(DaysSpan(100000, "--synthetic-days")), "--synthetic-days 100000: want 1 to 36500 days"},
		{"--synthetic-days 0", daysErr(DaysSpan(0, "--synthetic-days")), "want 1 to 36500 days"},
		{"--synthetic-days 28", daysErr(DaysSpan(28, "--synthetic-days")), ""},
		{"--max 1000000000 over 28 days at 1m", CheckCells(40320, "28 days at 1m", 1_000_000_000, "--max"), "--max 1000000000 over 40320 steps (28 days at 1m) is 4.03e+13 cells, more than 200000000"},
		{"--max 1000 over 28 days at 1m", CheckCells(40320, "28 days at 1m", 1000, "--max"), ""},
		{"--max -1", CheckCells(10, "", -1, "--max"), "--max -1: must not be negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.err != nil:
				t.Errorf("refused: %v", tt.err)
			case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
				t.Errorf("error %v, want %q", tt.err, tt.want)
			}
		})
	}
}

func stepsErr(_ int, err error) error          { return err }
func daysErr(_ time.Duration, err error) error { return err }
