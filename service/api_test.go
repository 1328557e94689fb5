package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
)

// noisyDaily is daily demand with a non-periodic wobble of ±10%, so that
// seasonal naive is not exact and the MASE is a finite figure.
func noisyDaily(ts time.Time) float64 {
	return daily(ts) * (1 + 0.1*math.Sin(float64(ts.Unix())/7777))
}

// fetch GETs path from srv and returns the status and the body.
func fetch(t *testing.T, srv *httptest.Server, path string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkSnakeCase fails t for every object key in v that is not snake_case.
func checkSnakeCase(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snakeCase.MatchString(k) {
				t.Errorf("%s: key %q is not snake_case", where, k)
			}
			checkSnakeCase(t, where+"."+k, e)
		}
	case []any:
		for _, e := range x {
			checkSnakeCase(t, where+"[]", e)
		}
	}
}

// tickEvery advances the rig's clock by step n times, writing per-minute
// demand and ticking after each.
func (r *rig) tickEvery(t *testing.T, step time.Duration, n int, rate func(time.Time) float64) {
	t.Helper()
	for range n {
		from := r.clock.Now()
		r.clock.Advance(step)
		r.writeDemand(t, from, r.clock.Now(), rate)
		if err := r.svc.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// Every endpoint answers JSON in snake_case; the forecast, schedule and
// history carry data; unknown pools are 404 and bad parameters 400.
func TestAPIViews(t *testing.T) {
	r := newRig(t, 2, nil)
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-15*24*time.Hour), start, noisyDaily)
	// Past one refit_every (3h), so a later refit has scored the first's
	// forecasts.
	r.tickEvery(t, 10*time.Minute, 24, noisyDaily)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{Gatherer: r.reg, Notice: "test"}))
	defer srv.Close()

	for _, path := range []string{"/api/v1/info", "/api/v1/pools", "/api/v1/pools/gpu", "/api/v1/pools/gpu/forecast",
		"/api/v1/pools/gpu/schedule", "/api/v1/pools/gpu/history", "/api/v1/pools/gpu/decisions", "/readyz"} {
		code, body, h := fetch(t, srv, path)
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d %s\n%s", path, code, h.Get("Content-Type"), body)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
		checkSnakeCase(t, path, v)
	}

	now := r.clock.Now()
	var fc ForecastView
	_, body, _ := fetch(t, srv, "/api/v1/pools/gpu/forecast")
	if err := json.Unmarshal(body, &fc); err != nil {
		t.Fatal(err)
	}
	st, _ := r.svc.PoolStatus(testPool)
	if fc.Model == "" || !fc.MadeAt.Equal(st.LastRefit) || time.Duration(fc.Step) != 30*time.Minute || len(fc.Steps) < 12 {
		t.Errorf("forecast: model %q made %s (last refit %s), step %v, %d steps", fc.Model, fc.MadeAt, st.LastRefit, fc.Step, len(fc.Steps))
	}
	for i, s := range fc.Steps {
		if !s.Mean.Known() || s.Lower > s.Mean || s.Mean > s.Upper {
			t.Errorf("forecast step %d: %+v, want lower ≤ mean ≤ upper", i, s)
		}
		if want := fc.MadeAt.Add(time.Duration(i) * 30 * time.Minute); !s.At.Equal(want) {
			t.Errorf("forecast step %d at %s, want %s", i, s.At, want)
		}
	}
	if len(fc.History) != 48 {
		t.Errorf("forecast history has %d steps, want a day of 30m steps", len(fc.History))
	}
	for _, h := range fc.History {
		if !h.DemandRPS.Known() {
			t.Errorf("history step %s has no demand: %+v", h.At, h)
		}
	}
	// The refits since the service started scored their forecasts.
	if scored := fc.History[len(fc.History)-1]; !scored.Mean.Known() {
		t.Errorf("the last history step %s has no forecast mean, though a refit of this service forecast it", scored.At)
	}

	var sched ScheduleView
	_, body, _ = fetch(t, srv, "/api/v1/pools/gpu/schedule")
	json.Unmarshal(body, &sched)
	if len(sched.Steps) == 0 || sched.Steps[0].At.After(now) || len(sched.ModelPlan) == 0 || sched.Gate == "" {
		t.Errorf("schedule: %+v, want the plan in force from now on", sched)
	}
	for i := 1; i < len(sched.Steps); i++ {
		if !sched.Steps[i].At.After(now) {
			t.Errorf("schedule step %d at %s is superseded before now %s", i, sched.Steps[i].At, now)
		}
	}

	var hist HistoryView
	_, body, _ = fetch(t, srv, "/api/v1/pools/gpu/history")
	json.Unmarshal(body, &hist)
	if len(hist.Samples) != 24 || time.Duration(hist.Bucket) != 5*time.Minute {
		t.Errorf("history: %d samples in buckets of %v, want one per 10-minute tick", len(hist.Samples), hist.Bucket)
	}
	for i, s := range hist.Samples {
		if !s.DemandRPS.Known() || s.Desired == 0 || (i > 0 && !s.At.After(hist.Samples[i-1].At)) {
			t.Errorf("sample %d: %+v", i, s)
		}
	}
	_, body, _ = fetch(t, srv, "/api/v1/pools/gpu/history?since="+now.Add(-30*time.Minute).Format(time.RFC3339))
	json.Unmarshal(body, &hist)
	if len(hist.Samples) != 4 {
		t.Errorf("history since 30m ago: %d samples, want 4", len(hist.Samples))
	}
	var dec DecisionPage
	_, body, _ = fetch(t, srv, "/api/v1/pools/gpu/decisions")
	json.Unmarshal(body, &dec)
	if dec.Persisted || len(dec.Decisions) != 0 {
		t.Errorf("decisions without a state file: %+v, want an empty page saying so", dec)
	}

	for _, tt := range []struct {
		path string
		code int
	}{
		{"/api/v1/pools/nope", 404}, {"/api/v1/pools/nope/forecast", 404}, {"/api/v1/pools/nope/schedule", 404},
		{"/api/v1/pools/nope/history", 404}, {"/api/v1/pools/nope/decisions", 404},
		{"/api/v1/pools/gpu/decisions?limit=0", 400}, {"/api/v1/pools/gpu/decisions?limit=501", 400},
		{"/api/v1/pools/gpu/decisions?before=x", 400}, {"/api/v1/pools/gpu/history?since=yesterday", 400},
		{"/nope", 404},
	} {
		if code, body, _ := fetch(t, srv, tt.path); code != tt.code {
			t.Errorf("GET %s: %d, want %d\n%s", tt.path, code, tt.code, body)
		}
	}
}

