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
// service can tell booting from serving instances, and the stopped
// instances of the warm pool, which a scale-out starts first.
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
		warm  int
		want  actuator.Capacity
	}{
		{0, 0, actuator.Capacity{Current: 6, Ready: 2, ReadyKnown: true, StoppedKnown: true, Desired: 6, Min: 1, Max: 10}},
		{5 * time.Minute, 3, actuator.Capacity{Current: 6, Ready: 6, ReadyKnown: true, StoppedKnown: true, Desired: 6, Min: 1, Max: 10}},
		{6 * time.Minute, 3, actuator.Capacity{Current: 6, Ready: 6, ReadyKnown: true, Stopped: 3, StoppedKnown: true, Desired: 6, Min: 1, Max: 10}},
	}
	for _, tt := range tests {
		clock.Advance(tt.after)
		if err := f.SetWarm(ctx, "gpu", tt.warm, "plan"); err != nil {
			t.Fatal(err)
		}
		got, err := f.Capacity(ctx, "gpu")
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("after %v: capacity %+v, want %+v", tt.after, got, tt.want)
		}
	}
}

// The counts stay exact while boots of different lengths finish, spot
// instances are interrupted and replaced, removed instances drain and the
// clock is read at every second: Counts always agrees with the instances
// it lists.
func TestCountsFollowEveryBootAndRemoval(t *testing.T) {
	cases := []struct {
		name string
		opts simulated.Options
	}{
		{"fixed boots", simulated.Options{BootDelay: 3 * time.Minute}},
		{"spread boots and drains", simulated.Options{BootDelay: 3 * time.Minute, BootSpread: 2 * time.Minute, Drain: time.Minute}},
		{"spot interruptions", simulated.Options{BootDelay: 2 * time.Minute, BootSpread: time.Minute,
			SpotShare: 0.7, InterruptionsPerHour: 6}},
	}
	sizes := []int{2, 9, 4, 4, 12, 1, 7, 3, 10, 5}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := actuatortest.NewClock(t0)
			tc.opts.Now = clock.Now
			f := simulated.New(tc.opts)
			f.AddPool("gpu", 2, 1, 20)
			ctx := context.Background()
			for step, n := range sizes {
				if err := f.SetDesired(ctx, "gpu", n, "test"); err != nil {
					t.Fatal(err)
				}
				for s := 0; s < 150; s++ {
					got := f.Counts("gpu")
					ready, booting := 0, 0
					for _, in := range f.Instances("gpu") {
						if clock.Now().Before(in.ReadyAt) {
							booting++
						} else {
							ready++
						}
					}
					if got.Ready != ready || got.Booting != booting {
						t.Fatalf("step %d, %ds after it: counts ready %d booting %d, instances say %d and %d",
							step, s, got.Ready, got.Booting, ready, booting)
					}
					clock.Advance(time.Second)
				}
			}
		})
	}
}
