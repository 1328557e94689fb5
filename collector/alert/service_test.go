package alert

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/store"
)

// svc builds one service's points for a cycle, as collector/service writes
// them (plus the pool tag an input adds): "queue" and "p99" (quantile
// 0.99) values, or "p50" for a quantile LatencyHigh must ignore.
func svc(name, pool string, kv ...any) []store.Point {
	var pts []store.Point
	for i := 0; i+1 < len(kv); i += 2 {
		tags := map[string]string{store.TagService: name, store.TagSource: "service", store.TagPool: pool,
			store.TagHost: "collector-1"}
		p := store.Point{Value: toFloat(kv[i+1]), Tags: tags}
		switch kv[i] {
		case "queue":
			p.Measurement = store.ServiceQueueLength
		case "p99":
			p.Measurement, tags[store.TagQuantile] = store.ServiceLatencySeconds, "0.99"
		case "p50":
			p.Measurement, tags[store.TagQuantile] = store.ServiceLatencySeconds, "0.5"
		}
		pts = append(pts, p)
	}
	return pts
}

// cat joins cycles' points (several services in one cycle).
func cat(parts ...[]store.Point) []store.Point {
	var out []store.Point
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

type wantServiceEvent struct {
	at         time.Duration // from t0
	kind, rule string
	service    string // "api", or "batch/api" for a pool other than llm
	since      time.Duration
}

func TestServiceRules(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	api := func(kv ...any) []store.Point { return svc("api", "llm", kv...) }
	tests := []struct {
		name  string
		rules func(*Rules)
		steps []step // cycles every 10 s
		want  []wantServiceEvent
	}{
		{"queue above 50 for 2 min fires once, then resolves", nil,
			[]step{{3 * time.Minute, api("queue", 80)}, {time.Minute, api("queue", 10)}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0},
				{3 * time.Minute, KindResolved, RuleQueueHigh, "api", 0}}},
		{"a queue spike shorter than 2 min does not fire", nil,
			[]step{{time.Minute, api("queue", 10)}, {110 * time.Second, api("queue", 500)}, {5 * time.Minute, api("queue", 10)}},
			nil},
		{"a dip restarts the 2 minutes", nil,
			[]step{{90 * time.Second, api("queue", 60)}, {10 * time.Second, api("queue", 50)}, {3 * time.Minute, api("queue", 60)}},
			[]wantServiceEvent{{100*time.Second + 2*time.Minute, KindAlert, RuleQueueHigh, "api", 100 * time.Second}}},
		{"P99 above 2 s for 5 min fires, then resolves", nil,
			[]step{{6 * time.Minute, api("p99", 3.5, "queue", 5)}, {time.Minute, api("p99", 0.4, "queue", 5)}},
			[]wantServiceEvent{{5 * time.Minute, KindAlert, RuleLatencyHigh, "api", 0},
				{6 * time.Minute, KindResolved, RuleLatencyHigh, "api", 0}}},
		{"P99 of exactly 2 s does not fire", nil,
			[]step{{10 * time.Minute, api("p99", 2)}}, nil},
		{"a 4-minute latency spike does not fire", nil,
			[]step{{4 * time.Minute, api("p99", 9)}, {10 * time.Minute, api("p99", 1)}}, nil},
		{"only the 0.99 quantile counts", nil,
			[]step{{10 * time.Minute, api("p50", 9, "p99", 1)}}, nil},
		{"NaN, infinite and negative values are ignored, not a dip", nil,
			[]step{{time.Minute, api("queue", 80, "p99", 3)}, {30 * time.Second, api("queue", nan, "p99", -1)},
				{30 * time.Second, api("queue", -5, "p99", inf)}, {5 * time.Minute, api("queue", 80, "p99", 3)}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0},
				{5 * time.Minute, KindAlert, RuleLatencyHigh, "api", 0}}},
		{"NaN while firing does not resolve", nil,
			[]step{{3 * time.Minute, api("queue", 80)}, {time.Minute, api("queue", nan)}, {time.Minute, api("queue", 80)}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0}}},
		{"services are keyed independently", nil,
			[]step{{time.Minute, cat(api("queue", 80), svc("embed", "llm", "queue", 1))},
				{3 * time.Minute, cat(api("queue", 80), svc("embed", "llm", "queue", 90))},
				{time.Minute, cat(api("queue", 1), svc("embed", "llm", "queue", 90))}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0},
				{3 * time.Minute, KindAlert, RuleQueueHigh, "embed", time.Minute},
				{4 * time.Minute, KindResolved, RuleQueueHigh, "api", 0}}},
		{"the same service name in two pools is two subjects", nil,
			[]step{{time.Minute, cat(api("queue", 80), svc("api", "batch", "queue", 3))},
				{3 * time.Minute, cat(api("queue", 80), svc("api", "batch", "queue", 70))}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0},
				{3 * time.Minute, KindAlert, RuleQueueHigh, "batch/api", time.Minute}}},
		{"disabled rules stay silent",
			func(r *Rules) { r.QueueHigh.Enabled, r.LatencyHigh.Enabled = false, false },
			[]step{{20 * time.Minute, api("queue", 1e6, "p99", 60)}}, nil},
		{"thresholds beyond 100 and below 1 are fine for services",
			func(r *Rules) {
				r.QueueHigh = Rule{Threshold: 500, For: time.Minute, Enabled: true}
				r.LatencyHigh = Rule{Threshold: 0.25, For: 30 * time.Second, Enabled: true}
			},
			[]step{{2 * time.Minute, api("queue", 400, "p99", 0.3)}, {2 * time.Minute, api("queue", 600, "p99", 0.2)}},
			[]wantServiceEvent{{30 * time.Second, KindAlert, RuleLatencyHigh, "api", 0},
				{2 * time.Minute, KindResolved, RuleLatencyHigh, "api", 0},
				{3 * time.Minute, KindAlert, RuleQueueHigh, "api", 2 * time.Minute}}},
		{"no latency for stale_after (no requests) resolves a firing latency alert", nil,
			[]step{{6 * time.Minute, api("p99", 4, "queue", 0)}, {10 * time.Minute, api("queue", 0)}},
			// Last latency at +5m50s; gone for more than 5 min at +10m59.99s → the +11m cycle.
			[]wantServiceEvent{{5 * time.Minute, KindAlert, RuleLatencyHigh, "api", 0},
				{11 * time.Minute, KindResolved, RuleLatencyHigh, "api", 0}}},
		{"a service that stops reporting resolves after stale_after", nil,
			[]step{{3 * time.Minute, api("queue", 80)}, {7 * time.Minute, nil}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0},
				{8 * time.Minute, KindResolved, RuleQueueHigh, "api", 0}}},
		{"a short gap keeps the alert firing", nil,
			[]step{{3 * time.Minute, api("queue", 80)}, {4 * time.Minute, nil}, {time.Minute, api("queue", 80)}},
			[]wantServiceEvent{{2 * time.Minute, KindAlert, RuleQueueHigh, "api", 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := DefaultRules()
			if tc.rules != nil {
				tc.rules(&rules)
			}
			e, err := NewEngine(rules, Options{InstanceID: "i-collector"})
			if err != nil {
				t.Fatal(err)
			}
			got := replay(e, tc.steps)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d events, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				pool, service, ok := strings.Cut(w.service, "/")
				if !ok {
					pool, service = "llm", w.service
				}
				if g.Kind != w.kind || g.Rule != w.rule || g.Service != service || !g.At.Equal(t0.Add(w.at)) || !g.Since.Equal(t0.Add(w.since)) {
					t.Errorf("event %d = %s/%s %s/%s at +%s since +%s; want %s/%s %s at +%s since +%s", i, g.Kind, g.Rule,
						g.Pool, g.Service, g.At.Sub(t0), g.Since.Sub(t0), w.kind, w.rule, w.service, w.at, w.since)
				}
				if g.Pool != pool || g.InstanceID != "" || g.Host != "" || g.GPU != "" || g.UUID != "" ||
					!strings.Contains(g.Reason, "service "+service) {
					t.Errorf("event %d identity = %+v", i, g)
				}
			}
		})
	}
}

