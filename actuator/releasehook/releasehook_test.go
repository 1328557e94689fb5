package releasehook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/prewarm/prewarm/redact"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
)

const token = "release-token-do-not-log-4242"

// releaserFunc adapts a function to releasehook.Releaser.
type releaserFunc func(ctx context.Context, id, reason string) error

func (f releaserFunc) Release(ctx context.Context, id, reason string) error {
	return f(ctx, id, reason)
}

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func post(t *testing.T, h http.Handler, method, auth, body string) (int, releasehook.Reply) {
	t.Helper()
	req := httptest.NewRequest(method, releasehook.Path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var rep releasehook.Reply
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatalf("reply is not JSON: %q", rec.Body.String())
	}
	return rec.Code, rep
}

func TestHandlerStatuses(t *testing.T) {
	var released []string
	rel := releaserFunc(func(ctx context.Context, id, reason string) error {
		switch id {
		case "i-rejected":
			return fmt.Errorf("volcengine StopInstances: %w: InvalidInstanceStatus", actuator.ErrRejected)
		case "i-breaker":
			return fmt.Errorf("%w: back-end volcengine", actuator.ErrCircuitOpen)
		case "i-noimpl":
			return actuator.ErrNotImplemented
		}
		released = append(released, id+"|"+reason)
		return nil
	})
	locate := func(ctx context.Context, id string) (string, error) {
		switch id {
		case "i-checkfails":
			return "", fmt.Errorf("%w: DescribeScalingInstances: InternalError", actuator.ErrTransient)
		case "i-foreign":
			return "", nil
		}
		return "gpu", nil
	}
	logs := &logBuffer{}
	h, err := releasehook.New(releasehook.Config{Releaser: rel, Token: token, Locate: locate,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + token
	cases := []struct {
		name       string
		method     string
		auth, body string
		status     int
		outcome    string
		errPart    string
	}{
		{"release", "POST", bearer, `{"instance_id":"i-abc","reason":"job 42 done"}`, 200, "released", ""},
		{"lower-case bearer", "POST", "bearer " + token, `{"instance_id":"i-abc2"}`, 200, "released", ""},
		{"GET", "GET", bearer, `{"instance_id":"i-abc"}`, 405, "error", "POST"},
		{"no token", "POST", "", `{"instance_id":"i-abc"}`, 401, "error", "bearer token"},
		{"wrong token", "POST", "Bearer " + token + "x", `{"instance_id":"i-abc"}`, 401, "error", "bearer token"},
		{"basic auth", "POST", "Basic " + token, `{"instance_id":"i-abc"}`, 401, "error", "bearer token"},
		{"not JSON", "POST", bearer, `instance=i-abc`, 400, "error", "not a release request"},
		{"no instance", "POST", bearer, `{"reason":"x"}`, 400, "error", "instance_id is required"},
		{"malformed instance", "POST", bearer, `{"instance_id":"i abc; rm -rf"}`, 400, "error", "malformed"},
		{"unknown kind", "POST", bearer, `{"kind":"explode","instance_id":"i-abc"}`, 400, "error", "kind"},
		{"too large", "POST", bearer, `{"instance_id":"i-abc","reason":"` + strings.Repeat("x", 70<<10) + `"}`, 400, "error", "larger than"},
		{"alert event ignored", "POST", bearer, `{"kind":"alert","rule":"util_high","instance_id":"i-abc"}`, 200, "ignored", ""},
		{"outside the pools", "POST", bearer, `{"instance_id":"i-foreign"}`, 403, "refused", "not in a configured pool"},
		{"allow-check fails", "POST", bearer, `{"instance_id":"i-checkfails"}`, 502, "error", "InternalError"},
		{"cloud rejects", "POST", bearer, `{"instance_id":"i-rejected"}`, 502, "error", "InvalidInstanceStatus"},
		{"breaker open", "POST", bearer, `{"instance_id":"i-breaker"}`, 503, "error", "circuit breaker"},
		{"back-end cannot release", "POST", bearer, `{"instance_id":"i-noimpl"}`, 501, "error", "not implemented"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, rep := post(t, h, tc.method, tc.auth, tc.body)
			if status != tc.status || rep.Outcome != tc.outcome || !strings.Contains(rep.Error, tc.errPart) {
				t.Errorf("got %d %+v, want %d %s with error containing %q", status, rep, tc.status, tc.outcome, tc.errPart)
			}
		})
	}
	want := []string{"i-abc|job 42 done", "i-abc2|release requested over HTTP"}
	if fmt.Sprint(released) != fmt.Sprint(want) {
		t.Errorf("released %v, want %v", released, want)
	}
	if strings.Contains(logs.String(), token) {
		t.Errorf("the token reached the log:\n%s", logs.String())
	}
}

func TestNewNeedsTokenAndReleaser(t *testing.T) {
	rel := releaserFunc(func(context.Context, string, string) error { return nil })
	if _, err := releasehook.New(releasehook.Config{Releaser: rel}); err == nil || !strings.Contains(err.Error(), "PREWARM_RELEASE_TOKEN") {
		t.Errorf("no token: err = %v", err)
	}
	if _, err := releasehook.New(releasehook.Config{Token: token}); err == nil {
		t.Error("no releaser accepted")
	}
}

// TestIdleEventReachesCloudAPI delivers the collector's idle event over real
// HTTP to the handler, which releases through actuator.Safe and the real
// Volcengine back-end into the loopback fake; the StopInstances request must
// arrive within 2 s of the POST (the release hook's goal). It logs the latency.
func TestIdleEventReachesCloudAPI(t *testing.T) {
	cloud := volcenginetest.New()
	t.Cleanup(cloud.Close)
	cloud.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 8, Desired: 2, InstanceIDs: []string{"i-idle01", "i-busy02"}})
	cloud.AddInstance(volcenginetest.Instance{ID: "i-localdisk", RefusesStopCharging: true})
	arrived := make(chan time.Time, 10)
	cloud.OnCall(func(c volcenginetest.Call) {
		if c.Action == "StopInstances" {
			arrived <- c.At
		}
	})
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	act, err := volcengine.New(volcengine.Config{
		AccessKey: volcenginetest.DefaultAccessKey, SecretKey: volcenginetest.DefaultSecretKey,
		Region: volcenginetest.DefaultRegion, Endpoint: cloud.URL,
	}, volcengine.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	pools := []actuator.PoolConfig{{Name: "scg-gpu", Backend: "volcengine", Limits: planner.Limits{MaxInstances: 8}, Options: map[string]string{"instances": "i-localdisk"}}}
	safe := actuator.NewSafe(act, actuator.SafetyOptions{Pools: pools, Logger: logger, Audit: io.Discard,
		Redactor: redact.New(volcenginetest.DefaultSecretKey, token)})
	releases, err := volcengine.NewReleases(pools, func(string) actuator.Actuator { return act })
	if err != nil {
		t.Fatal(err)
	}
	h, err := releasehook.New(releasehook.Config{
		Releaser: safe, Token: token, Logger: logger,
		Locate: releasehook.Locate(releases.Locate),
		Notes:  volcengine.NoteRecorder,
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+releasehook.Path, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	send := func(body string) (int, releasehook.Reply, time.Time) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+releasehook.Path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		sent := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep releasehook.Reply
		json.NewDecoder(resp.Body).Decode(&rep)
		return resp.StatusCode, rep, sent
	}

	// The collector's alert.Event JSON for an idle GPU, as it sends it.
	idle := `{"kind":"idle","rule":"idle","instance_id":"i-idle01","pool":"scg-gpu","host":"gpu-node-7","gpu":"0",
	  "uuid":"GPU-5b2c1f7e","since":"2026-11-30T01:10:00Z","at":"2026-11-30T01:40:00Z","value":0.3,"threshold":5,
	  "reason":"GPU 0 on gpu-node-7 below 5% utilisation for 30m"}`
	status, rep, sent := send(idle)
	if status != http.StatusOK || rep.Outcome != "released" {
		t.Fatalf("idle event: %d %+v", status, rep)
	}
	select {
	case at := <-arrived:
		latency := at.Sub(sent)
		t.Logf("idle event → StopInstances at the cloud API: %v (handler reported %.3f ms)", latency, rep.TookMS)
		if latency > 2*time.Second {
			t.Errorf("latency %v exceeds 2 s", latency)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("StopInstances did not reach the cloud API within 2 s")
	}
	c := cloud.Calls("StopInstances")[0]
	if c.Params.Get("InstanceIds.1") != "i-idle01" || c.Params.Get("StoppedMode") != "StopCharging" || c.SignatureErr != nil {
		t.Errorf("StopInstances = %v (signature error %v)", c.Params, c.SignatureErr)
	}
	if !strings.Contains(rep.Reason, "below 5% utilisation") || !strings.Contains(rep.Note, "StopCharging") {
		t.Errorf("reply = %+v", rep)
	}

	// An instance of another group is refused before any stop.
	cloud.AddGroup(volcenginetest.Group{ID: "scg-other", Max: 2, InstanceIDs: []string{"i-stranger"}})
	if status, rep, _ := send(`{"kind":"idle","instance_id":"i-stranger"}`); status != http.StatusForbidden || rep.Outcome != "refused" {
		t.Errorf("stranger: %d %+v", status, rep)
	}
	if n := len(cloud.Calls("StopInstances")); n != 1 {
		t.Errorf("%d StopInstances calls, want 1", n)
	}

	// A listed instance whose type refuses StopCharging: stopped with
	// KeepCharging, and the reply says so.
	status, rep, _ = send(`{"instance_id":"i-localdisk","reason":"job done"}`)
	if status != http.StatusOK || !strings.Contains(rep.Note, "KeepCharging") || !strings.Contains(rep.Note, "billed") {
		t.Errorf("fallback: %d %+v", status, rep)
	}

	// The cloud answers with an error envelope: 502 with its message.
	cloud.AddInstance(volcenginetest.Instance{ID: "i-busy02"})
	cloud.Fail("StopInstances", volcenginetest.Reply{Status: 400, Code: "InvalidInstanceStatus", Message: "The status of the specified instance does not support this request."})
	status, rep, _ = send(`{"instance_id":"i-busy02"}`)
	if status != http.StatusBadGateway || !strings.Contains(rep.Error, "does not support this request") || !strings.Contains(rep.Error, "RequestId") {
		t.Errorf("error envelope: %d %+v", status, rep)
	}
	for _, s := range []string{volcenginetest.DefaultSecretKey, token} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("a secret reached the log:\n%s", logs.String())
		}
	}
}

