package volcengine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/redact"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a fake OpenAPI and an Actuator pointed at it, logging into a
// buffer that the cleanup greps for the secret.
type fixture struct {
	srv *volcenginetest.Server
	act *volcengine.Actuator
	log *syncBuffer
	now time.Time
}

func newFixture(t *testing.T, opts volcengine.Options) *fixture {
	t.Helper()
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, log: &syncBuffer{}, now: time.Now().UTC()}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	act, err := volcengine.New(testConfig(srv), opts)
	if err != nil {
		t.Fatal(err)
	}
	f.act = act
	t.Cleanup(func() {
		if strings.Contains(f.log.String(), volcenginetest.DefaultSecretKey) {
			t.Errorf("the secret key reached the log:\n%s", f.log.String())
		}
	})
	return f
}

func testConfig(srv *volcenginetest.Server) volcengine.Config {
	return volcengine.Config{
		AccessKey: volcenginetest.DefaultAccessKey,
		SecretKey: volcengine.Secret(volcenginetest.DefaultSecretKey),
		Region:    volcenginetest.DefaultRegion,
		Endpoint:  srv.URL, // http://127.0.0.1:PORT: the SDK must use plain HTTP
		Timeout:   2 * time.Second,
	}
}

var authRE = regexp.MustCompile(`^HMAC-SHA256 Credential=` + volcenginetest.DefaultAccessKey +
	`/\d{8}/` + volcenginetest.DefaultRegion + `/(ecs|auto_scaling)/request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`)

// checkCall asserts the common shape of a recorded request.
func checkCall(t *testing.T, c volcenginetest.Call, service, version string) {
	t.Helper()
	if c.SignatureErr != nil {
		t.Errorf("%s: signature rejected: %v", c.Action, c.SignatureErr)
	}
	if !authRE.MatchString(c.Authorization) {
		t.Errorf("%s: Authorization %q has not the HMAC-SHA256 shape", c.Action, c.Authorization)
	}
	if c.Service != service || c.Version != version || c.Region != volcenginetest.DefaultRegion {
		t.Errorf("%s: service/version/region = %s/%s/%s, want %s/%s/%s", c.Action, c.Service, c.Version, c.Region,
			service, version, volcenginetest.DefaultRegion)
	}
	if strings.Contains(c.Authorization, volcenginetest.DefaultSecretKey) {
		t.Errorf("%s: the secret key is in the Authorization header", c.Action)
	}
}

func onlyCall(t *testing.T, srv *volcenginetest.Server, action string) volcenginetest.Call {
	t.Helper()
	calls := srv.Calls(action)
	if len(calls) != 1 {
		t.Fatalf("%d %s calls, want 1", len(calls), action)
	}
	return calls[0]
}

func TestCapacity(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 1, Max: 16, Desired: 3, InstanceIDs: []string{"i-1", "i-2", "i-3"}})

	got, err := f.act.Capacity(context.Background(), "scg-gpu")
	if err != nil {
		t.Fatal(err)
	}
	want := actuator.Capacity{Current: 3, Desired: 3, Min: 1, Max: 16}
	if got != want {
		t.Errorf("Capacity = %+v, want %+v", got, want)
	}
	c := onlyCall(t, f.srv, "DescribeScalingGroups")
	checkCall(t, c, "auto_scaling", "2020-01-01")
	if g := c.Params.Get("ScalingGroupIds.1"); g != "scg-gpu" {
		t.Errorf("ScalingGroupIds.1 = %q, want scg-gpu", g)
	}

	// A released (stopped) member no longer counts as current capacity.
	if err := f.act.Release(context.Background(), "i-2", "idle"); err != nil {
		t.Fatal(err)
	}
	got, err = f.act.Capacity(context.Background(), "scg-gpu")
	if want := (actuator.Capacity{Current: 2, Desired: 3, Min: 1, Max: 16}); err != nil || got != want {
		t.Errorf("after releasing a member: Capacity = %+v, %v; want %+v", got, err, want)
	}

	_, err = f.act.Capacity(context.Background(), "scg-missing")
	var apiErr *volcengine.APIError
	if !errors.Is(err, actuator.ErrRejected) || !errors.As(err, &apiErr) || apiErr.Code != "InvalidScalingGroup.NotFound" {
		t.Errorf("unknown group: err = %v, want ErrRejected InvalidScalingGroup.NotFound", err)
	}
}

