package volcengine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/internal/secrettest"
	"github.com/prewarm/prewarm/planner"
)

// FuzzReplies feeds any reply (status and body) through the real SDK's
// unmarshalling to every call the back-end makes: nothing panics or
// prints, every error wraps one of the actuator's kinds, is bounded, and
// holds neither key nor a piece of the access key that the reply did not
// hold itself; an accepted Capacity has no negative count.
func FuzzReplies(f *testing.F) {
	ak := volcenginetest.DefaultAccessKey
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"ResponseMetadata":{"RequestId":"r1","Action":"DescribeScalingGroups"},"Result":{"ScalingGroups":[{"ScalingGroupId":"asg","TotalInstanceCount":3,"StoppedInstanceCount":1,"MinInstanceNumber":0,"MaxInstanceNumber":10,"DesireInstanceNumber":2}],"TotalCount":1}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r1r"},"Result":{"ScalingGroups":[{"ScalingGroupId":"asg","ScalingMode":"recycle","TotalInstanceCount":5,"StoppedInstanceCount":4,"MinInstanceNumber":0,"MaxInstanceNumber":10,"DesireInstanceNumber":1}],"TotalCount":1}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r1n"},"Result":{"ScalingGroups":[{"ScalingGroupId":"asg","ScalingMode":"recycle","StoppedInstanceCount":-4,"MaxInstanceNumber":10,"DesireInstanceNumber":-1}],"TotalCount":1}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r4s"},"Result":{"ScalingInstances":[{"InstanceId":"i-1","Status":"Stopped"},{"InstanceId":"i-2","Status":"InService"}],"TotalCount":2}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r2"},"Result":{"ScalingGroups":[{"ScalingGroupId":"asg","TotalInstanceCount":-3,"MaxInstanceNumber":-1}]}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r3"},"Result":{"OperationDetails":[{"InstanceId":"i-1","Error":{"Code":"UnsupportedOperation.StoppedMode","Message":"no"}}]}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r4"},"Result":{"ScalingInstances":[{"InstanceId":"i-1"}],"TotalCount":100000,"PageNumber":1,"PageSize":1}}`},
		{200, `{"ResponseMetadata":{"RequestId":"r5"},"Result":{"ScalingPolicies":[{"ScalingPolicyId":"sp-1","ScalingPolicyName":"prewarm-x","ScheduledPolicy":{"LaunchTime":"bad"}}],"TotalCount":1}}`},
		{400, `{"ResponseMetadata":{"RequestId":"r6","Error":{"Code":"InvalidParameter","Message":"Credential=` + ak + `/20260105/cn-beijing"}}}`},
		{429, `{"ResponseMetadata":{"Error":{"Code":"AccountFlowLimitExceeded","Message":"slow down"}}}`},
		{502, `<html>` + strings.Repeat("x", 70) + `Credential=` + ak + `</html>`},
		{200, `{"ResponseMetadata":`},
		{400, `{"ResponseMetadata":{"RequestId":"r7"}}`}, // SDK v1.1.35 panicked on this
		{500, ``},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		act, err := volcengine.New(volcengine.Config{AccessKey: ak, SecretKey: volcengine.Secret(volcenginetest.DefaultSecretKey),
			Region: volcenginetest.DefaultRegion, Endpoint: "http://127.0.0.1:1"},
			volcengine.Options{Logger: slog.New(slog.DiscardHandler), HTTPClient: &http.Client{Transport: actuatortest.Reply{Status: status, Body: body}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// The SDK prints "Unmarshal err" on stdout for replies it cannot
		// decode: catch it, stdout being serve --once's JSON.
		stdout := os.Stdout
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout = pw
		defer func() {
			os.Stdout = stdout
			pw.Close()
			printed, _ := io.ReadAll(pr)
			pr.Close()
			if len(printed) > 0 {
				t.Fatalf("the SDK printed %q", printed)
			}
		}()
		c, err := act.Capacity(ctx, "asg")
		checkReplyError(t, "Capacity", err, body)
		if err == nil && (c.Current < 0 || c.Desired < 0 || c.Min < 0 || c.Max < 0) {
			t.Fatalf("Capacity accepted a negative count: %+v", c)
		}
		checkReplyError(t, "SetDesired", act.SetDesired(ctx, "asg", 3, "fuzz"), body)
		_, err = act.Stop(ctx, "i-1", "fuzz")
		checkReplyError(t, "Stop", err, body)
		_, err = act.InScalingGroup(ctx, "asg", "i-1")
		checkReplyError(t, "InScalingGroup", err, body)
		_, err = act.Activities(ctx, "asg", 3)
		checkReplyError(t, "Activities", err, body)
		at := time.Now().Add(time.Hour).Truncate(time.Minute)
		err = act.PublishSchedule(ctx, "asg", planner.Schedule{{At: at, Desired: 4}})
		checkReplyError(t, "PublishSchedule", err, body)
		checkReplyError(t, "SetSpot", act.SetSpot(ctx, "asg", planner.Spot{Share: 0.5, BaseOnDemand: 1}, "fuzz"), body)
		checkReplyError(t, "SetWarm", act.SetWarm(ctx, "asg", 2, "fuzz"), body)
		c, err = act.Capacity(ctx, "asg") // settles the warm tier
		checkReplyError(t, "Capacity", err, body)
		if err == nil && (c.Current < 0 || c.Desired < 0 || c.Min < 0 || c.Max < 0) {
			t.Fatalf("Capacity with a warm tier accepted a negative count: %+v", c)
		}
		checkReplyError(t, "SetWarm", act.SetWarm(ctx, "asg", 0, "fuzz"), body)
	})
}

func checkReplyError(t *testing.T, op string, err error, body []byte) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if !errors.Is(err, actuator.ErrRejected) && !errors.Is(err, actuator.ErrTransient) && !errors.Is(err, actuator.ErrThrottled) {
		t.Fatalf("%s: error of no kind: %v", op, err)
	}
	if len(msg) > 4096 {
		t.Fatalf("%s: error of %d bytes", op, len(msg))
	}
	if strings.Contains(msg, volcenginetest.DefaultSecretKey) {
		t.Fatalf("%s: the secret key in %q", op, msg)
	}
	ak := volcenginetest.DefaultAccessKey
	rest := strings.ReplaceAll(string(body), ak, "")
	for _, frag := range append(secrettest.Fragments(ak), ak) {
		if strings.Contains(msg, frag) && !strings.Contains(rest, frag) {
			t.Fatalf("%s: the access key (or %q of it) in %q", op, frag, msg)
		}
	}
}

// Replies the SDK cannot decode are MalformedResponse errors classified by
// status: nothing printed, no panic. SDK v1.1.35 dereferences
// ResponseMetadata.Error of a failed call, so {"ResponseMetadata":{}} with
// HTTP 400 crashed the process before the guard knew the shape.
func TestUndecodableReplies(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
		kind   error
	}{
		{400, `{"ResponseMetadata":{}}`, actuator.ErrRejected},
		{400, `{"ResponseMetadata":{"RequestId":"r1"}}`, actuator.ErrRejected},
		{503, `{}`, actuator.ErrTransient},
		{200, `{"ResponseMetadata":{},"Result":"x"}`, actuator.ErrTransient},
		{200, `{"ResponseMetadata":{},"Result":{"ScalingGroups":"x"}}`, actuator.ErrTransient},
		{200, `[1,2]`, actuator.ErrTransient},
		{200, `{"ResponseMetadata":{"HTTPCode":"x"}}`, actuator.ErrTransient},
	} {
		t.Run(tt.body, func(t *testing.T) {
			act, err := volcengine.New(volcengine.Config{AccessKey: volcenginetest.DefaultAccessKey, SecretKey: "s3cret-key",
				Region: volcenginetest.DefaultRegion, Endpoint: "http://127.0.0.1:1"},
				volcengine.Options{Logger: slog.New(slog.DiscardHandler), HTTPClient: &http.Client{Transport: actuatortest.Reply{Status: tt.status, Body: []byte(tt.body)}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = act.Capacity(context.Background(), "asg")
			var apiErr *volcengine.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != "MalformedResponse" || !errors.Is(err, tt.kind) {
				t.Errorf("HTTP %d %s: %v, want a MalformedResponse wrapping %v", tt.status, tt.body, err, tt.kind)
			}
		})
	}
}
