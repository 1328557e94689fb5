package service

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// constant forecasts v for every step.
type constant float64

func (c constant) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	f := model.Forecast{Method: "constant", Level: level}
	for range horizon {
		f.Mean = append(f.Mean, float64(c))
		f.Lower = append(f.Lower, 0.9*float64(c))
		f.Upper = append(f.Upper, 1.1*float64(c))
	}
	return f, nil
}

// hourlyGate is a pool refitting every hour on a one-day season, its gate
// measured over a day, so a model can lose the gate within a test.
func hourlyGate(p *poolspec.Pool) {
	p.Forecast = control.Settings{Step: time.Hour, RefitEvery: time.Hour, Horizon: 3 * time.Hour, History: 10 * 24 * time.Hour,
		Periods: []time.Duration{24 * time.Hour}}
	p.Gating.Window = 24 * time.Hour
}

// A model demoted for losing to seasonal naive stays demoted after a
// restart: the gate's scores are part of the saved state. Without them
// (a restart without the state file, shown last) the restarted service
// trusts it again.
func TestRestartKeepsADemotedModelDemoted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	flat := func(time.Time) float64 { return 100 }
	run := func(t *testing.T, r *rig, hours int) {
		t.Helper()
		for range hours {
			r.clock.Advance(time.Hour)
			r.writeDemand(t, r.clock.Now().Add(-time.Hour), r.clock.Now(), flat)
			if err := r.svc.Tick(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A model that forecasts 500 where demand is a flat 100.
	st := openState(t, path)
	bad := newRigWith(t, 10, hourlyGate, func(d *Deps) {
		d.State = st
		d.NewModel = func([]int) model.Forecaster { return constant(500) }
	})
	bad.writeDemand(t, bad.clock.Now().Add(-6*24*time.Hour), bad.clock.Now(), flat)
	run(t, bad, 30)
	if got := bad.svc.Status()[0]; got.Gate != planner.GateProfile {
		t.Fatalf("gate %s (%s), want the bad model demoted to the profile", got.Gate, got.GateReason)
	}
	st.Close()

	// Restarted with a model that would now look fine at first sight:
	// its past misses are remembered, so it stays demoted.
	restart := func(t *testing.T, withState bool) PoolStatus {
		r := newRigWith(t, 10, hourlyGate, func(d *Deps) {
			if withState {
				d.State = openState(t, path)
			}
		})
		r.clock.Advance(30 * time.Hour)
		r.store.Querier, r.db = bad.db, bad.db
		run(t, r, 1) // one refit after the restart
		return r.svc.Status()[0]
	}
	if got := restart(t, true); got.Gate != planner.GateProfile {
		t.Errorf("after a restart with the state: gate %s (%s), want profile kept", got.Gate, got.GateReason)
	}
	if got := restart(t, false); got.Gate != planner.GateModel {
		t.Errorf("after a restart without the state: gate %s (%s); without the saved scores the model starts trusted", got.Gate, got.GateReason)
	}
}
