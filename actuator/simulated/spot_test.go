package simulated_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
)

// spotCount counts the pool's booting and ready spot instances.
func spotCount(f *simulated.Fleet, pool string) int {
	n := 0
	for _, in := range f.Instances(pool) {
		if in.Spot {
			n++
		}
	}
	return n
}

// SetSpot changes a pool's mix at run time: the launches after it follow
// the new share of the instances above the new on-demand base (the
// instances running keep their kind), a scale-in removes from the kind
// above its share, other pools keep theirs, and a mix out of range is
// refused.
func TestSetSpotChangesTheMix(t *testing.T) {
	ctx := context.Background()
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 5 * time.Minute})
	f.AddPool("gpu", 4, 0, 40)
	f.AddPool("other", 4, 0, 40)
	steps := []struct {
		name      string
		spot      *planner.Spot // nil: no SetSpot at this step
		desired   int
		wantSpot  int
		wantError bool
	}{
		{"on demand by default", nil, 6, 0, false},
		{"a share above a base", &planner.Spot{Share: 0.5, BaseOnDemand: 2}, 12, 5, false},           // round(0.5 × 10)
		{"scale-in keeps the mix", nil, 8, 3, false},                                                 // round(0.5 × 6)
		{"all above the base: the launches", &planner.Spot{Share: 1, BaseOnDemand: 4}, 14, 9, false}, // 3 kept + 6 new
		{"no tier: launches on demand", &planner.Spot{}, 20, 9, false},
		{"share above 1 refused", &planner.Spot{Share: 1.2}, 20, 9, true},
		{"negative base refused", &planner.Spot{Share: 0.5, BaseOnDemand: -1}, 20, 9, true},
		{"unknown fallback refused", &planner.Spot{Share: 0.5, Fallback: "maybe"}, 20, 9, true},
	}
	for _, st := range steps {
		if st.spot != nil {
			err := f.SetSpot(ctx, "gpu", *st.spot, "test")
			if st.wantError != errors.Is(err, actuator.ErrRejected) {
				t.Fatalf("%s: SetSpot(%+v) = %v, want rejected %v", st.name, *st.spot, err, st.wantError)
			}
		}
		must(t, f.SetDesired(ctx, "gpu", st.desired, st.name))
		must(t, f.SetDesired(ctx, "other", st.desired, st.name))
		if got := spotCount(f, "gpu"); got != st.wantSpot {
			t.Errorf("%s: %d spot instances of %d, want %d", st.name, got, st.desired, st.wantSpot)
		}
		if got := spotCount(f, "other"); got != 0 {
			t.Errorf("%s: the other pool runs %d on spot, want its own mix, none", st.name, got)
		}
		clock.Advance(5 * time.Minute) // every instance ready
	}
	if err := f.SetSpot(ctx, "nope", planner.Spot{Share: 0.5}, "test"); !errors.Is(err, actuator.ErrRejected) {
		t.Errorf("SetSpot on an unknown pool: %v, want ErrRejected", err)
	}
}

// When the zone runs out of spot, fallback on_demand replaces the lost
// spot instances on demand at once, while fallback none leaves the pool
// short of them, down to its on-demand base, until spot returns: two
// fleets drawing the same stock-outs, minute by minute over two weeks.
func TestSetSpotFallbackDuringAStockOut(t *testing.T) {
	ctx := context.Background()
	const desired, base = 10, 2
	fleets := map[string]*simulated.Fleet{}
	clock := actuatortest.NewClock(t0)
	for _, fallback := range []string{planner.SpotFallbackOnDemand, planner.SpotFallbackNone} {
		f := simulated.New(simulated.Options{Now: clock.Now, StockOutsPerWeek: 3, StockOutFor: 2 * time.Hour,
			Rand: rand.New(rand.NewPCG(5, 0))})
		f.AddPool("gpu", 0, 0, 20)
		must(t, f.SetSpot(ctx, "gpu", planner.Spot{Share: 1, BaseOnDemand: base, Fallback: fallback}, "test"))
		must(t, f.SetDesired(ctx, "gpu", desired, "up"))
		fleets[fallback] = f
	}
	short, recovered := 0, 0
	for range 14 * 24 * 60 {
		clock.Advance(time.Minute)
		od, none := fleets[planner.SpotFallbackOnDemand].Counts("gpu"), fleets[planner.SpotFallbackNone].Counts("gpu")
		if od.Ready != desired {
			t.Fatalf("%s: fallback on_demand runs %d, want %d at all times", clock.Now(), od.Ready, desired)
		}
		switch {
		case none.Ready == base:
			short++
		case none.Ready == desired && short > 0:
			recovered++
		case none.Ready != desired:
			t.Fatalf("%s: fallback none runs %d, want %d, or its base %d while out of spot", clock.Now(), none.Ready, desired, base)
		}
	}
	stockOuts := fleets[planner.SpotFallbackNone].Usage("gpu").StockOuts
	if stockOuts == 0 || stockOuts != fleets[planner.SpotFallbackOnDemand].Usage("gpu").StockOuts {
		t.Fatalf("stock-outs %d and %d, want the same, at least one", stockOuts, fleets[planner.SpotFallbackOnDemand].Usage("gpu").StockOuts)
	}
	if short == 0 || recovered == 0 {
		t.Errorf("fallback none: %d minutes short, %d back at full size after; want both", short, recovered)
	}
	if c, _ := fleets[planner.SpotFallbackNone].Capacity(ctx, "gpu"); c.Desired != desired {
		t.Errorf("fallback none: desired %d, want %d kept while short", c.Desired, desired)
	}
	t.Logf("%d stock-outs; fallback none short %d of %d minutes", stockOuts, short, 14*24*60)
}

