package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/internal/authguard"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/service/state"
)

// floor30 is a pool with a schedule floor: 1 replica, min 1, max 40, max_step 4,
// min_interval 10m, a floor of 30 all day.
func floor30(mode poolspec.Mode) func(*poolspec.Pool) {
	return func(p *poolspec.Pool) {
		p.Mode, p.Fleet.MinInstances, p.Fleet.MaxInstances, p.Fleet.MaxStep, p.Fleet.MinInterval = mode, 1, 40, 4, 10*time.Minute
		p.Windows = "daily 00:00-24:00 at least 30"
	}
}

func (r *rig) tickWithDemand(t *testing.T, rps float64) {
	t.Helper()
	r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), func(time.Time) float64 { return rps })
	if err := r.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestModes(t *testing.T) {
	tests := []struct {
		mode        poolspec.Mode
		preview     bool
		wantChanges int
		wantStatus  decided
	}{
		{poolspec.ModeActive, false, 1, decided{30, 5, "max_step", OutcomeLimited}},
		// It reads the real fleet (1), computes the 30 and the first step
		// the limits allow, and applies nothing.
		{poolspec.ModeForecastOnly, false, 0, decided{30, 5, "max_step", OutcomeNotApplied}},
		{poolspec.ModePaused, false, 0, decided{1, 1, "", OutcomeNotApplied}},
		// serve --once without --apply: even an active pool applies nothing.
		{poolspec.ModeActive, true, 0, decided{30, 5, "max_step", OutcomeNotApplied}},
	}
	for _, tt := range tests {
		name := string(tt.mode)
		if tt.preview {
			name += " previewed"
		}
		t.Run(name, func(t *testing.T) {
			r := newRigWith(t, 1, floor30(tt.mode), func(d *Deps) { d.Preview = tt.preview })
			r.tickWithDemand(t, 5)
			if n := len(r.fake.CallsOf(actuator.OpSetDesired)); n != tt.wantChanges {
				t.Errorf("%d changes sent, want %d", n, tt.wantChanges)
			}
			if n := len(r.fake.CallsOf(actuator.OpCapacity)); n == 0 {
				t.Error("the pool's real capacity was never read")
			}
			st := r.svc.Status()[0]
			got := decided{st.Wished, st.Desired, st.LimitedBy, st.Outcome}
			if got != tt.wantStatus || st.Mode != tt.mode || st.Current != 1 || !st.CurrentKnown {
				t.Errorf("status %+v, want %+v in mode %s at 1 current", st, tt.wantStatus, tt.mode)
			}
			if tt.mode == poolspec.ModePaused && !strings.HasPrefix(st.Reason, "paused: holding 1") {
				t.Errorf("reason %q, want the hold said", st.Reason)
			}
		})
	}
}