// A group in ScalingMode recycle reports its stopped members
// (StoppedInstanceCount), which its next scale-out starts first, so that
// their warm starts are learned apart from cold boots; in any other mode
// its stopped members stay stopped and the count is unknown.
func TestCapacityCountsTheWarmTier(t *testing.T) {
	cases := []struct {
		mode      string
		wantKnown bool
	}{
		{volcenginetest.ScalingModeRecycle, true},
		{volcenginetest.ScalingModeRelease, false},
		{"", false},
	}
	for _, tc := range cases {
		t.Run("ScalingMode "+strconv.Quote(tc.mode), func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 16, Desired: 2, ScalingMode: tc.mode, InstanceIDs: []string{"i-1", "i-2", "i-3"}})
			f.srv.AddInstance(volcenginetest.Instance{ID: "i-3", Status: "STOPPED"})
			got, err := f.act.Capacity(context.Background(), "scg-gpu")
			want := actuator.Capacity{Current: 2, Desired: 2, Max: 16}
			if tc.wantKnown {
				want.Stopped, want.StoppedKnown = 1, true
			}
			if err != nil || got != want {
				t.Errorf("Capacity = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestSetDesiredAndActivities(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 16, Desired: 2, InstanceIDs: []string{"i-1", "i-2"}})
	ctx := context.Background()

	if err := f.act.SetDesired(ctx, "scg-gpu", 7, "forecast peak 09:00"); err != nil {
		t.Fatal(err)
	}
	c := onlyCall(t, f.srv, "ModifyScalingGroup")
	checkCall(t, c, "auto_scaling", "2020-01-01")
	if c.Params.Get("ScalingGroupId") != "scg-gpu" || c.Params.Get("DesireInstanceNumber") != "7" {
		t.Errorf("ModifyScalingGroup params = %v", c.Params)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 7 || len(g.InstanceIDs) != 7 {
		t.Errorf("group after SetDesired: desired %d, %d instances; want 7, 7", g.Desired, len(g.InstanceIDs))
	}
	if !strings.Contains(f.log.String(), "forecast peak 09:00") {
		t.Errorf("the reason is not logged:\n%s", f.log.String())
	}

	// Outside the group's own bounds the API refuses: ErrRejected with the
	// provider's message.
	err := f.act.SetDesired(ctx, "scg-gpu", 99, "bug")
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "outside [MinInstanceNumber 0, MaxInstanceNumber 16]") {
		t.Errorf("SetDesired(99) = %v, want ErrRejected with the provider's message", err)
	}

	for i := 0; i < 12; i++ { // more than one page of activities
		if err := f.act.SetDesired(ctx, "scg-gpu", i%2+3, "flap"); err != nil {
			t.Fatal(err)
		}
	}
	acts, err := f.act.Activities(ctx, "scg-gpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 13 {
		t.Fatalf("%d activities, want 13 (paged 10 per page by the fake)", len(acts))
	}
	if last := acts[len(acts)-1]; last.CurrentInstances != 2 || last.Adjusted != 5 || last.Status != "Success" {
		t.Errorf("oldest activity = %+v, want from 2, adjusted +5, Success", last)
	}
	if n := len(f.srv.Calls("DescribeScalingActivities")); n != 2 {
		t.Errorf("%d DescribeScalingActivities calls, want 2 pages", n)
	}
	if acts, _ := f.act.Activities(ctx, "scg-gpu", 4); len(acts) != 4 {
		t.Errorf("Activities(limit 4) returned %d", len(acts))
	}
}

func TestPublishScheduleReplacesOnlyOwnPolicies(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	now := time.Now().UTC()
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 32, Desired: 2})
	// Twelve policies of the operators (more than one page) and one left
	// by an earlier publish.
	var foreign []string
	for i := 0; i < 12; i++ {
		foreign = append(foreign, f.srv.AddPolicy(volcenginetest.Policy{GroupID: "scg-gpu", Name: fmt.Sprintf("ops-nightly-%02d", i),
			Type: "Scheduled", AdjustmentType: "TotalCapacity", AdjustmentValue: 1, LaunchTime: now.Add(48 * time.Hour).Format("2006-01-02T15:04Z")}))
	}
	f.srv.AddPolicy(volcenginetest.Policy{GroupID: "scg-gpu", Name: "ops-alarm-cpu", Type: "Alarm", AdjustmentType: "QuantityChangeInCapacity", AdjustmentValue: 1})
	oldID := f.srv.AddPolicy(volcenginetest.Policy{GroupID: "scg-gpu", Name: "prewarm-20260101T0000Z-4-abcdef",
		Type: "Scheduled", AdjustmentType: "TotalCapacity", AdjustmentValue: 4, LaunchTime: now.Add(time.Hour).Format("2006-01-02T15:04Z")})

	base := now.Truncate(time.Hour).Add(2 * time.Hour)
	steps := planner.Schedule{
		{At: now.Add(-time.Hour), Desired: 9, Reason: "past: skipped"},
		{At: base, Desired: 6, Reason: "morning ramp"},
		{At: base.Add(20 * time.Second), Desired: 8, Reason: "same minute: the later wins"},
		{At: base.Add(time.Hour), Desired: 8, Reason: "no change: dropped"},
		{At: base.Add(2 * time.Hour), Desired: 12, Reason: "peak"},
		{At: base.Add(5 * time.Hour), Desired: 3, Reason: "evening"},
	}
	if err := f.act.PublishSchedule(context.Background(), "scg-gpu", steps); err != nil {
		t.Fatal(err)
	}

	policies := f.srv.Policies("scg-gpu")
	var ours []volcenginetest.Policy
	foreignLeft := 0
	for _, p := range policies {
		switch {
		case p.ID == oldID:
			t.Errorf("the old prewarm policy %s survived", p.Name)
		case strings.HasPrefix(p.Name, "prewarm-"):
			ours = append(ours, p)
		default:
			foreignLeft++
			if p.Status != "Active" {
				t.Errorf("foreign policy %s changed to %s", p.Name, p.Status)
			}
		}
	}
	if foreignLeft != 13 {
		t.Errorf("%d foreign policies left, want all 13", foreignLeft)
	}
	present := map[string]bool{}
	for _, p := range policies {
		present[p.ID] = true
	}
	for _, id := range foreign {
		if !present[id] {
			t.Errorf("foreign policy %s was deleted", id)
		}
	}
	want := []struct {
		at      time.Time
		desired int
	}{{base, 8}, {base.Add(2 * time.Hour), 12}, {base.Add(5 * time.Hour), 3}}
	if len(ours) != len(want) {
		t.Fatalf("prewarm policies = %+v, want %d", ours, len(want))
	}
	nameRE := regexp.MustCompile(`^prewarm-\d{8}T\d{4}Z-\d+-[0-9a-f]{6}$`)
	for i, w := range want {
		p := ours[i]
		if p.LaunchTime != w.at.Format("2006-01-02T15:04Z") || p.AdjustmentValue != w.desired ||
			p.AdjustmentType != "TotalCapacity" || p.Type != "Scheduled" || p.Status != "Active" || !nameRE.MatchString(p.Name) {
			t.Errorf("policy %d = %+v, want Active Scheduled TotalCapacity %d at %s", i, p, w.desired, w.at.Format(time.RFC3339))
		}
	}
	for _, c := range f.srv.Calls("DeleteScalingPolicy") {
		if c.Params.Get("ScalingPolicyId") != oldID {
			t.Errorf("DeleteScalingPolicy touched %s, not prewarm's", c.Params.Get("ScalingPolicyId"))
		}
	}
	for _, c := range f.srv.Calls("") {
		checkCall(t, c, "auto_scaling", "2020-01-01")
	}
	listed, err := f.act.ScheduledPolicies(context.Background(), "scg-gpu")
	if err != nil || len(listed) != 3 {
		t.Errorf("ScheduledPolicies = %v, %v; want the 3 new ones", listed, err)
	}
}