// replay runs the steps' cycles every 10 s from t0 and collects the events.
func replay(e *Engine, steps []step) []Event {
	var got []Event
	at := t0
	for _, s := range steps {
		for end := at.Add(s.dur); at.Before(end); at = at.Add(10 * time.Second) {
			got = append(got, e.Evaluate(at, s.points)...)
		}
	}
	return got
}

// A GPU's NaN utilisation is a missing reading, not a drop below 85%.
func TestGPUIgnoresNaN(t *testing.T) {
	e, _ := NewEngine(DefaultRules(), Options{})
	got := replay(e, []step{{6 * time.Minute, gpu(store.GPUUtil, 95)}, {time.Minute, gpu(store.GPUUtil, math.NaN())},
		{time.Minute, gpu(store.GPUUtil, -3)}})
	if len(got) != 1 || got[0].Rule != RuleUtilHigh || got[0].Kind != KindAlert {
		t.Fatalf("events = %+v; want only the util_high alert", got)
	}
}

func TestServiceEventJSONAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e, err := NewEngine(DefaultRules(), Options{Registerer: reg, InstanceID: "i-collector"})
	if err != nil {
		t.Fatal(err)
	}
	got := replay(e, []step{{2*time.Minute + 10*time.Second, svc("api", "llm", "queue", 72)}})
	if len(got) != 1 {
		t.Fatalf("events = %+v", got)
	}
	raw, _ := json.Marshal(got[0])
	want := `{"kind":"alert","rule":"queue_high","pool":"llm","service":"api","since":"2026-11-30T02:00:00Z",` +
		`"at":"2026-11-30T02:02:00Z","value":72,"threshold":50,"reason":"queue length 72 (threshold 50) for 2m0s: service api in pool llm"}`
	if string(raw) != want {
		t.Errorf("JSON\n got %s\nwant %s", raw, want)
	}
	if v := firing(t, reg, RuleQueueHigh, "api"); v != 1 {
		t.Errorf("alert_firing{rule=queue_high,service=api} = %v, want 1", v)
	}
	e.Evaluate(t0.Add(3*time.Minute), svc("api", "llm", "queue", 3))
	if v := firing(t, reg, RuleQueueHigh, "api"); v != 0 {
		t.Errorf("after resolve alert_firing = %v, want the series gone", v)
	}
}

