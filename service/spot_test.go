package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// spotFleet is a simulated fleet that records the spot mixes it is set
// to, and fails the next fail of them as a provider refusing would.
type spotFleet struct {
	*simulated.Fleet
	mu    sync.Mutex
	mixes []planner.Spot
	fail  int
}

func (f *spotFleet) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	f.mu.Lock()
	f.mixes = append(f.mixes, spot)
	failing := f.fail > 0
	f.fail--
	f.mu.Unlock()
	if failing {
		return fmt.Errorf("InvalidParameter: %w", actuator.ErrRejected)
	}
	return f.Fleet.SetSpot(ctx, pool, spot, reason)
}

// calls returns the mixes set so far.
func (f *spotFleet) calls() []planner.Spot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]planner.Spot(nil), f.mixes...)
}

// spotSpec is the rig's pool on the simulated back-end in mode, with a
// reserved base of 2 and the spot block spot.
func spotSpec(mode poolspec.Mode, spot planner.Spot) poolspec.Pool {
	return testSpec(testPool, func(p *poolspec.Pool) {
		p.Backend, p.Mode, p.Prices.ReservedInstances, p.Fleet.Spot = simulated.Name, mode, 2, spot
	})
}

// serveSpot replaces the rig's service with one whose pool (spotSpec) runs
// on a spotFleet, which it returns.
func (r *rig) serveSpot(t *testing.T, mode poolspec.Mode, spot planner.Spot) *spotFleet {
	t.Helper()
	fleet := &spotFleet{Fleet: simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute})}
	fleet.AddPool(testPool, 2, 1, 50)
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{spotSpec(mode, spot)}
	svc, err := New(context.Background(), &cfg, Deps{Store: r.store, Now: r.clock.Now, Logger: quietLogger(),
		Backend: func(context.Context, actuator.PoolConfig) (actuator.Actuator, error) { return fleet, nil }})
	if err != nil {
		t.Fatal(err)
	}
	r.svc = svc
	return fleet
}

// The live loop runs the spot tier: a forecast-only pool tells its
// back-end nothing; once active it sets the pool's spot mix at its first
// decision (again after a failed try), and only after a reload changes
// the block again (a tier removed included). The fleet's launches follow
// the mix, and the pool's status splits the decision into its tiers.
func TestServeRunsTheSpotTier(t *testing.T) {
	r := newRig(t, 2, nil)
	spot := planner.Spot{Share: 0.5, BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}
	fleet := r.serveSpot(t, poolspec.ModeForecastOnly, spot)
	now := r.clock.Now() // midnight: the daily cycle rises towards 14:00
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	r.tickEvery(t, time.Minute, 30, daily)
	if got := fleet.calls(); len(got) != 0 {
		t.Fatalf("a forecast-only pool set the spot mix %+v, want nothing applied", got)
	}
	if _, err := r.svc.SetMode(testPool, poolspec.ModeActive, "test"); err != nil {
		t.Fatal(err)
	}
	fleet.fail = 1
	r.clock.Advance(time.Minute)
	r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), daily)
	if err := r.svc.Tick(context.Background()); err == nil || !strings.Contains(err.Error(), "spot.share 0.5") {
		t.Fatalf("a decision whose spot mix the back-end refused: %v, want an error naming spot.share", err)
	}
	r.tickEvery(t, time.Minute, 12*60, daily) // to noon, the fleet growing
	if got := fleet.calls(); len(got) != 2 || got[1] != spot {
		t.Fatalf("spot mixes set %+v, want %+v twice (a refusal, then once for good)", got, spot)
	}
	st := r.svc.Status()[0]
	want := spotSpec(poolspec.ModeActive, spot).Config
	if st.Tiers != want.Tiers(st.Desired, st.Warm) || st.Tiers.Running() != st.Desired || st.Tiers.Spot == 0 || st.Tiers.Reserved != 2 {
		t.Errorf("status tiers %+v of desired %d, want reserved 2 and spot.OnSpot's %d on spot", st.Tiers, st.Desired, spot.OnSpot(st.Desired))
	}
	if st.Spot == nil || *st.Spot != spot {
		t.Errorf("status spot %+v, want %+v", st.Spot, spot)
	}
	onSpot := 0
	for _, in := range fleet.Instances(testPool) {
		if in.Spot {
			onSpot++
		}
	}
	if onSpot != spot.OnSpot(st.Desired) {
		t.Errorf("the fleet runs %d of %d on spot, want spot.OnSpot's %d", onSpot, st.Desired, spot.OnSpot(st.Desired))
	}
	checkTieredSchedule(t, r, want)
	t.Run("status page", func(t *testing.T) {
		r.checkNowCard(t, "spot-tier.png", "Spot tier: 50% of the instances above 2 on spot; lost spot capacity is replaced on demand")
		r.checkNowCard(t, "spot-tier.png", fmt.Sprintf("Tiers: 2 reserved · %d on demand · %d on spot · 0 warm", st.Tiers.OnDemand, st.Tiers.Spot))
	})

	for _, tc := range []struct {
		name  string
		spot  planner.Spot
		calls int // SetSpot calls after the reload's decision
	}{
		{"the same block", spot, 2},
		{"a new share", planner.Spot{Share: 0.8, BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}, 3},
		{"another setting", planner.Spot{Share: 0.8, BaseOnDemand: 2, Fallback: planner.SpotFallbackNone}, 4},
		{"the tier removed", planner.Spot{Fallback: planner.SpotFallbackNone}, 5},
		{"still none", planner.Spot{Fallback: planner.SpotFallbackNone}, 5},
	} {
		file := poolspec.DefaultFile()
		file.Pools = []poolspec.Pool{spotSpec(poolspec.ModeActive, tc.spot)}
		if err := r.svc.Reload(context.Background(), &file); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r.tickEvery(t, time.Minute, 2, daily)
		got := fleet.calls()
		if len(got) != tc.calls || got[len(got)-1] != tc.spot {
			t.Errorf("%s: spot mixes set %+v, want %d, the last %+v", tc.name, got, tc.calls, tc.spot)
		}
		if st := r.svc.Status()[0]; (st.Spot != nil) != tc.spot.Tier() || st.Tiers.Spot != tc.spot.OnSpot(st.Desired) {
			t.Errorf("%s: status spot %+v, tiers %+v of %d", tc.name, st.Spot, st.Tiers, st.Desired)
		}
	}
}