func TestPublishScheduleFailureKeepsOldSchedule(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	now := time.Now().UTC()
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 32})
	oldID := f.srv.AddPolicy(volcenginetest.Policy{GroupID: "scg-gpu", Name: "prewarm-old", Type: "Scheduled",
		AdjustmentType: "TotalCapacity", AdjustmentValue: 4, LaunchTime: now.Add(time.Hour).Format("2006-01-02T15:04Z")})
	// The first creation succeeds (a no-op delay lets the model answer),
	// the second is refused.
	f.srv.Fail("CreateScalingPolicy", volcenginetest.Reply{Delay: time.Nanosecond},
		volcenginetest.Reply{Code: "QuotaExceeded.ScalingPolicy", Message: "The number of scaling policies exceeds the quota."})
	steps := planner.Schedule{{At: now.Add(time.Hour), Desired: 5}, {At: now.Add(2 * time.Hour), Desired: 9}}

	err := f.act.PublishSchedule(context.Background(), "scg-gpu", steps)
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "exceeds the quota") {
		t.Fatalf("PublishSchedule = %v, want ErrRejected with the provider's message", err)
	}
	policies := f.srv.Policies("scg-gpu")
	if len(policies) != 1 || policies[0].ID != oldID {
		t.Errorf("after a failed publish the group has %+v, want only the old prewarm policy", policies)
	}
}