// FuzzHandlerBody: any body gets a JSON reply with 200 or 400, never a
// panic, and only a well-formed instance ID reaches the releaser.
func FuzzHandlerBody(f *testing.F) {
	f.Add(`{"instance_id":"i-abc","reason":"done"}`)
	f.Add(`{"kind":"idle","instance_id":"i-abc","since":"2026-11-30T01:10:00Z","gpu":"0","host":"h"}`)
	f.Add(`{"kind":"alert","instance_id":""}`)
	f.Add(`{"instance_id":"i abc"}`)
	f.Add(`[1,2`)
	idRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	f.Fuzz(func(t *testing.T, body string) {
		h, err := releasehook.New(releasehook.Config{Token: token, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Releaser: releaserFunc(func(_ context.Context, id, _ string) error {
				if !idRE.MatchString(id) {
					t.Errorf("malformed instance ID %q reached the releaser", id)
				}
				return nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", releasehook.Path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Code != 400 {
			t.Errorf("status %d for %q", rec.Code, body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Errorf("reply is not JSON: %q", rec.Body.String())
		}
	})
}

// A long reason is cut to 1 KiB without splitting a character, so the
// audit log stays valid UTF-8.
func TestLongReasonTruncatedOnRuneBoundary(t *testing.T) {
	var got string
	rel := releaserFunc(func(_ context.Context, _, reason string) error { got = reason; return nil })
	h, err := releasehook.New(releasehook.Config{Releaser: rel, Token: token, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reason string
		wantLen      int
	}{
		{"short", "job done", 8},
		{"exactly 1 KiB", strings.Repeat("x", 1024), 1024},
		// 1023 ASCII bytes, then a 2-byte 'é' straddling the limit.
		{"multibyte at the limit", strings.Repeat("x", 1023) + "éé", 1023},
		{"all multibyte", strings.Repeat("界", 400), 1023},
	}
	for _, tc := range tests {
		body, _ := json.Marshal(map[string]string{"instance_id": "i-abc", "reason": tc.reason})
		if status, rep := post(t, h, "POST", "Bearer "+token, string(body)); status != http.StatusOK {
			t.Fatalf("%s: %d %+v", tc.name, status, rep)
		}
		if len(got) != tc.wantLen || !utf8.ValidString(got) || !strings.HasPrefix(tc.reason, got) {
			t.Errorf("%s: reason cut to %d bytes (valid UTF-8: %v), want %d", tc.name, len(got), utf8.ValidString(got), tc.wantLen)
		}
	}
}

// With replicas sharing the pools, only the replica acting for the
// instance's pool releases it. A standby answers 503 with Retry-After and
// the owner's name and calls nothing, so the caller's retry can reach the
// owner; a request whose pool cannot be told, or that names a pool outside
// the configuration, is refused before anything is asked.
func TestOnlyThePoolsOwnerReleases(t *testing.T) {
	owners := map[string]string{"gpu": "", "batch": "replica-b"} // "" is this replica
	route := func(pool string) (bool, string) {
		o := owners[pool]
		return o == "", o
	}
	type want struct {
		status        int
		outcome, pool string
		owner         string
		retryAfter    string
		released      bool
	}
	cases := []struct {
		name   string
		locate releasehook.Locate
		pools  []string
		body   string
		want   want
	}{
		{"owner releases (pool from the body)", nil, []string{"gpu", "batch"}, `{"instance_id":"i-1","pool":"gpu"}`,
			want{200, "released", "gpu", "", "", true}},
		{"standby leaves it to the owner", nil, []string{"gpu", "batch"}, `{"instance_id":"i-2","pool":"batch"}`,
			want{503, "standby", "batch", "replica-b", "2", false}},
		{"the only pool is the instance's", nil, []string{"batch"}, `{"instance_id":"i-3"}`,
			want{503, "standby", "batch", "replica-b", "2", false}},
		{"several pools and none named", nil, []string{"gpu", "batch"}, `{"instance_id":"i-4"}`,
			want{400, "error", "", "", "", false}},
		{"a pool outside the configuration", nil, []string{"gpu", "batch"}, `{"instance_id":"i-5","pool":"other"}`,
			want{403, "refused", "", "", "", false}},
		{"the membership check names the pool, not the body",
			func(context.Context, string) (string, error) { return "batch", nil }, []string{"gpu", "batch"},
			`{"instance_id":"i-6","pool":"gpu"}`, want{503, "standby", "batch", "replica-b", "2", false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			released := false
			rel := releaserFunc(func(context.Context, string, string) error { released = true; return nil })
			h, err := releasehook.New(releasehook.Config{Releaser: rel, Token: token, Locate: tc.locate, Pools: tc.pools,
				Route: route, RetryAfter: 1500 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, releasehook.Path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var rep releasehook.Reply
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatalf("reply is not JSON: %q", rec.Body.String())
			}
			got := want{rec.Code, rep.Outcome, rep.Pool, rep.Owner, rec.Header().Get("Retry-After"), released}
			if got != tc.want {
				t.Errorf("got %+v (error %q), want %+v", got, rep.Error, tc.want)
			}
			if tc.want.outcome == "standby" && !strings.Contains(rep.Error, "replica-b") {
				t.Errorf("a standby's answer does not name the owner: %q", rep.Error)
			}
		})
	}
}

// A standby passes a release on to the pool's owner once, with the
// caller's token and idempotency key, and answers with the owner's
// answer; a request already passed on, or an owner it cannot reach, gets
// the standby's 503 and releases nothing anywhere.
func TestStandbyForwardsToTheOwner(t *testing.T) {
	var ownerReleased []string
	var ownerKeys []string
	owner, err := releasehook.New(releasehook.Config{Token: token, Pools: []string{"gpu"}, Logger: slog.New(slog.DiscardHandler),
		Route: func(string) (bool, string) { return true, "" },
		Releaser: releaserFunc(func(ctx context.Context, id, _ string) error {
			ownerReleased = append(ownerReleased, id)
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	ownerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ownerKeys = append(ownerKeys, r.Header.Get(releasehook.IdempotencyHeader))
		owner.ServeHTTP(w, r)
	}))
	t.Cleanup(ownerSrv.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	cases := []struct {
		name      string
		address   string
		forwarded bool
		status    int
		outcome   string
		to        string
		released  int
	}{
		{"passed on to the owner", ownerSrv.URL, false, 200, "released", "replica-a", 1},
		{"already passed on once", ownerSrv.URL, true, 503, "standby", "", 0},
		{"owner without an address", "", false, 503, "standby", "", 0},
		{"owner unreachable", goneURL, false, 503, "standby", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ownerReleased, ownerKeys = nil, nil
			standbyReleased := false
			standby, err := releasehook.New(releasehook.Config{Token: token, Pools: []string{"gpu"}, Logger: slog.New(slog.DiscardHandler),
				Route:    func(string) (bool, string) { return false, "replica-a" },
				Forward:  func(string) string { return tc.address },
				Releaser: releaserFunc(func(context.Context, string, string) error { standbyReleased = true; return nil })})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, releasehook.Path, strings.NewReader(`{"instance_id":"i-9"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set(releasehook.IdempotencyHeader, "job-9-end")
			if tc.forwarded {
				req.Header.Set(releasehook.ForwardedHeader, "1")
			}
			rec := httptest.NewRecorder()
			standby.ServeHTTP(rec, req)
			var rep releasehook.Reply
			json.Unmarshal(rec.Body.Bytes(), &rep)
			if rec.Code != tc.status || rep.Outcome != tc.outcome || rec.Header().Get(releasehook.ForwardedToHeader) != tc.to ||
				len(ownerReleased) != tc.released || standbyReleased {
				t.Errorf("got %d %s (forwarded to %q), owner released %v, standby released %v; want %d %s (%q), %d by the owner",
					rec.Code, rep.Outcome, rec.Header().Get(releasehook.ForwardedToHeader), ownerReleased, standbyReleased,
					tc.status, tc.outcome, tc.to, tc.released)
			}
			if tc.released > 0 && (len(ownerKeys) != 1 || ownerKeys[0] != "job-9-end") {
				t.Errorf("the owner saw idempotency keys %q, want the caller's", ownerKeys)
			}
		})
	}
}

// With ReleaserFor, an instance is released through the releaser of the
// pool it was located in; a pool ReleaserFor has none for, or an
// instance whose pool is not told, goes through Releaser.
func TestReleaserForPicksThePoolsReleaser(t *testing.T) {
	var got []string
	record := func(who string) releasehook.Releaser {
		return releaserFunc(func(_ context.Context, id, _ string) error { got = append(got, who+":"+id); return nil })
	}
	byPool := map[string]releasehook.Releaser{"ecs-a": record("ecs-a"), "ecs-b": record("ecs-b")}
	h, err := releasehook.New(releasehook.Config{Token: token, Releaser: record("fallback"), Pools: []string{"ecs-a", "ecs-b", "dry"},
		ReleaserFor: func(pool string) releasehook.Releaser { return byPool[pool] }})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ body, want string }{
		{`{"instance_id":"i-b1","pool":"ecs-b"}`, "ecs-b:i-b1"},
		{`{"instance_id":"i-a1","pool":"ecs-a"}`, "ecs-a:i-a1"},
		{`{"instance_id":"i-d1","pool":"dry"}`, "fallback:i-d1"},
		{`{"instance_id":"i-x1"}`, "fallback:i-x1"},
	}
	for _, tc := range cases {
		got = nil
		if code, rep := post(t, h, http.MethodPost, "Bearer "+token, tc.body); code != http.StatusOK || len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: %d %+v, released %v; want %s", tc.body, code, rep, got, tc.want)
		}
	}
}