// firing returns prewarm_collector_alert_firing for a rule and service, 0
// when the series is absent.
func firing(t *testing.T, reg *prometheus.Registry, rule, service string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "prewarm_collector_alert_firing" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["rule"] == rule && labels["service"] == service {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func TestRulesValidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Rules)
		want   []string // FieldError.Field values, in order; none for valid rules
	}{
		{"defaults", func(*Rules) {}, nil},
		{"service thresholds above 100", func(r *Rules) { r.QueueHigh.Threshold, r.LatencyHigh.Threshold = 1000, 120 }, nil},
		{"sub-second latency and zero queue", func(r *Rules) { r.LatencyHigh.Threshold, r.QueueHigh.Threshold = 0.05, 0 }, nil},
		{"zero latency", func(r *Rules) { r.LatencyHigh.Threshold = 0 }, []string{"latency_high.threshold"}},
		{"negative latency", func(r *Rules) { r.LatencyHigh.Threshold = -1 }, []string{"latency_high.threshold"}},
		{"NaN latency", func(r *Rules) { r.LatencyHigh.Threshold = math.NaN() }, []string{"latency_high.threshold"}},
		{"infinite queue", func(r *Rules) { r.QueueHigh.Threshold = math.Inf(1) }, []string{"queue_high.threshold"}},
		{"negative queue and for", func(r *Rules) { r.QueueHigh = Rule{Threshold: -1, For: -time.Second, Enabled: true} },
			[]string{"queue_high.threshold", "queue_high.for"}},
		{"disabled rules are not checked", func(r *Rules) { r.QueueHigh = Rule{Threshold: -1} }, nil},
		{"GPU rules stay percent", func(r *Rules) { r.UtilHigh.Threshold, r.MemHigh.Threshold = 150, 0 },
			[]string{"util_high.threshold", "mem_high.threshold"}},
		{"negative stale_after", func(r *Rules) { r.StaleAfter = -time.Minute }, []string{"stale_after"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := DefaultRules()
			tc.change(&r)
			var got []string
			for _, p := range r.Problems() {
				got = append(got, p.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Problems() fields = %q, want %q", got, tc.want)
			}
			if err := r.Validate(); (err != nil) != (len(tc.want) > 0) {
				t.Errorf("Validate() = %v", err)
			} else if err != nil && !strings.Contains(err.Error(), "alerts."+tc.want[0]+" ") {
				t.Errorf("Validate() = %q, want it to name alerts.%s", err, tc.want[0])
			}
		})
	}
}
