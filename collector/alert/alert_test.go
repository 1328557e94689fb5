package alert

import (
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

// gpu builds one cycle's points for GPU 0 on host h1 from measurement/value
// pairs.
func gpu(kv ...any) []store.Point {
	var pts []store.Point
	for i := 0; i+1 < len(kv); i += 2 {
		pts = append(pts, store.Point{Measurement: kv[i].(string), Value: toFloat(kv[i+1]),
			Tags: map[string]string{"host": "h1", "gpu": "0", "uuid": "GPU-0", "pool": "train"}})
	}
	return pts
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic("bad value")
}

// step is a span of identical cycles every 10 s.
type step struct {
	dur    time.Duration
	points []store.Point
}

type wantEvent struct {
	at         time.Duration // from t0
	kind, rule string
	since      time.Duration
}

func TestEngineScenarios(t *testing.T) {
	const (
		util   = store.GPUUtil
		sm     = store.GPUSMActive
		engine = store.GPUEngineActive
		used   = store.GPUMemUsedBytes
		free   = store.GPUMemFreeBytes
		total  = store.GPUMemTotalBytes
		power  = store.GPUPowerWatts
		limit  = store.GPUPowerLimitWatts
		procs  = store.GPUProcesses
	)
	tests := []struct {
		name  string
		steps []step
		want  []wantEvent
	}{
		{"util above 85% for 5 min fires once, then resolves",
			[]step{{10 * time.Minute, gpu(util, 90, sm, 0.9)}, {time.Minute, gpu(util, 50, sm, 0.5)}},
			[]wantEvent{{5 * time.Minute, KindAlert, RuleUtilHigh, 0}, {10 * time.Minute, KindResolved, RuleUtilHigh, 0}}},
		{"a dip restarts the 5 minutes",
			[]step{{3 * time.Minute, gpu(util, 95)}, {10 * time.Second, gpu(util, 80)}, {6 * time.Minute, gpu(util, 95)}},
			[]wantEvent{{3*time.Minute + 10*time.Second + 5*time.Minute, KindAlert, RuleUtilHigh, 3*time.Minute + 10*time.Second}}},
		{"util exactly 85% does not fire",
			[]step{{10 * time.Minute, gpu(util, 85)}}, nil},
		{"memory above 90% of total fires at once (NVML)",
			[]step{{time.Minute, gpu(util, 50, used, 95, total, 100)}},
			[]wantEvent{{0, KindAlert, RuleMemHigh, 0}}},
		{"memory from used+free (DCGM)",
			[]step{{time.Minute, gpu(util, 50, used, 91, free, 9)}},
			[]wantEvent{{0, KindAlert, RuleMemHigh, 0}}},
		{"power above 95% of the limit",
			[]step{{time.Minute, gpu(util, 50, power, 680, limit, 700)}, {time.Minute, gpu(util, 50, power, 600, limit, 700)}},
			[]wantEvent{{0, KindAlert, RulePowerHigh, 0}, {time.Minute, KindResolved, RulePowerHigh, 0}}},
		{"power without a known limit never fires",
			[]step{{time.Minute, gpu(util, 50, power, 900)}}, nil},
		{"idle 30 min despite a process holding 70 GB",
			[]step{{40 * time.Minute, gpu(util, 0, sm, 0.001, procs, 1, used, 70, total, 80)}},
			[]wantEvent{{30 * time.Minute, KindIdle, RuleIdle, 0}}},
		{"low util but SM active 20% is not idle",
			[]step{{40 * time.Minute, gpu(util, 2, sm, 0.2)}}, nil},
		{"low util but engine active is not idle",
			[]step{{40 * time.Minute, gpu(util, 3, engine, 0.06)}}, nil},
		{"busy again resolves idle; idle again needs 30 more minutes",
			[]step{{31 * time.Minute, gpu(util, 1)}, {time.Minute, gpu(util, 60)}, {45 * time.Minute, gpu(util, 0)}},
			[]wantEvent{{30 * time.Minute, KindIdle, RuleIdle, 0}, {31 * time.Minute, KindResolved, RuleIdle, 0},
				{62 * time.Minute, KindIdle, RuleIdle, 32 * time.Minute}}},
		{"a reporting gap longer than stale_after restarts idle",
			[]step{{20 * time.Minute, gpu(util, 0)}, {10 * time.Minute, nil}, {25 * time.Minute, gpu(util, 0)}}, nil},
		{"a GPU that stops reporting resolves its firing alerts after stale_after",
			[]step{{6 * time.Minute, gpu(util, 95)}, {6 * time.Minute, nil}},
			[]wantEvent{{5 * time.Minute, KindAlert, RuleUtilHigh, 0}, {11 * time.Minute, KindResolved, RuleUtilHigh, 0}}},
		{"GPUs without activity signals are never idle",
			[]step{{40 * time.Minute, gpu(used, 1, total, 80)}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine(DefaultRules(), Options{Instances: map[string]string{"h1": "i-abc"}})
			if err != nil {
				t.Fatal(err)
			}
			var got []Event
			at := t0
			for _, s := range tc.steps {
				for end := at.Add(s.dur); at.Before(end); at = at.Add(10 * time.Second) {
					got = append(got, e.Evaluate(at, s.points)...)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d events, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Kind != w.kind || g.Rule != w.rule || !g.At.Equal(t0.Add(w.at)) || !g.Since.Equal(t0.Add(w.since)) {
					t.Errorf("event %d = %s/%s at %s since %s; want %s/%s at +%s since +%s", i, g.Kind, g.Rule,
						g.At.Sub(t0), g.Since.Sub(t0), w.kind, w.rule, w.at, w.since)
				}
				if g.InstanceID != "i-abc" || g.Pool != "train" || g.Host != "h1" || g.GPU != "0" || g.UUID != "GPU-0" || g.Reason == "" {
					t.Errorf("event %d identity = %+v", i, g)
				}
			}
		})
	}
}

func TestRulesConfigurable(t *testing.T) {
	rules := DefaultRules()
	rules.UtilHigh = Rule{Threshold: 50, For: time.Minute, Enabled: true}
	rules.Idle.Enabled = false
	e, err := NewEngine(rules, Options{InstanceID: "i-local"})
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	for i := range 7 {
		got = append(got, e.Evaluate(t0.Add(time.Duration(i)*10*time.Second), gpu(store.GPUUtil, 60))...)
	}
	if len(got) != 1 || got[0].Rule != RuleUtilHigh || got[0].At != t0.Add(time.Minute) || got[0].InstanceID != "i-local" {
		t.Fatalf("events = %+v; want one util_high at +1m for i-local", got)
	}
	for _, bad := range []Rules{
		{UtilHigh: Rule{Threshold: 0, Enabled: true}},
		{UtilHigh: Rule{Threshold: 150, Enabled: true}, MemHigh: Rule{}},
		{UtilHigh: Rule{Threshold: 50, For: -time.Second, Enabled: true}},
	} {
		if _, err := NewEngine(bad, Options{}); err == nil {
			t.Errorf("NewEngine(%+v): want an error", bad)
		}
	}
}

type recordSink struct{ events []Event }

func (r *recordSink) Send(e Event) { r.events = append(r.events, e) }

func TestObserveSendsToSinks(t *testing.T) {
	sink := &recordSink{}
	e, _ := NewEngine(DefaultRules(), Options{Sinks: []Sink{sink}})
	e.Observe(t0, gpu(store.GPUMemUsedBytes, 99, store.GPUMemTotalBytes, 100))
	if len(sink.events) != 1 || sink.events[0].Rule != RuleMemHigh {
		t.Fatalf("sink got %+v", sink.events)
	}
}