func TestReleaseStopsWithStopCharging(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddInstance(volcenginetest.Instance{ID: "i-abc"})
	ctx, stops := volcengine.RecordStops(context.Background())

	if err := f.act.Release(ctx, "i-abc", "training job finished"); err != nil {
		t.Fatal(err)
	}
	c := onlyCall(t, f.srv, "StopInstances")
	checkCall(t, c, "ecs", "2020-04-01")
	if c.Params.Get("InstanceIds.1") != "i-abc" || c.Params.Get("StoppedMode") != "StopCharging" || c.Params.Get("ClientToken") == "" {
		t.Errorf("StopInstances params = %v, want InstanceIds.1=i-abc StoppedMode=StopCharging and a ClientToken", c.Params)
	}
	if in, _ := f.srv.Instance("i-abc"); in.Status != "STOPPED" || in.StoppedMode != "StopCharging" {
		t.Errorf("instance = %+v, want STOPPED with StopCharging", in)
	}
	got := stops()
	if len(got) != 1 || got[0].Fallback || got[0].Mode != "StopCharging" || got[0].RequestID == "" {
		t.Errorf("recorded stops = %+v", got)
	}

	if err := f.act.Start(context.Background(), "i-abc"); err != nil {
		t.Fatal(err)
	}
	sc := onlyCall(t, f.srv, "StartInstances")
	checkCall(t, sc, "ecs", "2020-04-01")
	if in, _ := f.srv.Instance("i-abc"); in.Status != "RUNNING" {
		t.Errorf("after Start: %+v", in)
	}
	err := f.act.Start(context.Background(), "i-abc", "i-gone")
	var apiErr *volcengine.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "InvalidInstance.NotFound" || !strings.Contains(err.Error(), "i-gone") {
		t.Errorf("Start with an unknown instance = %v", err)
	}
}