// checkTieredSchedule checks that /api/v1/pools/NAME/schedule and the
// pool's status split every step of the plans into its tiers as cfg's
// Tiers does, and that the status shows the pool's spot block.
func checkTieredSchedule(t *testing.T, r *rig, cfg planner.Config) {
	t.Helper()
	var sched ScheduleView
	var pool PoolStatus
	r.getJSON(t, "/api/v1/pools/"+testPool+"/schedule", &sched)
	status := r.getJSON(t, "/api/v1/pools/"+testPool, &pool)
	plans := map[string][]planner.TieredStep{"steps": sched.Steps, "model_plan": sched.ModelPlan, "plan in the status": pool.Plan}
	for name, plan := range plans {
		onSpot := 0
		for _, st := range plan {
			if st.Tiers != cfg.Tiers(st.Desired, st.Warm) {
				t.Errorf("%s: step at %s of %d tiered %+v, want %+v", name, st.At.Format("15:04"), st.Desired, st.Tiers, cfg.Tiers(st.Desired, st.Warm))
			}
			onSpot += st.Tiers.Spot
		}
		if len(plan) == 0 || onSpot == 0 {
			t.Errorf("%s: %d steps, %d instance-steps on spot: want a plan with a spot tier", name, len(plan), onSpot)
		}
	}
	if pool.Tiers != cfg.Tiers(pool.Desired, pool.Warm) || pool.Spot == nil || *pool.Spot != cfg.Fleet.Spot {
		t.Errorf("the pool's status: tiers %+v of %d, spot %+v; want %+v and %+v", pool.Tiers, pool.Desired, pool.Spot,
			cfg.Tiers(pool.Desired, pool.Warm), cfg.Fleet.Spot)
	}
	for _, key := range []string{`"tiers": {`, `"reserved": 2,`, `"on_demand": `, `"base_on_demand": 2,`, `"fallback": "on_demand"`} {
		if !strings.Contains(string(status), key) {
			t.Errorf("the pool's status lacks %s:\n%.800s", key, status)
		}
	}
}

// getJSON decodes the rig's API answer at path into v and returns it as
// it came.
func (r *rig) getJSON(t *testing.T, path string, v any) []byte {
	t.Helper()
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	_, body, _ := fetch(t, srv, path)
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return body
}

