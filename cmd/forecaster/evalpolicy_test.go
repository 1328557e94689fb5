package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// evalPolicyReport is the JSON of 'eval policy' as far as these tests
// read it.
type evalPolicyReport struct {
	SLOTarget float64 `json:"slo_target"`
	Entries   []struct {
		Trace      string    `json:"trace"`
		ScoredFrom time.Time `json:"scored_from"`
		Hybrid     struct {
			Cost              float64 `json:"cost"`
			SLOAttainment     float64 `json:"slo_attainment"`
			SpotInterruptions int     `json:"spot_interruptions"`
			WarmStarts        int     `json:"warm_starts"`
			StoppedHours      float64 `json:"stopped_hours"`
		} `json:"hybrid"`
		Baseline struct {
			Policy string `json:"policy"`
			Scored struct {
				Cost float64 `json:"cost"`
			} `json:"scored"`
		} `json:"baseline"`
		VsBaseline float64 `json:"hybrid_vs_baseline"`
	} `json:"traces"`
	Worst             string  `json:"worst"`
	WorstVsBaseline   float64 `json:"worst_vs_baseline"`
	GeoMeanVsBaseline float64 `json:"geomean_vs_baseline"`
}

func decodeEvalPolicy(t *testing.T, out string) evalPolicyReport {
	t.Helper()
	var rep evalPolicyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	return rep
}

// 'eval policy --input FILE --synthetic-seeds 0 --format json' replays
// just that file: one entry named after it, split at the midnight before
// its middle, its ratio the hybrid's cost over the baseline's, and the
// summary that entry's.
func TestEvalPolicyInputJSON(t *testing.T) {
	path := writeDemandCSV(t, 14*24, "rfc3339") // 14 days, hourly, from Monday 2026-01-05
	code, out, errOut := runCmd("eval", "policy", "--input", path, "--synthetic-seeds", "0", "--peak-instances", "20",
		"--datasets", t.TempDir(), "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := decodeEvalPolicy(t, out)
	if len(rep.Entries) != 1 {
		t.Fatalf("%d entries, want 1: %s", len(rep.Entries), out)
	}
	e := rep.Entries[0]
	if !strings.Contains(e.Trace, "demand") || !e.ScoredFrom.Equal(time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("entry %q scored from %v, want the file's from 2026-01-12", e.Trace, e.ScoredFrom)
	}
	if !(e.Hybrid.Cost > 0 && e.Baseline.Scored.Cost > 0) || math.Abs(e.VsBaseline-e.Hybrid.Cost/e.Baseline.Scored.Cost) > 1e-9*e.VsBaseline {
		t.Errorf("hybrid ÷ baseline %v, costs %v and %v", e.VsBaseline, e.Hybrid.Cost, e.Baseline.Scored.Cost)
	}
	if rep.Worst != e.Trace || rep.WorstVsBaseline != e.VsBaseline || math.Abs(rep.GeoMeanVsBaseline-e.VsBaseline) > 1e-12 || rep.SLOTarget != 0.995 {
		t.Errorf("summary worst %q %v, geomean %v, target %v; want the entry's", rep.Worst, rep.WorstVsBaseline, rep.GeoMeanVsBaseline, rep.SLOTarget)
	}
	if !strings.Contains(errOut, "1/1") {
		t.Errorf("stderr %q does not report progress of the one trace", errOut)
	}
}

// The suite replays every policy on the tiers the flags give: spot
// instances interrupted at --spot-interruptions, and a warm tier.
func TestEvalPolicyWithTiers(t *testing.T) {
	path := writeDemandCSV(t, 14*24, "rfc3339")
	code, out, errOut := runCmd("eval", "policy", "--input", path, "--synthetic-seeds", "0", "--peak-instances", "20",
		"--datasets", t.TempDir(), "--format", "json", "--spot-share", "0.5", "--spot-interruptions", "2", "--warm-start", "90s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	h := decodeEvalPolicy(t, out).Entries[0].Hybrid
	if h.SpotInterruptions == 0 || h.WarmStarts == 0 || !(h.StoppedHours > 0) {
		t.Errorf("hybrid: %d spot interruptions, %d warm starts, %v stopped hours; want all three", h.SpotInterruptions, h.WarmStarts, h.StoppedHours)
	}
}

// 'eval policy --synthetic-seeds 1 --synthetic-days 14' replays the
// generator's bursts and spikes of that seed (and no shared trace when
// --datasets has none), in JSON and as a table.
func TestEvalPolicySynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("replays two 14-day per-minute traces through the suite")
	}
	code, out, errOut := runCmd("eval", "policy", "--synthetic-seeds", "1", "--synthetic-days", "14", "--peak-instances", "20",
		"--datasets", t.TempDir(), "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rep := decodeEvalPolicy(t, out)
	var names []string
	for _, e := range rep.Entries {
		names = append(names, e.Trace)
		if !e.ScoredFrom.Equal(time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC)) || !(e.VsBaseline > 0) {
			t.Errorf("%s: scored from %v, hybrid ÷ baseline %v", e.Trace, e.ScoredFrom, e.VsBaseline)
		}
	}
	if strings.Join(names, ",") != "bursts-seed1,spikes-seed1" {
		t.Errorf("traces %v, want bursts-seed1, spikes-seed1", names)
	}
	if !strings.Contains(errOut, "not found, left out") {
		t.Errorf("stderr %q does not say the shared traces were left out", errOut)
	}
}