func TestReleaseFallsBackToKeepCharging(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*volcenginetest.Server)
	}{
		{"per-instance OperationDetails error", func(s *volcenginetest.Server) {
			s.AddInstance(volcenginetest.Instance{ID: "i-local", RefusesStopCharging: true})
		}},
		{"top-level error envelope", func(s *volcenginetest.Server) {
			s.AddInstance(volcenginetest.Instance{ID: "i-local"})
			s.Fail("StopInstances", volcenginetest.Reply{Status: 400, Code: "InvalidStoppedMode.Unsupported",
				Message: "The instance type ecs.ini2 does not support the stopped mode."})
		}},
		{"code naming StopCharging, Chinese message", func(s *volcenginetest.Server) {
			s.AddInstance(volcenginetest.Instance{ID: "i-local"})
			s.Fail("StopInstances", volcenginetest.Reply{Status: 400, Code: "OperationDenied.StopCharging", Message: "该实例规格不支持节省停机"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			tc.setup(f.srv)
			res, err := f.act.Stop(context.Background(), "i-local", "idle 30m")
			if err != nil {
				t.Fatal(err)
			}
			calls := f.srv.Calls("StopInstances")
			if len(calls) != 2 || calls[0].Params.Get("StoppedMode") != "StopCharging" || calls[1].Params.Get("StoppedMode") != "KeepCharging" {
				t.Fatalf("StopInstances modes = %v, want StopCharging then KeepCharging", calls)
			}
			if calls[0].Params.Get("ClientToken") == calls[1].Params.Get("ClientToken") {
				t.Error("the fallback reused the first request's ClientToken")
			}
			if !res.Fallback || res.Mode != "KeepCharging" || !strings.Contains(res.Note, "KeepCharging") || !strings.Contains(res.Note, "billed") {
				t.Errorf("result = %+v, want a KeepCharging fallback with a note", res)
			}
			if in, _ := f.srv.Instance("i-local"); in.Status != "STOPPED" || in.StoppedMode != "KeepCharging" {
				t.Errorf("instance = %+v", in)
			}
			if !strings.Contains(f.log.String(), "level=WARN") || !strings.Contains(f.log.String(), "falling back to KeepCharging") {
				t.Errorf("no warning logged:\n%s", f.log.String())
			}
		})
	}

	t.Run("fallback disabled", func(t *testing.T) {
		f := newFixture(t, volcengine.Options{NoStopChargingFallback: true})
		f.srv.AddInstance(volcenginetest.Instance{ID: "i-local", RefusesStopCharging: true})
		_, err := f.act.Stop(context.Background(), "i-local", "idle")
		if !errors.Is(err, actuator.ErrRejected) || len(f.srv.Calls("StopInstances")) != 1 {
			t.Errorf("err = %v after %d calls, want ErrRejected after 1", err, len(f.srv.Calls("StopInstances")))
		}
	})

	// The code decides, never the message: an error quoting the request
	// (which holds StoppedMode=StopCharging), or a message about economical
	// mode under an unrelated code, stops nothing with KeepCharging.
	for _, tc := range []struct {
		name  string
		reply volcenginetest.Reply
	}{
		{"an envelope echoing the request", volcenginetest.Reply{Status: 400, Code: "InvalidParameter", Message: "the request was refused", Echo: true}},
		{"a message quoting the query", volcenginetest.Reply{Status: 400, Code: "InvalidParameter", Message: "GET /?Action=StopInstances&StoppedMode=StopCharging: bad signature"}},
		{"a message about economical mode under another code", volcenginetest.Reply{Status: 400, Code: "OperationDenied", Message: "该实例规格不支持节省停机 (economical mode, stopped mode)"}},
		{"an HTML page echoing the request", volcenginetest.Reply{Status: 403, Body: "<html>403 StoppedMode=StopCharging</html>", Echo: true}},
	} {
		reply := tc.reply
		t.Run("no fallback on "+tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddInstance(volcenginetest.Instance{ID: "i-local"})
			f.srv.Fail("StopInstances", reply)
			_, err := f.act.Stop(context.Background(), "i-local", "idle")
			calls := f.srv.Calls("StopInstances")
			if !errors.Is(err, actuator.ErrRejected) || len(calls) != 1 {
				t.Errorf("err = %v after %d StopInstances calls, want ErrRejected after 1 (no KeepCharging fallback)", err, len(calls))
			}
			if in, _ := f.srv.Instance("i-local"); in.Status != "RUNNING" {
				t.Errorf("instance = %+v, want it left running", in)
			}
		})
	}

	t.Run("other rejections do not fall back", func(t *testing.T) {
		f := newFixture(t, volcengine.Options{})
		_, err := f.act.Stop(context.Background(), "i-unknown", "idle")
		var apiErr *volcengine.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != "InvalidInstance.NotFound" || len(f.srv.Calls("StopInstances")) != 1 {
			t.Errorf("err = %v, want InvalidInstance.NotFound and no fallback", err)
		}
	})
}

