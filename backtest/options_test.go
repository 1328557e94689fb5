package backtest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// validOptions are the backtest command's defaults.
func validOptions() Options {
	return Options{Policies: Policies(), Aggregate: "mean", Timeout: time.Minute, WarmUp: 24 * time.Hour,
		SLOTargets: []float64{0.99}, SpotRate: 0.05, SpotPrice: 1, SpotZones: 1, Seed: 1}
}

// Options out of range are refused as FlagErrors naming the flag.
func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Options)
		want string
	}{
		{func(*Options) {}, ""},
		{func(o *Options) { o.Aggregate = "sum" }, `--forecast-aggregate "sum": want max or mean`},
		{func(o *Options) { o.SLOTargets = make([]float64, 11) }, "--slo-targets: 11 targets, at most 10"},
		{func(o *Options) { o.SLOTargets = []float64{1.5} }, "--slo-targets 1.5: must be in (0, 1)"},
		{func(o *Options) { o.Refit = 30 * time.Second }, "--refit 30s: must be in [1m0s, 168h0m0s]"},
		{func(o *Options) { o.Drain = -48 * time.Hour }, "--drain -48h0m0s"},
		{func(o *Options) { o.MetricsLag = 2 * time.Hour }, "--metrics-lag 2h0m0s: must be in [0s, 1h0m0s]"},
		{func(o *Options) { o.SpotShare = 2 }, "--spot-share 2: must be in [0, 1]"},
		{func(o *Options) { o.SpotRate = 100 }, "--spot-interruptions 100: must be in [0, 60]"},
		{func(o *Options) { o.SpotZones = 0 }, "--spot-zones 0: must be in [1, 16]"},
		{func(o *Options) { o.SpotZones = 17 }, "--spot-zones 17: must be in [1, 16]"},
		{func(o *Options) { o.Policies = []string{"static", "foo"} }, `--policies: unknown policy "foo"`},
	} {
		o := validOptions()
		tc.edit(&o)
		err := o.Check()
		var fe *poolspec.FlagError
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &fe)) {
			t.Errorf("%+v: %v, want %q", o, err, tc.want)
		}
	}
}

// Apply sets the simulation's settings and reads the scoring window.
func TestOptionsApply(t *testing.T) {
	for _, tc := range []struct {
		from, until string
		want        string
	}{
		{"", "", ""},
		{"2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z", ""},
		{"yesterday", "", `--score-from "yesterday": want an RFC 3339 time`},
		{"", "tomorrow", `--score-until "tomorrow"`},
	} {
		o := validOptions()
		o.ScoreFrom, o.ScoreUntil, o.SpotShare = tc.from, tc.until, 0.5
		cfg := DefaultConfig()
		err := o.Apply(&cfg)
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q %q: %v, want %q", tc.from, tc.until, err, tc.want)
		case tc.want == "" && err != nil:
			t.Errorf("%q %q: %v", tc.from, tc.until, err)
		case tc.want == "" && (cfg.QueueTimeout != time.Minute || cfg.Spot.Share != 0.5 || (tc.from != "") == cfg.ScoreFrom.IsZero()):
			t.Errorf("%q %q: configuration %+v", tc.from, tc.until, cfg)
		}
	}
}

// The work bound refuses a year per minute on a thousand instances, and
// the frontier's more runs sooner than the backtest's.
func TestCheckWork(t *testing.T) {
	for _, tc := range []struct {
		days     int
		rps      float64
		frontier bool
		want     string
	}{
		{7, 1, false, ""},
		{366, 0.01, false, "too much work for the 27 runs of the backtest"},
		{366, 0.01, true, "too much work for the frontier's"},
	} {
		tr, err := Synthetic(tc.days, time.Minute, false)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Planner.Fleet.RPSPerInstance, cfg.Planner.Fleet.MaxInstances, cfg.Planner.Fleet.Slots = tc.rps, 1000, 1
		err = cfg.CheckWork(tr, tc.frontier)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%d days at %g: %v, want %q", tc.days, tc.rps, err, tc.want)
		}
	}
}

