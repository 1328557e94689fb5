package service

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/planner"
)

// An idle event from the collector's webhook dispatcher, posted to the
// service's release endpoint, releases the instance through the actuator
// within 2 s; an instance outside the allowed pools is
// refused and never reaches the actuator.
func TestCollectorIdleEventReleasesTheInstance(t *testing.T) {
	r := newRig(t, 2, nil)
	released := make(chan string, 4)
	r.fake.OnRelease = func(id, _ string) error { released <- id; return nil }
	safe := actuator.NewSafe(r.fake, actuator.SafetyOptions{Pools: []actuator.PoolConfig{{Name: testPool, Backend: "fake", Limits: planner.Limits{MaxInstances: 50}}}})
	hook, err := releasehook.New(releasehook.Config{Releaser: safe, Token: "t0ken",
		Locate: func(_ context.Context, id string) (string, error) {
			if id == "i-idle" {
				return testPool, nil
			}
			return "", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{Gatherer: r.reg, Release: hook}))
	defer srv.Close()
	d, err := notify.NewDispatcher(quietLogger(), []*notify.Webhook{{URL: srv.URL + releasehook.Path,
		Format: notify.FormatJSON, Token: "t0ken", Kinds: []string{alert.KindIdle}}}, notify.DispatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())

	idle := func(id string) alert.Event {
		return alert.Event{Kind: alert.KindIdle, Rule: alert.RuleIdle, InstanceID: id, Pool: testPool, Host: "gpu-07",
			GPU: "0", UUID: "GPU-1", Since: time.Now().Add(-30 * time.Minute), At: time.Now(), Value: 1.2, Threshold: 5,
			Reason: "compute activity < 5% for 30m"}
	}
	sent := time.Now()
	d.Send(idle("i-outsider")) // refused by the allow-list
	d.Send(idle("i-idle"))
	select {
	case id := <-released:
		if id != "i-idle" {
			t.Fatalf("released %q, want i-idle (the outsider must be refused)", id)
		}
		took := time.Since(sent)
		t.Logf("idle event → release at the actuator: %v", took)
		if took > 2*time.Second {
			t.Errorf("release took %v, want within 2s", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the idle event never reached the actuator")
	}
	if slices.Contains(r.fake.Released(), "i-outsider") {
		t.Error("an instance outside the allowed pools was released")
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
