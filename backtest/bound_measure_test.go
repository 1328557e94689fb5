package backtest

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// reactiveBound is a measuring instrument, not a policy to run: it knows
// each tick's need exactly, lag ticks late, and asks for headroom × the
// largest need of the last hold ticks it has seen, with warm stopped
// instances in reserve. No policy that reacts to demand can do better
// than its best setting: a real one sees a noisy estimate of the same
// need, no sooner.
type reactiveBound struct {
	start    time.Time
	tick     time.Duration
	needs    []int
	lag      int
	hold     int
	headroom float64
	warm     int
}

func (p *reactiveBound) decide(now time.Time, _ planner.Observation, _ bool, _ int) planner.Step {
	i := int(now.Sub(p.start)/p.tick) - p.lag
	seen := 0
	for k := max(i-p.hold+1, 0); k <= i && k < len(p.needs); k++ {
		seen = max(seen, p.needs[k])
	}
	return planner.Step{At: now, Desired: int(math.Ceil(p.headroom * float64(seen))), Warm: p.warm, Reason: "bound"}
}

// TestMeasureReactiveBound measures how far the warm tier can take a
// policy that reacts to demand on the burst generator's second halves:
// the reactive bound above on a 90 s warm start, against the untiered
// tuned hybrid's running GPU-hours.
//
//	PREWARM_BOUND=1 go test ./backtest -run TestMeasureReactiveBound -v -timeout 20m
func TestMeasureReactiveBound(t *testing.T) {
	if os.Getenv("PREWARM_BOUND") == "" {
		t.Skip("set PREWARM_BOUND=1 to replay the burst generator's second halves (minutes)")
	}
	ctx := context.Background()
	for _, tr := range SuiteSynthetic([]uint64{1, 2, 3}, 56) {
		if tr.Name[:6] != "bursts" {
			continue
		}
		cfg := barConfig(tr, 20)
		cfg.ScoreFrom = SplitPoint(tr)
		b, err := prepare(ctx, tr, cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.newPolicy(PolicyHybrid, b.cfg)
		if err != nil {
			t.Fatal(err)
		}
		hybrid, err := simulate(ctx, tr, b.cfg, PolicyHybrid, 2, p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s: untiered hybrid %.0f running GPU-hours at %.3f%%\n", tr.Name, hybrid.GPUHours, 100*hybrid.SLOAttainmentAfterWarmUp)
		tiered := b.cfg
		tiered.Planner.Fleet.WarmStart = 90 * time.Second
		needs := b.tickNeeds(tiered)
		for _, lag := range []int{0, 1} {
			var best Result
			setting := "none reaches 99.5%"
			for _, hold := range []int{1, 3, 5, 10, 30} {
				for _, h := range []float64{1.5, 2, 2.25, 2.5, 2.75, 3, 3.5} {
					bound := &reactiveBound{start: tr.Start, tick: tiered.Tick, needs: needs, lag: lag, hold: hold, headroom: h, warm: b.static}
					r, err := simulate(ctx, tr, tiered, "bound", 7, bound)
					if err != nil {
						t.Fatal(err)
					}
					if r.SLOAttainmentAfterWarmUp >= 0.995 && (best.Name == "" || r.GPUHours < best.GPUHours) {
						best, setting = r, fmt.Sprintf("held %d min, ×%.2f", hold, h)
					}
				}
			}
			fmt.Printf("  seen %d min late: cheapest at 99.5%%: %s, %.0f running GPU-hours (%.3f× the hybrid's) at %.3f%%\n",
				lag, setting, best.GPUHours, best.GPUHours/hybrid.GPUHours, 100*best.SLOAttainmentAfterWarmUp)
		}
	}
}