// The status page is served at / with a policy that allows its own script
// (by hash) and connections to its own origin, and nothing else.
func TestStatusPage(t *testing.T) {
	r := newRig(t, 2, nil)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	code, body, h := fetch(t, srv, "/")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", code, h.Get("Content-Type"))
	}
	page := string(body)
	_, script, _ := strings.Cut(page, "<script>")
	script, _, _ = strings.Cut(script, "</script>")
	sum := sha256.Sum256([]byte(script))
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "connect-src 'self'", "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Count(page, "<script") != 1 || regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(page) {
		t.Error("the page loads something from elsewhere; it must be self-contained")
	}
	for _, api := range []string{"/api/v1/pools", "/forecast", "/schedule", "/history", "/decisions"} {
		if !strings.Contains(script, api) {
			t.Errorf("the page's script does not fetch %s", api)
		}
	}
}

// /healthz says the process is alive whatever the store does; /readyz
// says whether decisions succeed.
func TestHealthAndReadiness(t *testing.T) {
	r := newRig(t, 2, nil)
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-time.Hour), start, daily)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	probe := func() (alive, ready int, why string) {
		alive, _, _ = fetch(t, srv, "/healthz")
		ready, body, _ := fetch(t, srv, "/readyz")
		var rd readiness
		json.Unmarshal(body, &rd)
		return alive, ready, rd.Reason
	}
	type want struct{ alive, ready int }
	check := func(step string, w want) {
		t.Helper()
		alive, ready, why := probe()
		if (want{alive, ready}) != w {
			t.Errorf("%s: healthz %d readyz %d (%s), want %+v", step, alive, ready, why, w)
		}
	}
	check("before the first decision", want{200, 503})
	r.tickEvery(t, time.Minute, 1, daily)
	check("deciding", want{200, 200})
	r.store.fail("requests_rps", true)
	for range 2 {
		r.clock.Advance(time.Minute)
		r.svc.Tick(context.Background())
	}
	check("store down for 2 intervals", want{200, 200})
	for range 2 {
		r.clock.Advance(time.Minute)
		r.svc.Tick(context.Background())
	}
	check("store down for 4 intervals", want{200, 503})
	if a, ok := alertOf(r.svc, testPool, AlertDecisionsFailing); !ok || a.Firing {
		t.Errorf("alert after 4 failed minutes: %+v, want %s pending", a, AlertDecisionsFailing)
	}
	for range 8 {
		r.clock.Advance(time.Minute)
		r.svc.Tick(context.Background())
	}
	if a, ok := alertOf(r.svc, testPool, AlertDecisionsFailing); !ok || !a.Firing {
		t.Errorf("alert after 12 failed minutes: %+v, want %s firing (for: 10m)", a, AlertDecisionsFailing)
	}
	r.store.fail("requests_rps", false)
	r.tickEvery(t, time.Minute, 1, daily)
	check("store back", want{200, 200})
	if a, ok := alertOf(r.svc, testPool, AlertDecisionsFailing); ok {
		t.Errorf("after recovery: %+v", a)
	}
	if st, _ := r.svc.PoolStatus(testPool); !st.FailingSince.IsZero() {
		t.Errorf("after recovery: failing since %s", st.FailingSince)
	}
}

