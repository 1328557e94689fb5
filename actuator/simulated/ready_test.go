package simulated_test

import (
	"context"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
)

// Capacity reports the ready count beside the instances that exist, so the
// service can tell booting from serving instances.
func TestCapacityReportsReady(t *testing.T) {
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 5 * time.Minute})
	f.AddPool("gpu", 2, 1, 10)
	ctx := context.Background()
	if err := f.SetDesired(ctx, "gpu", 6, "forecast"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		after time.Duration
		want  actuator.Capacity
	}{
		{0, actuator.Capacity{Current: 6, Ready: 2, ReadyKnown: true, Desired: 6, Min: 1, Max: 10}},
		{5 * time.Minute, actuator.Capacity{Current: 6, Ready: 6, ReadyKnown: true, Desired: 6, Min: 1, Max: 10}},
	}
	for _, tt := range tests {
		clock.Advance(tt.after)
		got, err := f.Capacity(ctx, "gpu")
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("after %v: capacity %+v, want %+v", tt.after, got, tt.want)
		}
	}
}
