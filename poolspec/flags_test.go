package poolspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/planner"
)

// parseFleet registers the fleet flags on a fresh flag set and parses args.
func parseFleet(t *testing.T, args ...string) (*FleetFlags, *pflag.FlagSet) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	var f FleetFlags
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f, fs
}

// The flags build the planner configuration, refusing values out of
// range, and combinations that cannot hold, as a FlagError naming the flag.
func TestFleetFlagsPlanner(t *testing.T) {
	schedule := filepath.Join(t.TempDir(), "floors")
	if err := os.WriteFile(schedule, []byte("weekdays 09:00-12:00 at least 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		peakRPS float64
		want    string // error text; "" for none
		usage   bool   // the error is a FlagError
		check   func(planner.Config) bool
	}{
		{args: []string{"--gpu-rps", "5"}, check: func(c planner.Config) bool {
			return c.Fleet.RPSPerInstance == 5 && c.Fleet.ServiceTime == 200*time.Millisecond
		}},
		{args: []string{"--service-time", "2s", "--slots", "4"}, check: func(c planner.Config) bool { return c.Fleet.RPSPerInstance == 2 }},
		{args: []string{"--peak-instances", "10"}, peakRPS: 100, check: func(c planner.Config) bool { return c.Fleet.RPSPerInstance > 0 }},
		{args: []string{"--gpu-rps", "5", "--schedule", schedule}, check: func(c planner.Config) bool { return len(c.Windows) == 1 }},
		{args: nil, want: "--gpu-rps (or --peak-instances, or --service-time) is required", usage: true},
		{args: []string{"--gpu-rps", "5", "--peak-instances", "3"}, want: "give one of --gpu-rps, --peak-instances and --service-time", usage: true},
		{args: []string{"--peak-instances", "3"}, want: "--peak-instances: the demand has no positive peak to size from"},
		{args: []string{"--gpu-rps", "-1"}, want: "--gpu-rps -1: must be in [1e-09, 1e+09]", usage: true},
		{args: []string{"--gpu-rps", "5", "--max", "0"}, want: "--max 0: must be in [1, 100000]", usage: true},
		{args: []string{"--gpu-rps", "5", "--reserved", "2000"}, want: "--reserved 2000: must be in [0, --max 1000]", usage: true},
		{args: []string{"--gpu-rps", "5", "--slo-target", "0.2"}, want: "--slo-target 0.2: must be in [0.5, 1)", usage: true},
		{args: []string{"--gpu-rps", "5", "--sizing", "foo"}, want: `--sizing "foo": want erlang-c or utilisation`, usage: true},
		{args: []string{"--gpu-rps", "5", "--time-zone", "Mars/X"}, want: `--time-zone "Mars/X"`, usage: true},
		{args: []string{"--gpu-rps", "5", "--schedule", schedule + ".missing"}, want: "--schedule: open"},
	} {
		f, _ := parseFleet(t, tc.args...)
		c, err := f.Planner(tc.peakRPS)
		var fe *FlagError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want == "" && !tc.check(c):
			t.Errorf("%v: configuration %+v", tc.args, c.Fleet)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		case tc.want != "" && errors.As(err, &fe) != tc.usage:
			t.Errorf("%v: %v is a FlagError: %v, want %v", tc.args, err, !tc.usage, tc.usage)
		}
	}
}