// The decision history is kept in the state file: one entry per change or
// changed verdict, paged newest first, numbered on across a restart.
func TestDecisionHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *state.DB {
		st, err := state.Open(path, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	db := open()
	r := newRigWith(t, 2, nil, func(d *Deps) { d.State = db })
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-15*24*time.Hour), start, daily)
	r.tickEvery(t, 10*time.Minute, 60, daily) // ten hours of the daily ramp
	db.Flush()
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()

	var all DecisionPage
	_, body, _ := fetch(t, srv, "/api/v1/pools/gpu/decisions?limit=500")
	if err := json.Unmarshal(body, &all); err != nil || !all.Persisted {
		t.Fatalf("decisions: %v %s", err, body)
	}
	n := len(all.Decisions)
	if n < 3 || n >= 60 {
		t.Fatalf("%d entries for 60 decisions over a ramp: want the changes, not every tick", n)
	}
	changes := 0
	for i, d := range all.Decisions {
		if i > 0 && d.Seq >= all.Decisions[i-1].Seq {
			t.Errorf("entry %d (seq %d) after seq %d: want newest first", i, d.Seq, all.Decisions[i-1].Seq)
		}
		if d.Outcome == OutcomeApplied {
			changes++
			if d.RequestID == "" || d.From == nil || *d.From == d.Desired || d.Reason == "" {
				t.Errorf("applied entry %+v lacks its change", d)
			}
		}
		if i+1 < n && d.same(all.Decisions[i+1]) {
			t.Errorf("entries %d and %d record the same decision: %+v", d.Seq, all.Decisions[i+1].Seq, d)
		}
	}
	if want := len(r.fake.CallsOf("set_desired")); changes != want {
		t.Errorf("%d applied entries, the back-end was changed %d times", changes, want)
	}
	t.Logf("60 decisions over ten hours of the ramp: %d entries, %d of them changes", n, changes)
	// Paging: pages of 2 walk the same entries.
	var walked []uint64
	for before := uint64(0); ; {
		var page DecisionPage
		_, body, _ := fetch(t, srv, "/api/v1/pools/gpu/decisions?limit=2&before="+jsonNumber(before))
		json.Unmarshal(body, &page)
		for _, d := range page.Decisions {
			walked = append(walked, d.Seq)
		}
		if page.Next == 0 {
			break
		}
		before = page.Next
	}
	if len(walked) != n || walked[0] != all.Decisions[0].Seq || walked[n-1] != all.Decisions[n-1].Seq {
		t.Errorf("paging by 2 walked %v, want the %d entries", walked, n)
	}

	// A restart numbers on and does not repeat the last entry.
	srv.Close()
	last := all.Decisions[0]
	db.Close()
	db = open()
	defer db.Close()
	r2 := newRigWith(t, r.fake.Pool(testPool).Desired, nil, func(d *Deps) { d.State, d.Store, d.Now = db, r.store, r.clock.Now })
	r2.db, r2.store, r2.clock = r.db, r.store, r.clock
	r2.tickEvery(t, 10*time.Minute, 12, daily)
	db.Flush()
	page, err := r2.svc.Decisions(testPool, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var first *Decision // the restarted service's first entry
	for i := range page.Decisions {
		if d := &page.Decisions[i]; d.Seq == last.Seq+1 {
			first = d
		}
	}
	if len(page.Decisions) <= n || first == nil || !first.At.After(last.At) || first.same(last) {
		t.Errorf("after a restart: %d entries (before %d), entry %d = %+v, want a new decision after %+v", len(page.Decisions), n, last.Seq+1, first, last)
	}
}

// alertOf returns the pool's alert named name.
func alertOf(svc *Service, pool, name string) (Alert, bool) {
	st, _ := svc.PoolStatus(pool)
	for _, a := range st.Alerts {
		if a.Name == name {
			return a, true
		}
	}
	return Alert{}, false
}

func jsonNumber(n uint64) string {
	if n == 0 {
		return ""
	}
	b, _ := json.Marshal(n)
	return string(b)
}