// TestErrorMapping drives every kind of failure through the real SDK and
// checks the sentinel and that the provider's words and RequestId survive.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name      string
		reply     volcenginetest.Reply
		want      error
		wantInMsg []string
	}{
		{"429 flow limit", volcenginetest.Throttled, actuator.ErrThrottled, []string{"AccountFlowLimitExceeded", "account flow control", "RequestId 20261130FAKE", "HTTP 429"}},
		{"Throttling code on 400", volcenginetest.Reply{Status: 400, Code: "Throttling", Message: "slow down"}, actuator.ErrThrottled, []string{"Throttling: slow down"}},
		{"RateLimitExceeded prefix", volcenginetest.Reply{Status: 400, Code: "RateLimitExceeded.APIQPS", Message: "qps"}, actuator.ErrThrottled, []string{"RateLimitExceeded.APIQPS"}},
		{"500 InternalError", volcenginetest.Internal, actuator.ErrTransient, []string{"InternalError", "HTTP 500", "RequestId"}},
		{"503 ServiceUnavailable", volcenginetest.Reply{Status: 503, Code: "ServiceUnavailable", Message: "try later"}, actuator.ErrTransient, []string{"try later"}},
		{"InternalError on 400", volcenginetest.Reply{Status: 400, Code: "InternalError", Message: "oops"}, actuator.ErrTransient, []string{"oops"}},
		{"502 HTML from a proxy", volcenginetest.Reply{Status: 502, Body: "<html>Bad Gateway</html>"}, actuator.ErrTransient, []string{"HTTP 502", "not an OpenAPI envelope"}},
		{"403 HTML from a WAF", volcenginetest.Reply{Status: 403, Body: "<html>Forbidden</html>"}, actuator.ErrRejected, []string{"HTTP 403", "Forbidden"}},
		{"200 garbage", volcenginetest.Reply{Status: 200, Body: "{not json"}, actuator.ErrTransient, []string{"HTTP 200"}},
		{"400 InvalidParameter", volcenginetest.Reply{Status: 400, Code: "InvalidParameter", Message: "bad DesireInstanceNumber"}, actuator.ErrRejected, []string{"InvalidParameter: bad DesireInstanceNumber", "HTTP 400"}},
		{"403 AccessDenied", volcenginetest.Reply{Status: 403, Code: "AccessDenied", Message: "not authorized to perform autoscaling:ModifyScalingGroup"}, actuator.ErrRejected, []string{"AccessDenied", "ModifyScalingGroup"}},
		{"404 not found", volcenginetest.Reply{Status: 404, Code: "InvalidScalingGroup.NotFound", Message: "no such group"}, actuator.ErrRejected, []string{"no such group"}},
		{"timeout", volcenginetest.Reply{Delay: 3 * time.Second, Code: "InternalError"}, actuator.ErrTransient, []string{"timed out"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 8})
			f.srv.Fail("ModifyScalingGroup", tc.reply)
			err := f.act.SetDesired(context.Background(), "scg-gpu", 3, "test")
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for _, s := range tc.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if strings.Contains(err.Error(), volcenginetest.DefaultSecretKey) {
				t.Error("the secret is in the error")
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := volcenginetest.New()
		cfg := testConfig(srv)
		srv.Close()
		act, err := volcengine.New(cfg, volcengine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = act.SetDesired(context.Background(), "scg-gpu", 3, "test")
		if !errors.Is(err, actuator.ErrTransient) {
			t.Errorf("err = %v, want ErrTransient", err)
		}
	})

	t.Run("caller cancelled", func(t *testing.T) {
		f := newFixture(t, volcengine.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := f.act.SetDesired(ctx, "scg-gpu", 3, "test")
		if !errors.Is(err, context.Canceled) || errors.Is(err, actuator.ErrTransient) {
			t.Errorf("err = %v, want context.Canceled and not retryable", err)
		}
	})
}

func TestWrongSecretIsRejectedBySignatureCheck(t *testing.T) {
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	cfg := testConfig(srv)
	cfg.SecretKey = "wrong-secret-also-never-shown"
	act, err := volcengine.New(cfg, volcengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = act.Capacity(context.Background(), "scg-gpu")
	if !errors.Is(err, actuator.ErrRejected) || !strings.Contains(err.Error(), "SignatureDoesNotMatch") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("err = %v, want ErrRejected SignatureDoesNotMatch", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Error("the secret is in the error")
	}
	if c := srv.Calls(""); len(c) != 1 || c[0].SignatureErr == nil {
		t.Errorf("the fake accepted a signature made with the wrong secret: %+v", c)
	}
}

// TestSafeRetriesAndBreaker runs actuator.Safe (D1's safety layer) over the
// real back-end and the fake: throttling is retried with the same
// ClientToken until it succeeds; repeated 5xx opens the breaker, after
// which the fake sees no more calls.
func TestSafeRetriesAndBreaker(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 16, Desired: 2, InstanceIDs: []string{"i-1", "i-2"}})
	f.srv.AddInstance(volcenginetest.Instance{ID: "i-abc"})
	var slept []time.Duration
	var alerts []actuator.Alert
	var audit syncBuffer
	safe := actuator.NewSafe(f.act, actuator.SafetyOptions{
		Pools:    []actuator.PoolConfig{{Name: "scg-gpu", Backend: "volcengine", Limits: planner.Limits{MinInstances: 0, MaxInstances: 16, MaxStep: 8}}},
		Retry:    actuator.RetryPolicy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond},
		Breaker:  actuator.BreakerPolicy{FailureThreshold: 2, CoolOff: time.Hour},
		Audit:    &audit,
		Logger:   slog.New(slog.NewTextHandler(f.log, nil)),
		OnAlert:  func(a actuator.Alert) { alerts = append(alerts, a) },
		Redactor: redact.New(volcenginetest.DefaultSecretKey),
		Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			return nil
		},
	})
	ctx := context.Background()

	// Release: throttled twice, then served. Same ClientToken each time.
	f.srv.Fail("StopInstances", volcenginetest.Throttled, volcenginetest.Throttled)
	if err := safe.Release(ctx, "i-abc", "idle"); err != nil {
		t.Fatal(err)
	}
	calls := f.srv.Calls("StopInstances")
	if len(calls) != 3 {
		t.Fatalf("%d StopInstances calls, want 3 (2 throttled + 1)", len(calls))
	}
	for _, c := range calls[1:] {
		if c.Params.Get("ClientToken") != calls[0].Params.Get("ClientToken") {
			t.Errorf("retry changed ClientToken: %q vs %q", c.Params.Get("ClientToken"), calls[0].Params.Get("ClientToken"))
		}
	}
	if len(slept) != 2 {
		t.Errorf("Safe slept %v, want 2 backoffs", slept)
	}
	if !strings.Contains(audit.String(), `"request_id"`) || !strings.Contains(audit.String(), "20261130FAKE") {
		t.Errorf("audit lacks the provider's RequestId:\n%s", audit.String())
	}

	// SetDesired: the throttled first attempt is retried.
	f.srv.Fail("ModifyScalingGroup", volcenginetest.Throttled)
	if err := safe.SetDesired(ctx, "scg-gpu", 5, "ramp"); err != nil {
		t.Fatal(err)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 5 {
		t.Errorf("desired = %d, want 5", g.Desired)
	}

	// Persistent 5xx: two failed calls (4 attempts each) open the breaker.
	f.srv.Fail("ModifyScalingGroup", volcenginetest.FailAll(8, volcenginetest.Internal)...)
	for i := 0; i < 2; i++ {
		if err := safe.SetDesired(ctx, "scg-gpu", 6+i, "ramp"); !errors.Is(err, actuator.ErrTransient) {
			t.Fatalf("call %d: err = %v, want ErrTransient", i, err)
		}
	}
	before := len(f.srv.Calls("ModifyScalingGroup"))
	err := safe.SetDesired(ctx, "scg-gpu", 9, "ramp")
	if !errors.Is(err, actuator.ErrCircuitOpen) {
		t.Fatalf("third call: err = %v, want ErrCircuitOpen", err)
	}
	if after := len(f.srv.Calls("ModifyScalingGroup")); after != before {
		t.Errorf("the open breaker let %d calls through", after-before)
	}
	if g, _ := f.srv.Group("scg-gpu"); g.Desired != 5 {
		t.Errorf("desired = %d, want 5 left where it was", g.Desired)
	}
	if len(alerts) != 1 || alerts[0].Pool != "scg-gpu" {
		t.Errorf("alerts = %+v, want one for scg-gpu", alerts)
	}
	if strings.Contains(audit.String(), volcenginetest.DefaultSecretKey) {
		t.Error("the secret reached the audit log")
	}
}

