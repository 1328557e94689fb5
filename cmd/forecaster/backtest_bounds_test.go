package main

import (
	"strings"
	"testing"
)

// Every number the backtest takes has a range, checked before anything is
// allocated: each bad flag set exits 2 (a usage error) with a message that
// names the flag, and none panics. The first three are values that could
// otherwise run out of memory or run for minutes.
func TestBacktestBounds(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"huge fleet of tiny instances", []string{"--max", "1000000000", "--gpu-rps", "1e-6"}, "--max 1000000000: must be in [1, 100000]"},
		{"boot of years", []string{"--gpu-rps", "5", "--boot", "30000h"}, "--boot 30000h0m0s: must be in [0s, 24h0m0s]"},
		{"centuries of synthetic demand", []string{"--gpu-rps", "5", "--synthetic-days", "100000"}, "--synthetic-days 100000: must be in [1, 366]"},
		{"no synthetic days", []string{"--gpu-rps", "5", "--synthetic-days", "0"}, "--synthetic-days 0"},
		{"steps × instances", []string{"--max", "100000", "--gpu-rps", "1e-3"}, "too much work"},
		{"frontier × steps × instances", []string{"--max", "3000", "--gpu-rps", "1e-3", "--frontier"}, "the frontier's"},
		{"trace steps", []string{"--gpu-rps", "5", "--synthetic-days", "366", "--step", "1s"}, "--synthetic-days 366 at --step 1s is 31622400 steps"},
		{"step too fine", []string{"--gpu-rps", "5", "--step", "1ms"}, "--step 1ms: must be in [1s, 168h0m0s]"},
		{"step too coarse", []string{"--gpu-rps", "5", "--step", "720h"}, "--step 720h0m0s"},
		{"gpu-rps too small", []string{"--gpu-rps", "1e-12"}, "--gpu-rps 1e-12: must be in [1e-09, 1e+09]"},
		{"gpu-rps NaN", []string{"--gpu-rps", "NaN"}, "--gpu-rps NaN"},
		{"negative gpu-rps", []string{"--gpu-rps", "-3"}, "--gpu-rps -3"},
		{"peak instances", []string{"--peak-instances", "1000000"}, "--peak-instances 1000000: must be in [0, 100000]"},
		{"service time", []string{"--service-time", "48h"}, "--service-time 48h0m0s"},
		{"slots", []string{"--gpu-rps", "5", "--slots", "200000"}, "--slots 200000: must be in [1, 100000]"},
		{"min above max", []string{"--gpu-rps", "5", "--min", "20", "--max", "10"}, "--max 10: must be in [20, 100000]"},
		{"reserved above max", []string{"--gpu-rps", "5", "--reserved", "2000"}, "--reserved 2000: must be in [0, --max 1000]"},
		{"price", []string{"--gpu-rps", "5", "--price", "1e300"}, "--price 1e+300"},
		{"reserved price", []string{"--gpu-rps", "5", "--reserved-price", "-1"}, "--reserved-price -1"},
		{"slo", []string{"--gpu-rps", "5", "--slo", "2h"}, "--slo 2h0m0s"},
		{"slo target", []string{"--gpu-rps", "5", "--slo-target", "1"}, "--slo-target 1: must be in [0.5, 1)"},
		{"forecast quantile", []string{"--gpu-rps", "5", "--forecast-quantile", "0.2"}, "--forecast-quantile 0.2"},
		{"sizing", []string{"--gpu-rps", "5", "--sizing", "guess"}, `--sizing "guess"`},
		{"refit", []string{"--gpu-rps", "5", "--refit", "720h"}, "--refit 720h0m0s"},
		{"refit off the grid", []string{"--gpu-rps", "5", "--refit", "45m"}, "--refit 45m0s: must be a multiple of the forecast step 30m0s"},
		{"forecast step", []string{"--gpu-rps", "5", "--forecast-step", "10s"}, "--forecast-step 10s"},
		{"forecast step off the grid", []string{"--gpu-rps", "5", "--step", "7m", "--forecast-step", "30m"}, "--forecast-step 30m0s: must be a multiple of the demand's step 7m0s"},
		{"timeout", []string{"--gpu-rps", "5", "--timeout", "48h"}, "--timeout 48h0m0s"},
		{"boot spread", []string{"--gpu-rps", "5", "--boot-spread", "48h"}, "--boot-spread 48h0m0s"},
		{"drain", []string{"--gpu-rps", "5", "--drain", "48h"}, "--drain 48h0m0s"},
		{"metrics lag", []string{"--gpu-rps", "5", "--metrics-lag", "2h"}, "--metrics-lag 2h0m0s"},
		{"max step", []string{"--gpu-rps", "5", "--max-step", "5000"}, "--max-step 5000: must be in [0, --max 1000]"},
		{"min interval", []string{"--gpu-rps", "5", "--min-interval", "48h"}, "--min-interval 48h0m0s"},
		{"warm-up", []string{"--gpu-rps", "5", "--warm-up", "9000h"}, "--warm-up 9000h0m0s"},
		{"too many slo targets", []string{"--gpu-rps", "5", "--slo-targets", "0.9,0.91,0.92,0.93,0.94,0.95,0.96,0.97,0.98,0.99,0.995"}, "--slo-targets: 11 targets, at most 10"},
		{"spot share", []string{"--gpu-rps", "5", "--spot-share", "1.5"}, "--spot-share 1.5"},
		{"spot interruptions", []string{"--gpu-rps", "5", "--spot-interruptions", "1e9"}, "--spot-interruptions 1e+09"},
		{"spot price", []string{"--gpu-rps", "5", "--spot-price", "Inf"}, "--spot-price +Inf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runForecaster(append([]string{"backtest"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want 2 and ~%q", code, errOut, tc.want)
			}
		})
	}
}