// The table names each trace and ends with the summary line.
func TestEvalPolicyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 14-day trace through the suite (~3 s)")
	}
	path := writeDemandCSV(t, 14*24, "unix")
	code, out, errOut := runCmd("eval", "policy", "--input", path, "--synthetic-seeds", "0", "--peak-instances", "20", "--datasets", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"policy suite:", "hybrid ÷ baseline", "2026-01-12", "worst: demand", "over 1 traces"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Bad flags are refused before any replay, naming the flag.
func TestEvalPolicyBadFlags(t *testing.T) {
	csv := writeDemandCSV(t, 14*24, "rfc3339")
	short := writeDemandCSV(t, 24, "rfc3339")
	empty := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"--format", "xml"}, "--format"},
		{"missing input file", []string{"--input", "/nonexistent/demand.csv"}, "--input"},
		{"folder without a CSV", []string{"--input", empty}, "--input"},
		{"too few synthetic days", []string{"--synthetic-days", "3"}, "--synthetic-days"},
		{"too many synthetic days", []string{"--synthetic-days", "367"}, "--synthetic-days"},
		{"too many seeds", []string{"--synthetic-seeds", "1,2,3,4,5,6,7,8,9,10,11"}, "--synthetic-seeds"},
		{"unknown flag", []string{"--bogus"}, "--bogus"},
		{"extra argument", []string{"extra"}, "extra"},
		{"loto without tuning", []string{"--input", csv, "--synthetic-seeds", "0", "--loto", "--tune=false"}, "--loto"},
		{"nothing to replay", []string{"--synthetic-seeds", "0"}, "no trace to replay"},
		{"trace too short to split", []string{"--input", short, "--synthetic-seeds", "0"}, "too short"},
		{"spot share above 1", []string{"--input", csv, "--spot-share", "1.5"}, "--spot-share"},
		{"too many stock-outs", []string{"--input", csv, "--spot-stockouts", "200"}, "--spot-stockouts"},
		{"warm start as long as the boot", []string{"--input", csv, "--warm-start", "10m"}, "--warm-start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"eval", "policy", "--peak-instances", "20", "--datasets", empty}, tc.args...)
			code, out, errOut := runCmd(args...)
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want a failure naming %q", code, errOut, tc.want)
			}
			if out != "" {
				t.Errorf("stdout %q on a failure", out)
			}
		})
	}
}

// Contradictory command lines are refused before any demand is read or
// any store opened: the folders and the store named do not exist.
func TestRefusedBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ha.yaml")
	os.WriteFile(cfg, []byte("election:\n  enabled: true\n  api_server: http://127.0.0.1:1\n"+
		"pools:\n  - {name: a, backend: dryrun, max: 4, rps_per_instance: 1}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "policy", "--loto", "--tune=false", "--peak-instances", "20", "--datasets", filepath.Join(dir, "none")},
			"--loto chooses the tuner's defaults: it needs --tune"},
		{[]string{"eval", "policy", "--reserve-advice", "--reserved", "4", "--peak-instances", "20", "--datasets", filepath.Join(dir, "none")},
			"--reserve-advice sets the reserved base per trace: give it or --reserved, not both"},
		{[]string{"serve", "--config", cfg, "--once", "--apply", "--store", "embedded:" + filepath.Join(dir, "no", "such", "dir.db")},
			"--once --apply with election.enabled: a one-off run owns no pool"},
	} {
		code, _, stderr := runForecaster(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