// A pool with a spot tier on a back-end that runs no spot mix is refused,
// naming the key and the back-end, when the service starts and when a
// reload asks for it; without a tier (share 0) any back-end will do. A
// warm tier on a back-end without one is refused at a reload as at start.
func TestSpotTierNeedsASpotMixer(t *testing.T) {
	spotted := func(spot planner.Spot) func(*poolspec.Pool) {
		return func(p *poolspec.Pool) { p.Fleet.Spot = spot }
	}
	tests := []struct {
		name    string
		mutate  func(*poolspec.Pool)
		reload  bool
		wantErr string // "" for accepted
	}{
		{"at start", spotted(planner.Spot{Share: 0.5, Fallback: planner.SpotFallbackOnDemand}), false,
			`pool "gpu": spot.share 0.5 needs a back-end that runs a spot mix (simulated, dryrun, volcengine); backend fake runs none`},
		{"at a reload", spotted(planner.Spot{Share: 1, BaseOnDemand: 3, Fallback: planner.SpotFallbackNone}), true,
			"spot.share 1 needs a back-end that runs a spot mix"},
		{"no tier at start", spotted(planner.Spot{BaseOnDemand: 3, Fallback: planner.SpotFallbackOnDemand}), false, ""},
		{"no tier at a reload", spotted(planner.Spot{Fallback: planner.SpotFallbackNone}), true, ""},
		{"a warm tier at a reload", func(p *poolspec.Pool) { p.Fleet.WarmStart = time.Minute }, true,
			"warm_start 1m0s needs a back-end that keeps a warm tier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			r := newRig(t, 2, nil)
			file := poolspec.DefaultFile()
			file.Pools = []poolspec.Pool{testSpec(testPool, tt.mutate)}
			if tt.reload {
				err = r.svc.Reload(context.Background(), &file)
				if st := r.svc.Status()[0]; err != nil && (st.Spot != nil || st.WarmStart != 0) {
					t.Errorf("a refused reload put its tiers in force: spot %+v, warm_start %v", st.Spot, st.WarmStart)
				}
			} else {
				_, err = New(context.Background(), &file, Deps{Store: r.store, Backend: fakeBackend(r.fake), Logger: quietLogger()})
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// CheckTiers, what --check-config runs, refuses exactly what the service
// refuses when it starts (New), with the same message, given the tiers of
// the back-end the service would build; a pool it refuses names the pool
// and the key, and every refused pool is reported.
func TestCheckTiersIsTheServiceRefusal(t *testing.T) {
	r := newRig(t, 2, nil)
	fake := actuatortest.New("fake").AddPool(testPool, 2, 1, 50) // runs no tier
	cases := []struct {
		name   string
		mutate func(*poolspec.Pool)
		want   string // "" for accepted
	}{
		{"a warm tier", func(p *poolspec.Pool) { p.Fleet.WarmStart = time.Minute }, `pool "gpu": warm_start 1m0s needs a back-end that keeps a warm tier`},
		{"a spot tier", func(p *poolspec.Pool) {
			p.Fleet.Spot = planner.Spot{Share: 0.5, Fallback: planner.SpotFallbackOnDemand}
		}, `pool "gpu": spot.share 0.5 needs a back-end that runs a spot mix`},
		{"a spot block without a tier", func(p *poolspec.Pool) {
			p.Fleet.Spot = planner.Spot{BaseOnDemand: 2, Fallback: planner.SpotFallbackOnDemand}
		}, ""},
		{"no tier", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := poolspec.DefaultFile()
			file.Pools = []poolspec.Pool{testSpec(testPool, tc.mutate)}
			checked := CheckTiers(&file, func(actuator.PoolConfig) actuator.Tiers { return actuator.TiersOf(fake) })
			_, started := New(context.Background(), &file, Deps{Store: r.store, Backend: fakeBackend(fake), Logger: quietLogger()})
			switch {
			case tc.want == "" && (checked != nil || started != nil):
				t.Errorf("CheckTiers = %v, the service %v; want both to accept", checked, started)
			case tc.want != "" && (checked == nil || !strings.HasPrefix(checked.Error(), tc.want)):
				t.Errorf("CheckTiers = %v, want %q", checked, tc.want)
			case tc.want != "" && fmt.Sprint(checked) != fmt.Sprint(started):
				t.Errorf("CheckTiers: %v\nthe service: %v\nwant the same refusal", checked, started)
			}
		})
	}
	t.Run("every refused pool", func(t *testing.T) {
		file := poolspec.DefaultFile()
		file.Pools = []poolspec.Pool{
			testSpec("a", func(p *poolspec.Pool) { p.Fleet.WarmStart = time.Minute }),
			testSpec("b", nil),
			testSpec("c", func(p *poolspec.Pool) { p.Fleet.Spot = planner.Spot{Share: 1, Fallback: planner.SpotFallbackNone} }),
		}
		err := CheckTiers(&file, func(actuator.PoolConfig) actuator.Tiers { return actuator.Tiers{} })
		joined, ok := err.(interface{ Unwrap() []error })
		if !ok || len(joined.Unwrap()) != 2 {
			t.Fatalf("CheckTiers = %v, want the refusals of pools a and c", err)
		}
		if got := CheckTiers(&file, func(actuator.PoolConfig) actuator.Tiers { return actuator.Tiers{Warm: true, Spot: true} }); got != nil {
			t.Errorf("with both tiers: %v, want none", got)
		}
	})
}