// A pool file and the plain flags that give the same settings build the
// same planner configuration: a pool that names no sizing sizes by an
// Erlang-C queue as the flags do, its service time derived from
// rps_per_instance and slots as the flags derive it from --gpu-rps and
// --slots.
func TestPoolAndFlagsAgree(t *testing.T) {
	for _, tc := range []struct {
		keys string
		args []string
	}{
		{"rps_per_instance: 5", []string{"--gpu-rps", "5"}},
		{"rps_per_instance: 8\n    slots: 4", []string{"--gpu-rps", "8", "--slots", "4"}},
		{"service_time: 2s\n    slots: 4", []string{"--service-time", "2s", "--slots", "4"}},
		{"sizing: utilisation\n    rps_per_instance: 5", []string{"--sizing", "utilisation", "--gpu-rps", "5"}},
		{"rps_per_instance: 5\n    slo_latency: 2s\n    target_utilisation: 1", []string{"--gpu-rps", "5", "--slo", "2s", "--target-util", "1"}},
	} {
		yml := fmt.Sprintf("pools:\n  - name: p\n    backend: dryrun\n    max: %d\n    %s\n", FlagMaxInstances, tc.keys)
		file, err := Parse([]byte(yml), "pool.yml", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.keys, err)
		}
		fromPool, err := file.Pools[0].Planner()
		if err != nil {
			t.Fatalf("%s: %v", tc.keys, err)
		}
		f, _ := parseFleet(t, tc.args...)
		fromFlags, err := f.Planner(0)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if fromPool.Sizing != fromFlags.Sizing || !reflect.DeepEqual(fromPool, fromFlags) {
			t.Errorf("pool %q sizes by %s with %+v,\nflags %v by %s with %+v", tc.keys, fromPool.Sizing, fromPool.Fleet,
				tc.args, fromFlags.Sizing, fromFlags.Fleet)
		}
	}
}

// With --config, the flags the pool sets are refused, each named with
// its key; the others are not.
func TestRefuseOverrides(t *testing.T) {
	extra := map[string]string{"refit": "forecast.refit_every"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--input", "x.csv"}, ""},
		{[]string{"--max", "4", "--gpu-rps", "2"}, "drop --gpu-rps (the pool's rps_per_instance), --max (the pool's max), or change"},
		{[]string{"--refit", "1h"}, "drop --refit (the pool's forecast.refit_every)"},
		{[]string{"--price", "3"}, ""},
		{[]string{"--price", "3", "--slots", "2"}, "drop --slots (the pool's slots), or change the pool in the file (only --price may override it)"},
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		var f FleetFlags
		f.Register(fs)
		fs.String("input", "", "")
		fs.Duration("refit", 0, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := RefuseOverrides(fs, "f.yaml", "p", extra, "price")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The range checks name the flag and the range; 0 may stand for unset.
func TestCheckHelpers(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"int in", CheckInt("--n", 3, 1, 5), ""},
		{"int out", CheckInt("--n", 6, 1, 5), "--n 6: must be in [1, 5]"},
		{"float unset", CheckFloat("--x", 0, 1, 2, true), ""},
		{"float zero", CheckFloat("--x", 0, 1, 2, false), "--x 0: must be in [1, 2]"},
		{"float NaN", CheckFloat("--x", nan(), 1, 2, false), "--x NaN"},
		{"unit open", CheckUnit("--q", 1, false, false), "--q 1: must be in (0, 1)"},
		{"unit closed", CheckUnit("--q", 1, false, true), ""},
		{"unit zero", CheckUnit("--q", 0, true, false), ""},
		{"unit closed out", CheckUnit("--q", 2, false, true), "--q 2: must be in (0, 1]"},
		{"step unset", CheckStep("--s", 0, time.Second, time.Hour, true), ""},
		{"step out", CheckStep("--s", 2*time.Hour, time.Second, time.Hour, false), "--s 2h0m0s: must be in [1s, 1h0m0s]"},
	} {
		var fe *FlagError
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: %v", tc.name, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || !errors.As(tc.err, &fe)):
			t.Errorf("%s: %v, want a FlagError %q", tc.name, tc.err, tc.want)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// A range table names the flag that sets an out-of-range key, with the
// flag that bounds it; a key no flag sets is left to the planner.
func TestCheckRangeTable(t *testing.T) {
	for _, tc := range []struct {
		limits planner.Limits
		want   string
	}{
		{planner.Limits{MinInstances: 1, MaxInstances: 10}, ""},
		{planner.Limits{MinInstances: 1, MaxInstances: 10, MaxStep: 20}, "--max-step 20: must be in [0, --max 10]"},
		{planner.Limits{MinInstances: 5, MaxInstances: 3}, "--max 3: must be in [5, 100000]"},
	} {
		err := CheckRangeTable(tc.limits.CheckRanges, map[string]string{"max-step": "max_step"})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%+v: %v, want %q", tc.limits, err, tc.want)
		}
	}
}

// A span flag reads Go's and Prometheus' units, refuses values out of its
// range naming it, and writes whole days as days.
func TestSpanFlag(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"36h", "1d12h", ""},
		{"7d", "7d", ""},
		{"2w", "14d", ""},
		{"90m", "1h30m", ""},
		{"30m", "", "30m is out of range: must be between 1h and 28d"},
		{"5w", "", "5w is out of range"},
		{"banana", "", "want a duration such as 90m, 36h, 7d or 2w"},
	} {
		var d time.Duration
		f := NewSpanFlag(&d, 24*time.Hour, time.Hour, 28*24*time.Hour)
		err := f.Set(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || f.String() != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.in, f.String(), err, tc.want)
		case tc.err != "" && d != 24*time.Hour:
			t.Errorf("%s: refused, yet the value became %v", tc.in, d)
		}
	}
	for d, want := range map[time.Duration]string{0: "0s", -time.Hour: "-1h0m0s", 48 * time.Hour: "2d", 36 * time.Hour: "1d12h"} {
		if got := FormatSpan(d); got != want {
			t.Errorf("FormatSpan(%v) = %q, want %q", d, got, want)
		}
	}
}

