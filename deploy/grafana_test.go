package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/store/prometheus/promtest"
)

// dashboard is the part of Grafana's dashboard JSON model the test reads.
type dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	Repeat     string      `json:"repeat"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// grafanaVars replaces Grafana's variables by values that make PromQL.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__range", "1d", "$__interval", "1m", "$pool", "sd")

// What the dashboard must show: each entry is a metric some
// panel must query.
var dashboardMust = map[string][]string{
	"demand vs forecast band":                 {"prewarm_pool_demand_rps", "prewarm_pool_forecast_rps"},
	"capacity wished/desired/ready/booting":   {"prewarm_pool_wished_instances", "prewarm_pool_desired_instances", "prewarm_pool_ready_instances", "prewarm_pool_booting_instances"},
	"decisions by outcome":                    {"prewarm_pool_decisions_total"},
	"cost against a static fleet":             {"prewarm_pool_cost_total", "prewarm_pool_static_cost_total"},
	"saving against a reactive or flat fleet": {"prewarm_pool_saving_ratio"},
	"the service's health (ticks, collector)": {"prewarm_last_successful_tick_timestamp_seconds", "prewarm_collector_last_store_write_timestamp_seconds"},
}

func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("grafana", "prewarm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("prewarm.json is not valid JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want a uid, a title and schema 36+ (Grafana 9.3+)", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "datasource" && string(v.Query) != `"prometheus"` {
			t.Errorf("variable %s: query %s, want a Prometheus data source", v.Name, v.Query)
		}
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != "${datasource}") {
			t.Errorf("variable %s does not query the ${datasource} variable", v.Name)
		}
	}
	if vars["datasource"] != "datasource" || vars["pool"] != "query" {
		t.Fatalf("variables %v: want a datasource variable named datasource and a pool query variable", vars)
	}

	rf := readRules(t)
	var recorded []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded = append(recorded, r.Record)
			}
		}
	}
	var exprs, where []string
	ids := map[int]string{}
	var all strings.Builder
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			name := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if prev, dup := ids[p.ID]; dup || p.ID <= 0 {
				t.Errorf("%s: id not unique and positive (also %s)", name, prev)
			}
			ids[p.ID] = name
			if g := p.GridPos; g.W < 1 || g.X < 0 || g.X+g.W > 24 || g.H < 1 || g.Y < 0 {
				t.Errorf("%s: gridPos %+v outside Grafana's 24 columns", name, g)
			}
			if p.Repeat != "" && vars[p.Repeat] == "" {
				t.Errorf("%s repeats over unknown variable %q", name, p.Repeat)
			}
			if p.Type != "row" && (p.Datasource == nil || p.Datasource.UID != "${datasource}") {
				t.Errorf("%s: datasource %+v, want the ${datasource} variable", name, p.Datasource)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.Expr == "" || refs[tg.RefID] || (tg.Datasource != nil && tg.Datasource.UID != "${datasource}") {
					t.Errorf("%s: target %s has no expr, a repeated refId or another data source", name, tg.RefID)
				}
				refs[tg.RefID] = true
				expr := grafanaVars.Replace(tg.Expr)
				if strings.Contains(expr, "$") {
					t.Errorf("%s: %q uses an unknown variable", name, tg.Expr)
				}
				checkMetrics(t, name, expr)
				for _, m := range recordedIn(expr) {
					if !slices.Contains(recorded, m) {
						t.Errorf("%s: %s is not a recording rule of rules.yml", name, m)
					}
				}
				exprs, where = append(exprs, expr), append(where, name)
				all.WriteString(expr + "\n")
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for what, metrics := range dashboardMust {
		for _, m := range metrics {
			if !strings.Contains(all.String(), m) {
				t.Errorf("no panel shows %s (%s)", what, m)
			}
		}
	}
	checkExprs(t, promtest.Promtool(t), where, exprs)
	t.Logf("%d panels, %d queries, all valid PromQL", len(ids), len(exprs))
}

// recordedIn returns the recording-rule names (level:metric:ops) in expr.
func recordedIn(expr string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool {
		return !(r == ':' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if strings.Count(f, ":") >= 1 && strings.Contains(f, "prewarm_") {
			out = append(out, f)
		}
	}
	return out
}