// Booting instances count as current but not ready; while desired exceeds
// ready the shortfall's duration grows, and the capacity-short alert fires
// once it outlasts the pool's boot_delay by the rule's minute.
func TestReadyBootingAndCapacityShort(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	// The fleet boots in 20 minutes, twice the pool's boot_delay: the
	// instances come up late.
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 20 * time.Minute})
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	r.serveFleet(t, fleet, m, nil, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	high := func(time.Time) float64 { return 150 } // 15 instances' worth
	r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now(), high)
	// The warm-up holds the peak seen so far: at minute 1 the pool asks
	// for the 19 instances 150 req/s needs (capacity is read before the
	// change, so the boot shows from the next tick); they boot for the
	// fleet's 20 minutes.
	steps := []struct {
		minute, ready, booting int
		short                  float64
		alert                  bool
	}{
		{1, 2, 0, 0, false},     // asked for now: short from here
		{5, 2, 17, 240, false},  // booting
		{11, 2, 17, 600, false}, // as long as boot_delay: not yet
		{12, 2, 17, 660, true},  // longer than boot_delay: firing
		{25, 19, 0, 0, false},   // all up: nothing short
	}
	elapsed := 0
	for _, s := range steps {
		r.tickEvery(t, time.Minute, s.minute-elapsed, high)
		elapsed = s.minute
		st, _ := r.svc.PoolStatus(testPool)
		_, alert := alertOf(r.svc, testPool, AlertCapacityShort)
		t.Logf("minute %d: current %d ready %d booting %d desired %d short %vs (%s)", s.minute, st.Current, st.Ready, st.Booting, st.Desired, st.CapacityShortSeconds, st.Reason)
		if st.Ready != s.ready || st.Booting != s.booting || st.CapacityShortSeconds != s.short || alert != s.alert {
			t.Errorf("minute %d: ready %d booting %d short %vs alert %v, want %d, %d, %vs, %v", s.minute, st.Ready, st.Booting,
				st.CapacityShortSeconds, alert, s.ready, s.booting, s.short, s.alert)
		}
		if got := testGauge(t, reg, "prewarm_pool_ready_instances"); got != float64(st.Ready) {
			t.Errorf("ready gauge %v, status %d", got, st.Ready)
		}
		if got := testGauge(t, reg, "prewarm_pool_booting_instances"); got != float64(st.Booting) {
			t.Errorf("booting gauge %v, status %d", got, st.Booting)
		}
		if got := testGauge(t, reg, "prewarm_pool_capacity_short_seconds"); got != st.CapacityShortSeconds {
			t.Errorf("short gauge %v, status %v", got, st.CapacityShortSeconds)
		}
	}
	// Once the instances are up, the shortfall ends.
	r.tickEvery(t, time.Minute, 30, high)
	st, _ := r.svc.PoolStatus(testPool)
	if _, alert := alertOf(r.svc, testPool, AlertCapacityShort); st.Booting != 0 || st.CapacityShortSeconds != 0 || alert {
		t.Errorf("after the boot: booting %d, short %vs, alert %v", st.Booting, st.CapacityShortSeconds, alert)
	}
}

func testGauge(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// A path nothing serves is a 404 a person can use: a page linking back to
// the status page, or under /api/ a JSON error naming the request, never
// Go's plain text; and the API's own paths still answer.
func TestUnknownPathsAreUseful404s(t *testing.T) {
	r := newRig(t, 2, nil)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	cases := []struct {
		path, contentType string
		code              int
		want              []string
	}{
		{"/nope<script>", "text/html", http.StatusNotFound, []string{`href="/"`, "/nope&lt;script&gt;"}},
		{"/api/v1/nope", "application/json", http.StatusNotFound, []string{`"error"`, "no such endpoint: GET /api/v1/nope", "/api/v1/pools"}},
		{"/api/v1/pools", "application/json", http.StatusOK, []string{testPool}},
		{"/", "text/html", http.StatusOK, []string{"<script>"}},
	}
	for _, tc := range cases {
		code, body, h := fetch(t, srv, tc.path)
		if code != tc.code || !strings.HasPrefix(h.Get("Content-Type"), tc.contentType) {
			t.Errorf("GET %s: %d %s, want %d %s", tc.path, code, h.Get("Content-Type"), tc.code, tc.contentType)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("GET %s: the answer lacks %q:\n%s", tc.path, w, body)
			}
		}
		if strings.Contains(string(body), "<script>") && tc.path != "/" {
			t.Errorf("GET %s: the path was echoed unescaped", tc.path)
		}
	}
	// Another method on a read-only path is still refused as such.
	resp, err := http.Post(srv.URL+"/api/v1/pools", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/v1/pools: %s, want 405 Method Not Allowed", resp.Status)
	}
}
