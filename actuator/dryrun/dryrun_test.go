package dryrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/planner"
)

func TestDryRunLogsAndRemembers(t *testing.T) {
	var logs bytes.Buffer
	d := dryrun.New(slog.New(slog.NewJSONHandler(&logs, nil)))
	d.Seed("p", 2, 0, 10)
	ctx := actuator.WithIdempotencyToken(context.Background(), "tok-1")
	if err := d.SetDesired(ctx, "p", 5, "forecast"); err != nil {
		t.Fatal(err)
	}
	c, err := d.Capacity(ctx, "p")
	if err != nil || c.Desired != 5 || c.Current != 5 || c.Max != 10 {
		t.Errorf("Capacity = %+v, %v; want desired 5, max 10", c, err)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(logs.String(), "\n", 2)[0]), &line); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"pool": "p", "from": 2.0, "to": 5.0, "reason": "forecast", "client_token": "tok-1", "backend": "dryrun"} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %v (line %v)", k, line[k], want, line)
		}
	}
	steps := planner.Schedule{{At: time.Unix(0, 0), Desired: 3, Reason: "r"}}
	if err := d.PublishSchedule(ctx, "p", steps); err != nil || len(d.Schedule("p")) != 1 {
		t.Errorf("PublishSchedule: %v, kept %d steps", err, len(d.Schedule("p")))
	}
	if err := d.Release(ctx, "i-1", "idle"); err != nil || d.Released()[0] != "i-1" {
		t.Errorf("Release: %v, %v", err, d.Released())
	}
	if n := strings.Count(logs.String(), "dry run:"); n != 4 {
		t.Errorf("log lines = %d, want 4 (set, publish, step, release):\n%s", n, logs.String())
	}
}

func TestDryRunBehindSafe(t *testing.T) {
	// Safe's no-op rule works against the remembered state.
	r := actuator.NewRegistry()
	if err := r.Register(dryrun.Name, dryrun.Factory(slog.New(slog.DiscardHandler)), dryrun.PoolOptions); err != nil {
		t.Fatal(err)
	}
	cfg := actuator.PoolConfig{Name: "p", Backend: dryrun.Name, Limits: planner.Limits{MaxInstances: 8, MaxStep: 2}, Options: map[string]string{"initial": "1"}}
	a, err := r.New(context.Background(), dryrun.Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var audit bytes.Buffer
	s := actuator.NewSafe(a, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Audit: &audit,
		Logger: slog.New(slog.DiscardHandler)})
	for range 3 { // 1 → 3 → 5 (max_step 2), then nothing to do
		if err := s.SetDesired(context.Background(), "p", 5, "t"); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := []string{}
	for _, l := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var rec actuator.AuditRecord
		_ = json.Unmarshal([]byte(l), &rec)
		outcomes = append(outcomes, rec.Outcome+":"+itoa(rec.To))
	}
	if got := strings.Join(outcomes, " "); got != "ok:3 ok:5 noop:5" {
		t.Errorf("outcomes = %s, want ok:3 ok:5 noop:5", got)
	}
	if _, err := r.New(context.Background(), dryrun.Name, actuator.PoolConfig{Name: "p", Backend: "dryrun", Limits: planner.Limits{MaxInstances: 1},
		Options: map[string]string{"initial": "-3"}}); err == nil || !strings.Contains(err.Error(), "options.initial") {
		t.Errorf("bad initial: error = %v", err)
	}
}