// A flag's help states the range its check uses, rendered from the one
// range table; bounds read as they are typed.
func TestHelpRanges(t *testing.T) {
	table := planner.DefaultConfig().CheckRanges
	for _, tc := range []struct{ key, want string }{
		{"boot_delay", "0 to 24h"},
		{"slots", "1 to 100000"},
		{"slo_quantile", "[0.5, 1)"},
		{"target_utilisation", "(0, 1]"},
		{"forecast_quantile", "[0.5, 0.9999]"},
		{"prices.on_demand_per_hour", "0 to 1e6"},
		{"prices.reserved_instances", "0 to --max"},
	} {
		if got := HelpRange(table, tc.key); got != tc.want {
			t.Errorf("HelpRange(%s) = %q, want %q", tc.key, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0", time.Minute: "1m", 24 * time.Hour: "24h", 7 * 24 * time.Hour: "7d", 36 * time.Hour: "1d12h"} {
		if got := HelpSpan(d); got != want {
			t.Errorf("HelpSpan(%v) = %q, want %q", d, got, want)
		}
	}
	for v, want := range map[float64]string{1e-9: "1e-9", 1e9: "1e9", 0.05: "0.05", 60: "60", 1e6: "1e6"} {
		if got := HelpNumber(v); got != want {
			t.Errorf("HelpNumber(%v) = %q, want %q", v, got, want)
		}
	}
	// Every fleet flag whose pool key has a range says so in its help, but
	// for those with ranges of their own (FleetFlags.CheckRanges): --gpu-rps
	// and --peak-instances, and --min and --max (the pool's limits).
	fs := pflag.NewFlagSet("fleet", pflag.ContinueOnError)
	var f FleetFlags
	f.Register(fs)
	ranged := map[string]bool{}
	table(rangeKeys(ranged))
	for flag, key := range FleetKeys() {
		fl := fs.Lookup(flag)
		if fl == nil || fl.Deprecated != "" || !ranged[key] || flag == "max" || flag == "min" || flag == "gpu-rps" || flag == "peak-instances" {
			continue
		}
		if want := HelpRange(table, key); !strings.Contains(fl.Usage, want) {
			t.Errorf("--%s's help %q does not state its range %q", flag, fl.Usage, want)
		}
	}
}

// rangeKeys is a planner.RangeChecker noting every key a table holds.
type rangeKeys map[string]bool

func (r rangeKeys) Int(x planner.Range[int])                { r[x.Key] = true }
func (r rangeKeys) Duration(x planner.Range[time.Duration]) { r[x.Key] = true }
func (r rangeKeys) Float(x planner.Range[float64])          { r[x.Key] = true }