func TestHTTPEndpointNeedsNoTLS(t *testing.T) {
	// Every other test already talks plain HTTP to httptest; this one pins
	// that an endpoint without a scheme means HTTPS, i.e. the loopback
	// fake (HTTP only) is unreachable through it.
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	cfg := testConfig(srv)
	cfg.Endpoint = strings.TrimPrefix(srv.URL, "http://")
	act, err := volcengine.New(cfg, volcengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := act.Capacity(context.Background(), "scg-gpu"); !errors.Is(err, actuator.ErrTransient) {
		t.Errorf("HTTPS to an HTTP server: err = %v, want a transient TLS failure", err)
	}
	if n := len(srv.Calls("")); n != 0 {
		t.Errorf("the fake saw %d requests over TLS", n)
	}
}

// The group's members serve only once booted: ReadyInstances counts the
// InService ones, which the decision's capacity read (actuator.Safe's
// ReadCapacity) reports as ready, so the start times learned from it
// (control.StartTimes, as serve measures them) converge on the stand-in's
// boot time, within 10%. A failing member listing leaves readiness
// unknown, not the read failed; a resize reads no readiness.
func TestCapacityReadyFollowsTheBoots(t *testing.T) {
	for _, boot := range []time.Duration{90 * time.Second, 7 * time.Minute, 25 * time.Minute} {
		t.Run(boot.String(), func(t *testing.T) {
			f := newFixture(t, volcengine.Options{})
			clock := actuatortest.NewClock(f.now)
			f.srv.BootDelay, f.srv.BootClock = boot, clock.Now
			f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 40, Desired: 2, InstanceIDs: []string{"i-1", "i-2"}})
			ctx := context.Background()
			safe := actuator.NewSafe(f.act, actuator.SafetyOptions{Now: clock.Now, Pools: []actuator.PoolConfig{
				{Name: "scg-gpu", Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 40}}}})
			var starts control.StartTimes
			desired := 2
			for minute := range 240 {
				if minute%40 == 5 && desired < 38 {
					desired += 3
					listed := len(f.srv.Calls("DescribeScalingInstances"))
					if err := safe.SetDesired(ctx, "scg-gpu", desired, "test"); err != nil {
						t.Fatal(err)
					}
					if n := len(f.srv.Calls("DescribeScalingInstances")); n != listed {
						t.Fatalf("a resize listed the members %d times, want none: it needs only the size", n-listed)
					}
				}
				c, known, err := safe.ReadCapacity(ctx, "scg-gpu")
				if err != nil || !known || !c.ReadyKnown || c.Ready > c.Current {
					t.Fatalf("minute %d: Capacity = %+v, %v; want the ready members known, at most current", minute, c, err)
				}
				starts.Observe(clock.Now(), control.FleetRead{Asked: c.Desired, Ready: c.Ready, Stopped: c.Stopped, StoppedKnown: c.StoppedKnown}, c.Desired)
				clock.Advance(time.Minute)
			}
			est, enough := starts.Estimate(control.ColdBoot)
			if !enough || math.Abs(float64(est.Median-boot)) > 0.1*float64(boot) {
				t.Errorf("learned starts %+v (enough %v), want a median within 10%% of the stand-in's %v", est, enough, boot)
			}
			t.Logf("stand-in boots in %v: learned median %v, 90th percentile %v over %d starts", boot, est.Median, est.P90, est.Starts)

			f.srv.Fail("DescribeScalingInstances", volcenginetest.Internal, volcenginetest.Internal, volcenginetest.Internal, volcenginetest.Internal)
			if c, _, err := safe.ReadCapacity(ctx, "scg-gpu"); err != nil || c.ReadyKnown || c.Current != desired {
				t.Errorf("with the member listing failing: Capacity = %+v, %v; want the size, readiness unknown, no error", c, err)
			}
		})
	}
}
