package service

import (
	"math"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// The pool's cost figure prices what the fleet bills by tier: a pool with
// a reserved base, a spot tier and a warm tier costs, over twelve hours of
// a daily cycle, what the simulated fleet billed it (its on-demand and
// spot instance-hours, its stopped hours and the committed base) within
// 5%; the same pool without the tiers costs its GPU-hours on demand.
func TestCostIsPricedByTier(t *testing.T) {
	const reserved = 2
	tests := []struct {
		name  string
		tiers func(*poolspec.Pool)
		spot  float64
	}{
		{"all on demand", func(*poolspec.Pool) {}, 0},
		{"a reserved base, spot and a warm tier", func(p *poolspec.Pool) {
			p.Prices.ReservedInstances = reserved
			p.Fleet.Spot = planner.Spot{Share: 0.5, BaseOnDemand: reserved, Fallback: planner.SpotFallbackOnDemand}
			p.Fleet.WarmStart = 90 * time.Second
		}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
			fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute, WarmStart: 90 * time.Second})
			r.serveFleet(t, fleet, nil, nil, func(p *poolspec.Pool) {
				p.Backend, p.Mode = simulated.Name, poolspec.ModeActive
				tt.tiers(p)
			})
			now := r.clock.Now()
			r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
			r.tickEvery(t, time.Minute, 1, daily) // the first decision starts the bill
			start := r.clock.Now()
			before := fleet.Usage(testPool)
			r.tickEvery(t, time.Minute, 12*60, daily)
			u := fleet.Usage(testPool)
			st := r.svc.Status()[0]
			prices := st.Cost.PricePerHour
			if st.Cost.ByTier != (tt.spot > 0) {
				t.Errorf("priced_by_tier %v for a pool with spot share %v", st.Cost.ByTier, tt.spot)
			}
			onDemand, spot := (u.OnDemand - before.OnDemand).Hours(), (u.Spot - before.Spot).Hours()
			if tt.spot == 0 {
				if want := st.Cost.GPUHours * prices; math.Abs(st.Cost.Cost-want) > 1e-6*want {
					t.Errorf("cost %.2f, want the %.1f GPU-hours on demand: %.2f", st.Cost.Cost, st.Cost.GPUHours, want)
				}
				return
			}
			if spot <= 0 || u.Stopped-before.Stopped <= 0 {
				t.Fatalf("the fleet billed %.1f spot and %v stopped hours: want both tiers in use", spot, u.Stopped-before.Stopped)
			}
			p := planner.DefaultConfig().Prices
			hours := r.clock.Now().Sub(start).Hours()
			// The committed base is paid whether it runs or not; what ran on
			// demand beyond it at the on-demand price.
			billed := reserved*hours*p.ReservedPerHour + math.Max(onDemand-reserved*hours, 0)*p.OnDemandPerHour +
				spot*p.SpotPerHour + (u.Stopped-before.Stopped).Hours()*p.StoppedPerHour
			if math.Abs(st.Cost.Cost-billed) > 0.05*billed {
				t.Errorf("cost %.2f, want within 5%% of the %.2f the fleet billed by tier (%.1f h on demand, %.1f h on spot, %.1f h stopped)",
					st.Cost.Cost, billed, onDemand, spot, (u.Stopped - before.Stopped).Hours())
			}
			t.Logf("cost %.2f by tier, the fleet billed %.2f; %.1f GPU-hours on demand would cost %.2f", st.Cost.Cost, billed, st.Cost.GPUHours, st.Cost.GPUHours*prices)
			if allOnDemand := st.Cost.GPUHours * prices; st.Cost.Cost >= allOnDemand {
				t.Errorf("cost %.2f, not below the %.2f its GPU-hours cost on demand", st.Cost.Cost, allOnDemand)
			}
		})
	}
}
