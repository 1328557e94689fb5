package service

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/service/state"
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
			open := func(t *testing.T) *state.DB {
				st, err := state.Open(path, state.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			st := open(t)
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
						d.State = open(t)
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
