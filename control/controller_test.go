package control

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// constant forecasts the same rate with a ±10% interval.
type constant float64

func (c constant) Forecast(_ []float64, h int, level float64) (model.Forecast, error) {
	f := model.Forecast{Method: "constant", Level: level}
	for range h {
		f.Mean = append(f.Mean, float64(c))
		f.Lower = append(f.Lower, 0.9*float64(c))
		f.Upper = append(f.Upper, 1.1*float64(c))
	}
	return f, nil
}

var t0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

// testPlanner sizes 10 req/s an instance at full utilisation and plans at
// the forecaster's own interval (the constant one's +10%) unwidened,
// uncapped, uncalibrated and without the warm-up term, so a test reads the
// plan off the forecast; those have tests of their own.
func testPlanner() planner.Config {
	c := planner.DefaultConfig()
	c.Fleet.RPSPerInstance = 10
	c.Fleet.MaxInstances = 100
	c.TargetUtilisation = 1
	c.Calibration.On = false
	c.Bounds.WarmUpWidening = 1
	c.Bounds.PeakHeadroom = -1
	c.Bounds.NoWarmUpPeak = true
	return c
}

// hourly settings with a one-day season keep the histories short.
func hourly(newModel func([]int) model.Forecaster) Settings {
	return Settings{Step: time.Hour, RefitEvery: time.Hour, Horizon: 3 * time.Hour, History: 10 * 24 * time.Hour,
		Periods: []time.Duration{24 * time.Hour}, NewModel: newModel,
		NewProfile: func(int) model.Forecaster { return constant(100) }}
}

func flat(n int, v float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return x
}

func TestRefitPlansAndGates(t *testing.T) {
	tests := []struct {
		name      string
		history   []float64
		model     float64
		wantGate  string
		wantNeeds int // desired at the refit time
	}{
		{"enough history trusts the model", flat(72, 100), 200, planner.GateModel, 22},
		{"one season steps back to the profile", flat(30, 100), 200, planner.GateProfile, 11},
		{"less than a season is reactive only", flat(10, 100), 200, planner.GateReactive, 0},
		{"leading gaps are not history", append(flat(60, math.NaN()), flat(10, 100)...), 200, planner.GateReactive, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(testPlanner(), hourly(func([]int) model.Forecaster { return constant(tt.model) }))
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Refit(t0, tt.history)
			if err != nil {
				t.Fatal(err)
			}
			if r.Gate.Level != tt.wantGate {
				t.Fatalf("gate = %s (%s), want %s", r.Gate.Level, r.Gate.Reason, tt.wantGate)
			}
			if tt.wantNeeds == 0 {
				return
			}
			st := c.Decide(t0, planner.Observation{At: t0, Span: time.Minute, Utilisation: 0.5}, 5)
			if st.Desired != tt.wantNeeds {
				t.Errorf("desired = %d (%s), want %d", st.Desired, st.Reason, tt.wantNeeds)
			}
		})
	}
}

// A model whose forecasts were worse than seasonal naive over the gating
// window loses the gate to the profile.
func TestGateStepsBackFromABadModel(t *testing.T) {
	p := testPlanner()
	p.Gating.Window = 24 * time.Hour
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(500) }))
	if err != nil {
		t.Fatal(err)
	}
	history := flat(24*5, 100)
	now := t0
	var r Refit
	for i := 0; i < 30; i++ { // a day and more of hourly refits, each scored later
		history = append(history, 100)
		if r, err = c.Refit(now, history); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
	}
	if r.Gate.Level != planner.GateProfile || !strings.Contains(r.Gate.Reason, "seasonal naive") {
		t.Fatalf("gate = %s (%s), want profile after the model's misses", r.Gate.Level, r.Gate.Reason)
	}
}

func TestNoHistory(t *testing.T) {
	c, err := New(testPlanner(), hourly(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(5, math.NaN())); err != ErrNoHistory {
		t.Fatalf("err = %v, want ErrNoHistory", err)
	}
	// Without a plan the reactive rules still decide.
	st := c.Decide(t0, planner.Observation{At: t0, Span: 10 * time.Minute, Utilisation: 0.99, DemandRPS: 80}, 3)
	if st.Desired <= 3 {
		t.Errorf("desired = %d (%s): overload should scale out", st.Desired, st.Reason)
	}
}

func TestPlanStartsAtTheStepInForce(t *testing.T) {
	c, err := New(testPlanner(), hourly(func([]int) model.Forecaster { return constant(200) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(72, 100)); err != nil {
		t.Fatal(err)
	}
	plan := c.Plan(t0.Add(30 * time.Minute))
	if len(plan) == 0 || plan[0].At.After(t0.Add(30*time.Minute)) {
		t.Fatalf("plan %v must start with the step in force at 00:30", plan)
	}
}

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want string
	}{
		{"refit shorter than step", Settings{Step: time.Hour, RefitEvery: time.Minute}, "refit_every"},
		{"period not a multiple", Settings{Step: time.Hour, Periods: []time.Duration{90 * time.Minute}}, "periods[0]"},
		{"history too short", Settings{Step: time.Hour, History: time.Hour}, "history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(testPlanner(), tt.s); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

// A plan is followed only while its forecast lasts: when refits stop (the
// store is down), the reactive rules take over once it runs out.
func TestExpiredPlanStepsBackToReactive(t *testing.T) {
	c, err := New(testPlanner(), hourly(func([]int) model.Forecaster { return constant(200) }))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Refit(t0, flat(72, 100))
	if err != nil {
		t.Fatal(err)
	}
	end := r.Forecast.End()
	obs := func(at time.Time) planner.Observation {
		return planner.Observation{At: at, Span: time.Minute, Utilisation: 0.5}
	}
	if st := c.Decide(end.Add(-time.Minute), obs(end.Add(-time.Minute)), 5); st.Desired != 22 || c.Level() != planner.GateModel {
		t.Errorf("before the end: desired %d (%s) at level %s, want the model's 22", st.Desired, st.Reason, c.Level())
	}
	st := c.Decide(end, obs(end), 5)
	if c.Level() != planner.GateReactive || !strings.Contains(st.Reason, "has run out") {
		t.Errorf("at the end: desired %d (%s) at level %s, want reactive, saying the plan ran out", st.Desired, st.Reason, c.Level())
	}
}

func TestHold(t *testing.T) {
	p := testPlanner()
	w, err := planner.ParseWindows("daily 00:00-23:59 at least 30", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		windows []planner.Window
		current int
		refit   bool
		want    int
		reason  string
	}{
		{"no plan: hold current", nil, 40, false, 40, "hold 40: store down"},
		{"plan above current raises", nil, 5, true, 22, "forecast"},
		{"plan below current does not lower", nil, 40, true, 40, "hold 40"},
		{"floor above current raises", w, 5, false, 30, "schedule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Windows = tt.windows
			c, err := New(p, hourly(func([]int) model.Forecaster { return constant(200) }))
			if err != nil {
				t.Fatal(err)
			}
			if tt.refit {
				if _, err := c.Refit(t0, flat(72, 100)); err != nil {
					t.Fatal(err)
				}
			}
			st := c.Hold(t0, tt.current, "store down")
			if st.Desired != tt.want || !strings.Contains(st.Reason, tt.reason) {
				t.Errorf("Hold = %d (%s), want %d (%s)", st.Desired, st.Reason, tt.want, tt.reason)
			}
		})
	}
}