// A steady fleet that loses its spot instances in a stock-out moves back
// to spot once spot returns: over two weeks of stock-outs it is short
// only while the on-demand replacements of a stock-out boot (the move
// back never leaves it short), and nearly all of its billed time is on
// spot, where without the move it would be on demand from the first
// stock-out on.
func TestStandInsReturnToSpot(t *testing.T) {
	ctx := context.Background()
	clock := actuatortest.NewClock(t0)
	f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 10 * time.Minute, StockOutsPerWeek: 3,
		StockOutFor: 2 * time.Hour, Rand: rand.New(rand.NewPCG(11, 0))})
	f.AddPool("gpu", 0, 0, 20)
	must(t, f.SetSpot(ctx, "gpu", planner.Spot{Share: 1}, "test"))
	must(t, f.SetDesired(ctx, "gpu", 10, "up"))
	clock.Advance(10 * time.Minute)
	short := 0
	for range 14 * 24 * 60 {
		clock.Advance(time.Minute)
		c := f.Counts("gpu")
		if c.Ready+c.Booting != 10 {
			t.Fatalf("%s: %d instances, want 10 at all times", clock.Now(), c.Ready+c.Booting)
		}
		if c.Ready < 10 {
			short++
		}
	}
	u := f.Usage("gpu")
	if u.StockOuts < 2 {
		t.Fatalf("%d stock-outs in two weeks at three a week; this seed draws more", u.StockOuts)
	}
	if short > 10*u.StockOuts {
		t.Errorf("%d minutes short, want at most a 10-minute boot for each of %d stock-outs", short, u.StockOuts)
	}
	// Out of stock about 3 × 2 h a week (4%), plus a boot's overlap each time.
	if share := u.Spot.Hours() / (u.Spot + u.OnDemand).Hours(); share < 0.9 {
		t.Errorf("%.1f%% of the billed time on spot after %d stock-outs, want at least 90%%", 100*share, u.StockOuts)
	}
	if n := spotCount(f, "gpu"); n != 10 {
		t.Errorf("%d of 10 on spot at the end, want all", n)
	}
}

// With spot in two zones, a stock-out empties one of them: its spot
// instances are replaced on spot in the other at once, with no
// on-demand stand-in, and launches go to the zone with fewer spot
// instances; with one zone the same stock-out leaves the pool on demand.
func TestStockOutMovesSpotToAnotherZone(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		zones           int
		wantSpotAfter   int
		wantInterrupted int
	}{
		{zones: 2, wantSpotAfter: 10, wantInterrupted: 5},
		{zones: 1, wantSpotAfter: 0, wantInterrupted: 10},
	} {
		clock := actuatortest.NewClock(t0)
		f := simulated.New(simulated.Options{Now: clock.Now, BootDelay: 5 * time.Minute, SpotShare: 1,
			StockOutsPerWeek: 7, StockOutFor: 2 * time.Hour, SpotZones: tc.zones, Rand: rand.New(rand.NewPCG(9, 0))})
		f.AddPool("gpu", 0, 0, 40)
		must(t, f.SetDesired(ctx, "gpu", 10, "up"))
		perZone := map[int]int{}
		for _, in := range f.Instances("gpu") {
			perZone[in.Zone]++
		}
		if tc.zones == 2 && (perZone[0] != 5 || perZone[1] != 5) {
			t.Fatalf("%d zones: spot per zone %v, want 5 and 5", tc.zones, perZone)
		}
		for minutes := 0; f.Usage("gpu").StockOuts == 0; minutes++ {
			if minutes > 14*24*60 {
				t.Fatalf("%d zones: no stock-out in two weeks at seven a week", tc.zones)
			}
			clock.Advance(time.Minute)
		}
		if got := f.Usage("gpu").Interruptions; got != tc.wantInterrupted {
			t.Errorf("%d zones: %d interrupted at the stock-out, want %d", tc.zones, got, tc.wantInterrupted)
		}
		if got := spotCount(f, "gpu"); got != tc.wantSpotAfter || len(f.Instances("gpu")) != 10 {
			t.Errorf("%d zones: %d on spot of %d right after the stock-out, want %d of 10",
				tc.zones, got, len(f.Instances("gpu")), tc.wantSpotAfter)
		}
	}
}