// The pool's status as JSON: snake_case keys with the wished and the
// applied capacity, for the status page.
func TestStatusJSON(t *testing.T) {
	r := newRig(t, 1, floor30(poolspec.ModeActive))
	r.tickWithDemand(t, 5)
	b, err := json.Marshal(r.svc.Status()[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, key := range []string{"name", "backend", "mode", "mode_source", "at", "decided_in", "current", "current_known", "wished",
		"desired", "limited_by", "outcome", "applied", "reason", "demand_rps", "gate", "plan", "next_refit"} {
		if _, ok := m[key]; !ok {
			t.Errorf("status JSON lacks %q: %s", key, b)
		}
	}
	applied, _ := m["applied"].(map[string]any)
	if applied["from"] != 1.0 || applied["to"] != 5.0 || applied["request_id"] == "" || applied["at"] == nil {
		t.Errorf("applied = %v, want the change 1 → 5 with its time and request id", applied)
	}
}

// A restart keeps the pool's memory: the last change (so min_interval
// still holds and nothing is repeated), the refit in force with its gate,
// and the next refit time.
func TestRestartKeepsTheMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	withState := func(d *Deps) {
		st, err := state.Open(path, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		d.State = st
	}
	r := newRigWith(t, 1, floor30(poolspec.ModeActive), withState)
	r.writeDemand(t, r.clock.Now().Add(-3*24*time.Hour), r.clock.Now(), daily)
	r.tickWithDemand(t, 5)
	before := r.svc.Status()[0]
	if before.Applied == nil || before.Applied.To != 5 {
		t.Fatalf("first decision = %+v, want 1 → 5 applied", before)
	}
	r.svc.deps.State.Close()

	// The process dies; another starts a minute later on the same file
	// and back-end (at 5 replicas now).
	r2 := newRigWith(t, 5, floor30(poolspec.ModeActive), withState)
	r2.clock.Advance(time.Minute)
	r2.db = r.db
	r2.store.Querier = r.db
	r2.tickWithDemand(t, 5)
	after := r2.svc.Status()[0]
	if n := len(r2.fake.CallsOf(actuator.OpSetDesired)); n != 0 {
		t.Errorf("the restarted service changed the pool %d times within min_interval", n)
	}
	if after.Outcome != OutcomeRateLimited || after.Applied == nil || after.Applied.RequestID != before.Applied.RequestID ||
		!after.NextChangeAt.Equal(before.Applied.At.Add(10*time.Minute)) {
		t.Errorf("after restart: %+v; want rate limited by the change %+v", after, before.Applied)
	}
	if after.LastRefit.IsZero() || !after.LastRefit.Equal(before.LastRefit) || after.Gate != before.Gate || after.GateReason != before.GateReason {
		t.Errorf("refit after restart %v (%s: %s), want the one before %v (%s: %s) kept, not redone",
			after.LastRefit, after.Gate, after.GateReason, before.LastRefit, before.Gate, before.GateReason)
	}
}

func TestModeAPI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := newRigWith(t, 1, floor30(poolspec.ModeForecastOnly), func(d *Deps) { d.State = st; d.Redactor = nil })
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{APIToken: "s3cret-token"}))
	defer srv.Close()
	post := func(path, token, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	tests := []struct {
		name, path, token, body string
		code                    int
		want                    string
	}{
		{"no token", "/api/v1/pools/gpu/mode", "", `{"mode":"active"}`, 401, "missing or wrong bearer token"},
		{"wrong token", "/api/v1/pools/gpu/mode", "guess", `{"mode":"active"}`, 401, "missing or wrong bearer token"},
		{"unknown mode", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"live"}`, 400, `mode \"live\"`},
		{"unknown field", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mood":"active"}`, 400, "unknown field"},
		{"duplicate key", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active","mode":"paused"}`, 400, `key \"mode\" given twice`},
		{"trailing data", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active"} {"mode":"paused"}`, 400, "after the JSON object"},
		{"trailing garbage", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active"}x`, 400, "after the JSON object"},
		{"nested unknown field", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active","x":{"mode":"paused"}}`, 400, "unknown field"},
		{"oversized", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active"}` + strings.Repeat(" ", 5000), 400, "over 4096 bytes"},
		{"empty", "/api/v1/pools/gpu/mode", "s3cret-token", ``, 400, "empty body"},
		{"unknown pool", "/api/v1/pools/cpu/mode", "s3cret-token", `{"mode":"active"}`, 404, `no such pool \"cpu\"`},
		{"set", "/api/v1/pools/gpu/mode", "s3cret-token", `{"mode":"active"}`, 200, `"mode_source": "api"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(tt.path, tt.token, tt.body)
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s, want %d with %q", code, body, tt.code, tt.want)
			}
		})
	}
	r.tickWithDemand(t, 5)
	if n := len(r.fake.CallsOf(actuator.OpSetDesired)); n != 1 {
		t.Errorf("%d changes after the API made the pool active, want 1", n)
	}
	saved, err := st.Load(testPool)
	if err != nil || saved.Mode == nil || saved.Mode.Mode != "active" || saved.Mode.ConfigMode != "forecast-only" {
		t.Errorf("saved mode = %+v, %v", saved.Mode, err)
	}
	// Without a token configured the endpoint refuses everyone.
	closed := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer closed.Close()
	resp, err := http.Post(closed.URL+"/api/v1/pools/gpu/mode", "application/json", strings.NewReader(`{"mode":"paused"}`))
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("without a token: %v %v, want 403", resp.StatusCode, err)
	}
}

// A mode set through the API survives a restart while the file still says
// what it said; once the file changes the pool's mode, the file wins.
func TestModeOverrideAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *state.DB {
		st, err := state.Open(path, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	r := newRigWith(t, 1, floor30(poolspec.ModeForecastOnly), func(d *Deps) { d.State = st })
	if _, err := r.svc.SetMode(testPool, poolspec.ModePaused, "test"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tt := range []struct {
		fileMode, want poolspec.Mode
	}{{poolspec.ModeForecastOnly, poolspec.ModePaused}, {poolspec.ModeActive, poolspec.ModeActive}} {
		st := open()
		r := newRigWith(t, 1, floor30(tt.fileMode), func(d *Deps) { d.State = st })
		if got := r.svc.Status()[0]; got.Mode != tt.want {
			t.Errorf("file says %s: mode %s (%s), want %s", tt.fileMode, got.Mode, got.ModeSource, tt.want)
		}
		st.Close()
	}
}

// decided are the status fields of one decision TestModes compares.
type decided struct {
	wished, desired    int
	limitedBy, outcome string
}

// A secret a back-end echoes in its error reaches neither the pool's
// status nor the API: both go through the service's redactor.
func TestSecretsAreMaskedInStatusAndAPI(t *testing.T) {
	const secret = "AKLT-very-secret-key-0123456789"
	r := newRigWith(t, 1, floor30(poolspec.ModeActive), func(d *Deps) { d.Redactor = redact.New(secret) })
	r.fake.OnScale = func(string, int, int) error {
		return fmt.Errorf("proxy said: bad signature for key %s: %w", secret, actuator.ErrRejected)
	}
	r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), func(time.Time) float64 { return 5 })
	r.svc.Tick(context.Background())
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/pools")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st := r.svc.Status()[0]
	if !strings.Contains(st.Error, "bad signature for key "+redact.Mask) || strings.Contains(st.Error, secret) || strings.Contains(string(body), secret) {
		t.Errorf("status error %q; API %s", st.Error, body)
	}
}

// Wrong tokens on the mode endpoint are limited as the release hook's
// are: past the per-address burst they get 429 with Retry-After, while
// the right token, from the same address, still changes the mode.
func TestModeAPIWrongTokensAreLimited(t *testing.T) {
	r := newRig(t, 1, floor30(poolspec.ModeForecastOnly))
	h := r.svc.Handler(HTTPOptions{APIToken: "s3cret-token"})
	post := func(auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/pools/gpu/mode", strings.NewReader(`{"mode":"paused"}`))
		req.RemoteAddr = "198.51.100.7:4000"
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	codes := map[int]int{}
	for i := range 30 {
		rec := post(fmt.Sprintf("Bearer guess-%d", i))
		codes[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if codes[http.StatusUnauthorized] != authguard.DefaultPerClientBurst || codes[http.StatusTooManyRequests] != 30-authguard.DefaultPerClientBurst {
		t.Errorf("30 wrong tokens: %v, want %d × 401 then 429", codes, authguard.DefaultPerClientBurst)
	}
	if rec := post("Bearer s3cret-token"); rec.Code != http.StatusOK {
		t.Errorf("the right token after the guesses: %d %s, want 200", rec.Code, rec.Body)
	}
}