// A dry-run pool reports the size it was last set to, all of it ready at
// once; one that nothing has sized (forecast-only, never set, without
// initial) reports no size, so the service sees neither ready instances
// nor a shortage; initial seeds a size as a real fleet would have.
func TestDryRunReportsOnlyWhatWasApplied(t *testing.T) {
	tests := []struct {
		name      string
		options   map[string]string
		set       int // 0: never set
		wantKnown bool
		want      actuator.Capacity
	}{
		{"forecast-only: never set", nil, 0, false, actuator.Capacity{}},
		{"set: instant success", nil, 4, true, actuator.Capacity{Current: 4, Desired: 4, Min: 1, Max: 8}},
		{"seeded, never set", map[string]string{"initial": "3"}, 0, true, actuator.Capacity{Current: 3, Desired: 3, Min: 1, Max: 8}},
		{"seeded, then set", map[string]string{"initial": "3"}, 5, true, actuator.Capacity{Current: 5, Desired: 5, Min: 1, Max: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := actuator.NewRegistry()
			if err := r.Register(dryrun.Name, dryrun.Factory(slog.New(slog.DiscardHandler)), dryrun.PoolOptions); err != nil {
				t.Fatal(err)
			}
			cfg := actuator.PoolConfig{Name: "p", Backend: dryrun.Name, Limits: planner.Limits{MinInstances: 1, MaxInstances: 8}, Options: tt.options}
			a, err := r.New(context.Background(), dryrun.Name, cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := actuator.NewSafe(a, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Logger: slog.New(slog.DiscardHandler)})
			if tt.set > 0 {
				if err := s.SetDesired(context.Background(), "p", tt.set, "t"); err != nil {
					t.Fatal(err)
				}
			}
			c, known, err := s.ReadCapacity(context.Background(), "p")
			if err != nil || known != tt.wantKnown || c != tt.want {
				t.Errorf("ReadCapacity = %+v, known %v, %v; want %+v, known %v", c, known, err, tt.want, tt.wantKnown)
			}
		})
	}
}

func itoa(p *int) string {
	if p == nil {
		return "nil"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}

// After a restart the service tells the imaginary fleet the last size it
// set (Resume): the pool reads that size, all of it ready, rather than no
// size until the next change; a pool with a size keeps it.
func TestDryRunResume(t *testing.T) {
	tests := []struct {
		name   string
		seed   int // -1: none
		resume int
		want   int
	}{
		{"no size yet", -1, 6, 6},
		{"seeded", 2, 6, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dryrun.New(slog.New(slog.DiscardHandler))
			d.Bound("p", 1, 10)
			if tt.seed >= 0 {
				d.Seed("p", tt.seed, 1, 10)
			}
			d.Resume("p", tt.resume)
			c, err := d.Capacity(context.Background(), "p")
			if err != nil || c.Current != tt.want || c.Desired != tt.want || c.Max != 10 {
				t.Errorf("Capacity = %+v, %v; want %d, max 10", c, err, tt.want)
			}
		})
	}
}

// A dry run takes a spot mix through Safe as a real back-end would: it
// logs the mix it would set, remembers it, and leaves the pool's size as
// it was; Safe sends a repeat of it nowhere.
func TestDryRunSetSpot(t *testing.T) {
	var logs bytes.Buffer
	d := dryrun.New(slog.New(slog.NewJSONHandler(&logs, nil)))
	d.Seed("p", 4, 0, 10)
	cfg := actuator.PoolConfig{Name: "p", Backend: dryrun.Name, Limits: planner.Limits{MaxInstances: 10}}
	s := actuator.NewSafe(d, actuator.SafetyOptions{Pools: []actuator.PoolConfig{cfg}, Logger: slog.New(slog.DiscardHandler)})
	if _, ok := d.Spot("p"); ok {
		t.Fatal("a spot mix before any was set")
	}
	tests := []struct {
		spot      planner.Spot
		wantLines int // "would set the spot mix" lines so far
	}{
		{planner.Spot{Share: 0.5, BaseOnDemand: 2}, 1},
		{planner.Spot{Share: 0.5, BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}, 1},
		{planner.Spot{Share: 1, Fallback: planner.SpotFallbackNone}, 2},
	}
	for _, tt := range tests {
		if err := s.SetSpot(context.Background(), "p", tt.spot, "plan"); err != nil {
			t.Fatal(err)
		}
		if got, ok := d.Spot("p"); !ok || got != tt.spot.Normal() {
			t.Errorf("after SetSpot(%+v) the dry run remembers %+v, want %+v", tt.spot, got, tt.spot.Normal())
		}
		if n := strings.Count(logs.String(), "dry run: would set the spot mix"); n != tt.wantLines {
			t.Errorf("after SetSpot(%+v): %d log lines, want %d:\n%s", tt.spot, n, tt.wantLines, logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"share":1,"base_on_demand":0,"fallback":"none"`) {
		t.Errorf("the log lacks the mix:\n%s", logs.String())
	}
	if c, _ := d.Capacity(context.Background(), "p"); c.Desired != 4 {
		t.Errorf("the spot mix changed the size to %d, want 4", c.Desired)
	}
}
