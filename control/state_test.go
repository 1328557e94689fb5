package control

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// A controller restored from an encoded State decides exactly as the one
// it was taken from: the gate stays demoted, and the reactive clocks (a
// scale-out's cooldown) carry over, where a fresh controller would trust
// the model again and scale out at once.
func TestRestoredControllerDecidesAsTheOriginal(t *testing.T) {
	p := testPlanner()
	p.Gating.Window = 24 * time.Hour
	newCtl := func() *Controller {
		c, err := New(p, hourly(func([]int) model.Forecaster { return constant(500) }))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	orig := newCtl()
	history := flat(24*5, 100)
	now := t0
	for range 30 {
		history = append(history, 100)
		if _, err := orig.Refit(now, history); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
	}
	if orig.Last().Gate.Level != planner.GateProfile {
		t.Fatalf("setup: gate %s, want the model demoted to profile", orig.Last().Gate.Level)
	}
	// Hot for longer than ScaleOutFor: the reactive term scales out once,
	// then its cooldown runs.
	busy := func(at time.Time) planner.Observation {
		return planner.Observation{At: at, Span: time.Minute, Utilisation: 0.99, DemandRPS: 150}
	}
	at := now.Add(-time.Hour)
	for range 6 {
		at = at.Add(time.Minute)
		orig.Decide(at, busy(at), 11)
	}

	restored, fresh := restart(t, orig, newCtl()), newCtl()
	if _, err := fresh.Refit(now.Add(-time.Hour), history); err != nil {
		t.Fatal(err)
	}
	if fresh.Last().Gate.Level == planner.GateProfile {
		t.Fatal("setup: a fresh controller should not know the model was demoted")
	}
	for range 10 {
		at = at.Add(time.Minute)
		want := orig.Decide(at, busy(at), 15)
		got := restored.Decide(at, busy(at), 15)
		if got != want {
			t.Fatalf("%s: restored decided %+v, the original %+v", at.Format(time.TimeOnly), got, want)
		}
		if restored.Level() != planner.GateProfile {
			t.Fatalf("%s: restored follows %s, want the demoted model to stay demoted", at.Format(time.TimeOnly), restored.Level())
		}
	}
	// The next refit scores the same remembered forecasts, so it gates alike.
	history = append(history, 100)
	r1, err1 := orig.Refit(now, history)
	r2, err2 := restored.Refit(now, history)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if r1.Gate != r2.Gate {
		t.Fatalf("gate after restore %+v, original %+v", r2.Gate, r1.Gate)
	}
}

func TestRestoreRefusesAnotherGridOrVersion(t *testing.T) {
	c, err := New(testPlanner(), hourly(func([]int) model.Forecaster { return constant(100) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(72, 100)); err != nil {
		t.Fatal(err)
	}
	good := c.State()
	tests := []struct {
		name  string
		edit  func(*State)
		error string
	}{
		{"old version", func(s *State) { s.Version = 0 }, "version"},
		{"other step", func(s *State) { s.Refit.Forecast.Step = 30 * time.Minute }, "forecast.step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := good
			tt.edit(&st)
			other, _ := New(testPlanner(), hourly(nil))
			if err := other.Restore(st); err == nil || !strings.Contains(err.Error(), tt.error) {
				t.Fatalf("Restore = %v, want an error naming %q", err, tt.error)
			}
			if !other.Last().At.IsZero() {
				t.Fatal("a refused state must leave the controller as it was")
			}
		})
	}
}

func FuzzDecodeState(f *testing.F) {
	c, _ := New(testPlanner(), hourly(func([]int) model.Forecaster { return constant(100) }))
	c.Refit(t0, flat(72, 100))
	data, _ := c.State().Encode()
	f.Add(data)
	f.Add([]byte{})
	f.Add([]byte("not gob"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeState(data)
		if err != nil {
			return
		}
		other, _ := New(testPlanner(), hourly(nil))
		_ = other.Restore(st) // must not panic
	})
}

// What the controller learns walk-forward survives a restart: the
// calibrated quantile, the per-slot errors that bound the plans, the
// record of what was asked for (the calibration's view of what was ready)
// and the return-to-plan clock. A restored controller goes on exactly as
// the original; a fresh one, with the same refits and observations, does
// not.
func TestRestoredControllerKeepsItsLearning(t *testing.T) {
	p := planner.DefaultConfig()
	p.Fleet.RPSPerInstance = 10
	p.Bounds.MinErrors = 3
	s := hourly(func([]int) model.Forecaster { return constant(100) })
	s.Follow = planner.GateModel
	newCtl := func() *Controller {
		c, err := New(p, s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	start := t0.Add(-6 * 24 * time.Hour)
	demand := burstAt10(start, 8*24)
	current := map[*Controller]int{}
	// drive refits hourly and decides every minute from hour h0 to h1.
	drive := func(c *Controller, h0, h1 int) []planner.Step {
		var out []planner.Step
		for h := h0; h < h1; h++ {
			at := start.Add(time.Duration(h) * time.Hour)
			if _, err := c.Refit(at, demand[:h]); err != nil {
				t.Fatal(err)
			}
			for m := range 60 {
				now := at.Add(time.Duration(m) * time.Minute)
				d := demand[h]
				if m >= 58 && demand[h] > 100 {
					d = 400 // the end of a burst overflows: misses, a scale-out
				}
				obs := planner.Observation{At: now, Span: time.Minute, DemandRPS: d, Utilisation: math.Min(1, d/(10*float64(current[c])))}
				st := c.Decide(now, obs, current[c])
				current[c] = st.Desired
				out = append(out, st)
			}
		}
		return out
	}
	orig := newCtl()
	current[orig] = 10
	drive(orig, 24, 5*24+11)
	t.Logf("quantile at the snapshot %v", orig.Quantile())
	if orig.Quantile() == p.ForecastQuantile || orig.errors.vals == nil || len(orig.asked) == 0 {
		t.Fatalf("setup: quantile %v, %d errors, %d asked: the controller learnt nothing", orig.Quantile(), len(orig.errors.vals), len(orig.asked))
	}
	restored, fresh := restart(t, orig, newCtl()), newCtl()
	current[restored], current[fresh] = current[orig], current[orig]
	want := drive(orig, 5*24+11, 6*24+12)
	got := drive(restored, 5*24+11, 6*24+12)
	other := drive(fresh, 5*24+11, 6*24+12)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("decision %d: restored %+v, original %+v", i, got[i], want[i])
		}
	}
	if restored.Quantile() != orig.Quantile() {
		t.Errorf("quantile: restored %v, original %v", restored.Quantile(), orig.Quantile())
	}
	if slices.Equal(other, want) {
		t.Error("a fresh controller decides the same: the state carries nothing")
	}
}

// restart carries from's state into to through an encoded State, as a
// service restarted after a crash does, and returns to.
func restart(t *testing.T, from, to *Controller) *Controller {
	t.Helper()
	data, err := from.State().Encode()
	if err != nil {
		t.Fatal(err)
	}
	st, err := DecodeState(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := to.Restore(st); err != nil {
		t.Fatal(err)
	}
	return to
}

// A state saved a day ahead of the wall clock (the clock was stepped back
// since) holds the reactive rules back by one cooldown at most: a restored
// controller under sustained load scales out within a cooldown and a hold,
// where the saved clocks taken as they were blocked every scale-out for the
// day.
func TestRestoredClocksInTheFutureAreTakenAsNow(t *testing.T) {
	p := testPlanner()
	newCtl := func() *Controller {
		c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	busy := func(at time.Time) planner.Observation {
		return planner.Observation{At: at, Span: time.Minute, Utilisation: 0.99, DemandRPS: 150}
	}
	ahead := t0.Add(24 * time.Hour)
	orig := newCtl()
	at := ahead
	for range 6 {
		at = at.Add(time.Minute)
		orig.Decide(at, busy(at), 11)
	}
	if orig.State().Reactive.LastOut.IsZero() {
		t.Fatal("setup: the original never scaled out")
	}
	restored := restart(t, orig, newCtl())
	r := p.Reactive
	bound := int((r.ScaleOutCooldown+r.ScaleOutFor)/time.Minute) + 2
	at = t0 // the clock stepped back a day
	current := 15
	for i := range bound {
		at = at.Add(time.Minute)
		if st := restored.Decide(at, busy(at), current); st.Desired > current {
			return
		}
		if i == bound-1 {
			t.Fatalf("no scale-out in %d minutes of sustained load after the clock stepped back: reactive state %+v",
				bound, restored.State().Reactive)
		}
	}
}
