package service

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// History imported while a pool warms up is used at the next decision, not
// at the next refit time the state says: a running service refits within
// one interval of the import, and so does one restarted from its state
// file (whose next_refit still lies hours ahead) or started without one.
func TestImportedHistoryRefitsWithinOneInterval(t *testing.T) {
	cases := []struct {
		name    string
		restart bool
		state   bool
	}{
		{"the running service", false, true},
		{"restarted from its state file", true, true},
		{"restarted without a state file", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			st := openState(t, path)
			r := newRigWith(t, 2, nil, func(d *Deps) { d.State = st })
			// An hour of live demand: too little for the model.
			start := r.clock.Now()
			r.clock.Advance(time.Hour)
			r.writeDemand(t, start, r.clock.Now(), daily)
			if err := r.svc.Tick(t.Context()); err != nil {
				t.Fatal(err)
			}
			before := r.svc.Status()[0]
			if before.Gate == planner.GateModel || !before.NextRefit.After(r.clock.Now().Add(time.Hour)) {
				t.Fatalf("with an hour of history: gate %s (%s), next refit %s; want no model and a refit hours ahead",
					before.Gate, before.GateReason, before.NextRefit)
			}
			// forecaster import: two weeks before the live hour.
			r.writeDemand(t, start.Add(-14*24*time.Hour), start, daily)
			if tc.restart {
				st.Close()
				db := r.db
				r = newRigWith(t, 2, nil, func(d *Deps) {
					if tc.state {
						d.State = openState(t, path)
					}
				})
				r.store.Querier, r.db = db, db
				r.clock.Advance(time.Hour)
			}
			r.clock.Advance(time.Minute)
			r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), daily)
			if err := r.svc.Tick(t.Context()); err != nil {
				t.Fatal(err)
			}
			got := r.svc.Status()[0]
			if got.Gate != planner.GateModel || got.LastRefit.Before(r.clock.Now().Add(-30*time.Minute)) {
				t.Errorf("a minute after the import: gate %s (%s), last refit %s; want the model, refitted now",
					got.Gate, got.GateReason, got.LastRefit)
			}
		})
	}
}

// failing is a model that fails every forecast, counting the tries.
type failing struct{ calls *int }

func (f failing) Forecast([]float64, int, float64) (model.Forecast, error) {
	*f.calls++
	return model.Forecast{}, errors.New("the model failed")
}

// A pool that warms up tries the early refit once a forecast step, not at
// every decision: a model that fails on the imported history does not
// make every tick refit and fail.
func TestEarlyRefitIsTriedOnceAStep(t *testing.T) {
	calls := 0
	r := newRigWith(t, 2, nil, func(d *Deps) { d.NewModel = func([]int) model.Forecaster { return failing{&calls} } })
	start := r.clock.Now()
	r.clock.Advance(time.Hour)
	r.writeDemand(t, start, r.clock.Now(), daily)
	r.svc.Tick(t.Context()) // the first refit: it fails, the pool warms up
	r.writeDemand(t, start.Add(-14*24*time.Hour), start, daily)
	before := calls
	for range 10 { // ten decisions within one 30-minute step
		r.clock.Advance(time.Minute)
		r.writeDemand(t, r.clock.Now().Add(-time.Minute), r.clock.Now(), daily)
		r.svc.Tick(t.Context())
	}
	if got := calls - before; got != 1 {
		t.Errorf("the failing model was tried %d times in ten decisions after the import, want once", got)
	}
}

// A pool restarted with its wall clock stepped back two days refits at
// once: the saved next refit time, further ahead than one refit interval,
// is not waited for.
func TestRefitTimeAheadOfTheClockIsNotWaitedFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st := openState(t, path)
	r := newRigWith(t, 2, nil, func(d *Deps) { d.State = st })
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-14*24*time.Hour), start.Add(2*24*time.Hour), daily)
	r.clock.Advance(2 * 24 * time.Hour)
	if err := r.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.svc.Status()[0]; !got.NextRefit.After(r.clock.Now()) {
		t.Fatalf("setup: next refit %s, want one ahead of %s", got.NextRefit, r.clock.Now())
	}
	st.Close()
	db := r.db
	r = newRigWith(t, 2, nil, func(d *Deps) { d.State = openState(t, path) })
	r.store.Querier, r.db = db, db
	r.clock.Advance(time.Minute) // two days before the save
	if err := r.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := r.svc.Status()[0]
	every := r.svc.pools[0].ctl().Settings().RefitEvery
	if got.NextRefit.After(r.clock.Now().Add(every)) || got.LastRefit.After(r.clock.Now()) {
		t.Errorf("after the clock stepped back to %s: last refit %s, next refit %s; want a refit now and the next within %v",
			r.clock.Now(), got.LastRefit, got.NextRefit, every)
	}
}