// Synthetic demand is bounded in days and steps; FromSeries refuses a
// series mostly missing and turns counts into rates.
func TestSyntheticAndFromSeries(t *testing.T) {
	for _, tc := range []struct {
		days int
		step time.Duration
		want string
		n    int
	}{
		{1, 0, "", 1440},
		{2, time.Hour, "", 48},
		{0, 0, "--synthetic-days 0: must be in [1, 366]", 0},
		{366, time.Second, "is 31622400 steps, more than 1000000", 0},
	} {
		tr, err := Synthetic(tc.days, tc.step, true)
		if tc.want == "" && (err != nil || len(tr.RPS) != tc.n || tr.Name != "synthetic-bursts") ||
			tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%d days at %v: %d steps %q, %v; want %d, %q", tc.days, tc.step, len(tr.RPS), tr.Name, err, tc.n, tc.want)
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	full := datasets.Series{Start: start, Step: time.Minute, Values: []float64{60, 120}}
	tr, err := FromSeries("/x/demand.csv", full, true, 0)
	if err != nil || tr.Name != "demand.csv" || tr.RPS[0] != 1 || tr.RPS[1] != 2 {
		t.Errorf("counts per minute: %+v, %v; want demand.csv at 1 and 2 req/s", tr, err)
	}
	nan := 0.0
	gappy := datasets.Series{Start: start, Step: time.Minute, Values: []float64{1, nan / nan, nan / nan}}
	if _, err := FromSeries("d.csv", gappy, false, time.Minute); err == nil || !strings.Contains(err.Error(), "2 of 3 steps have no data") {
		t.Errorf("mostly missing: %v", err)
	}
}

// The suite reads every input and the generated traces, and refuses
// inputs it cannot read.
func TestSuiteInputsTraces(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(csv, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(path string) (Trace, error) { return Trace{Name: filepath.Base(path)}, nil }
	for _, tc := range []struct {
		in   SuiteInputs
		want string
		n    int
	}{
		{SuiteInputs{Inputs: []string{dir}, Days: 4}, "", 1},
		{SuiteInputs{Inputs: []string{csv}, Seeds: []uint{0, 1}, Days: 4}, "", 1 + len(SuiteSynthetic([]uint64{1}, 4))},
		{SuiteInputs{Inputs: []string{filepath.Join(dir, "none")}}, "--input " + filepath.Join(dir, "none"), 0},
		{SuiteInputs{Inputs: []string{empty}}, "no .csv file in the folder", 0},
		{SuiteInputs{Datasets: dir}, "no trace to replay", 0},
	} {
		traces, err := tc.in.Traces(load, io.Discard)
		if tc.want == "" && (err != nil || len(traces) != tc.n) || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %d traces, %v; want %d, %q", tc.in, len(traces), err, tc.n, tc.want)
		}
	}
}

// The JSON document carries the run's settings and the pool it came from.
func TestNewDocument(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Planner.Fleet.RPSPerInstance, cfg.Planner.Fleet.Slots, cfg.Planner.Fleet.ServiceTime = 4, 2, 500*time.Millisecond
	rep := Report{Trace: "t", Static: 3, Tick: time.Minute, ForecastStep: time.Hour, RefitEvery: 3 * time.Hour}
	d := NewDocument(rep, Frontier{}, cfg, "f.yaml", "sd")
	if d.Trace != "t" || d.Config != "f.yaml" || d.Pool != "sd" || d.Static != 3 || d.GPURPS != 4 || d.Slots != 2 ||
		d.ServiceTimeS != 0.5 || d.Tick != "1m0s" || d.ForecastStep != "1h0m0s" || d.Refit != "3h0m0s" {
		t.Errorf("document %+v", d)
	}
}

// Each case has the planner configuration given for its trace and the
// tuner as asked; a refused configuration names its trace.
func TestSuiteCases(t *testing.T) {
	traces := []Trace{{Name: "a", Step: time.Minute}, {Name: "b", Step: time.Minute}}
	plan := func(tr Trace) (planner.Config, error) {
		c := DefaultConfig().Planner
		c.Fleet.MaxInstances = len(tr.Name) * 7
		if tr.Name == "bad" {
			return c, errors.New("refused")
		}
		return c, nil
	}
	cases, err := SuiteCases(traces, plan, false)
	if err != nil || len(cases) != 2 || cases[1].Trace.Name != "b" || cases[1].Config.Planner.Fleet.MaxInstances != 7 || cases[0].Config.Tune.Enabled {
		t.Errorf("cases %+v, %v", cases, err)
	}
	if _, err := SuiteCases([]Trace{{Name: "bad"}}, plan, false); err == nil || err.Error() != "bad: refused" {
		t.Errorf("a refused configuration: %v, want bad: refused", err)
	}
}

// Compare runs the policies asked for, and its tables add the frontier's
// only when it was swept.
func TestCompareTables(t *testing.T) {
	tr, err := Synthetic(2, 10*time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Planner.Fleet.RPSPerInstance, cfg.Planner.Fleet.MaxInstances = 50, 100
	rep, front, err := Compare(context.Background(), tr, cfg, false, nil, "static")
	if err != nil || len(rep.Policies) != 1 || len(front.Points) != 0 {
		t.Fatalf("static alone: %d policies, %d frontier points, %v", len(rep.Policies), len(front.Points), err)
	}
	for _, frontier := range []bool{false, true} {
		var plain, with strings.Builder
		if err := WriteTable(&plain, rep, cfg.Planner); err != nil {
			t.Fatal(err)
		}
		if err := WriteTables(&with, rep, front, cfg.Planner, frontier); err != nil {
			t.Fatal(err)
		}
		if got := with.String() != plain.String(); got != frontier || !strings.HasPrefix(with.String(), plain.String()) {
			t.Errorf("frontier %v: tables differ from the policies' table alone: %v\n%s", frontier, got, with.String())
		}
	}
}
