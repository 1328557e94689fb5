package control

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// StateVersion is the version of State's encoding. Restore refuses other
// versions, so a service upgraded across a format change starts afresh
// instead of misreading old state.
const StateVersion = 2

// State is everything a Controller remembers between decisions: the refit
// in force with its plans and gate verdict, the reactive rules' hold,
// cooldown and return-to-plan clocks, the forecasts and demand that the
// gate scores, the per-slot errors that bound the plans, the calibrated
// forecast quantile and the warm-up peak. A
// service saves it after every refit and decision and restores it at start,
// so a restart (a crash loop, a liveness probe) neither resets a cooldown
// nor trusts a model the gate had demoted.
//
// Every field is exported so that State can be encoded with encoding/gob
// (Encode, DecodeState). Its floats may be NaN (missing demand), which
// JSON cannot carry.
type State struct {
	// Version is StateVersion when the state was taken.
	Version int
	// Refit is the refit in force; its At is zero before the first.
	Refit RefitState
	// Level is the gate level the last Decide followed.
	Level string
	// Reactive is the reactive rules' memory.
	Reactive planner.ReactiveState
	// Forecasts are the remembered model and profile forecasts per step
	// start, oldest first.
	Forecasts []ScoredForecast
	// Actual is the remembered demand per step start, oldest first.
	Actual []ObservedDemand
	// Errors are the remembered actual − forecast per step start, oldest
	// first: the per-slot bounds' evidence; ErrorsFrom is the first step
	// scored (the first refit with a season of history).
	Errors     []ScoredForecast
	ErrorsFrom time.Time
	// Quantile is the calibrated forecast quantile and MeanDemand the
	// recent mean demand that weighs the calibration's intervals.
	Quantile, MeanDemand float64
	// QuantileMemory is the calibration's memory ln(1 − q), below
	// ln(1 − Quantile) while it has run past the top quantile
	// (planner.Calibration.Carry); 0 when it is ln(1 − Quantile) (a state
	// saved before the field existed reads so too).
	QuantileMemory float64
	// WarmPeak is the largest demand seen while warming up.
	WarmPeak float64
	// Asked is the pool's desired count at each recent change, oldest
	// first: what the calibration takes to have been ready.
	Asked []planner.Step
	// WithinStep is what the controller learned of the demand's variation
	// inside a step; Peaks the largest demand observed per step start,
	// oldest first. A state saved before they existed reads as nothing
	// learned yet.
	WithinStep WithinStepState
	Peaks      []ObservedDemand
	// Backlog is the calibration's estimate of the requests left waiting.
	Backlog float64
}

// WithinStepState is the per-slot histograms of the ratio of an
// observation's demand to its step's mean, and the step being gathered.
type WithinStepState struct {
	// Slots[s] are slot s's weights (nil: none yet): the point mass at a
	// ratio of 1, then the log-spaced bins; LastDay[s] is the day number
	// of its last update.
	Slots   [][]float32
	LastDay []int64
	// Step is the number of the step being gathered and Obs its
	// observations: demand (requests/s) and span (seconds), in pairs.
	Step int64
	Obs  []float64
	// Pooled is the histogram of the deviations from the step's mean in
	// units of the recent mean demand, over every slot, and PooledDay
	// the day of its last update.
	Pooled    []float32
	PooledDay int64
}

// RefitState is a Refit with the forecasts that later refits score.
type RefitState struct {
	Refit
	// ModelMean and ProfileMean are the forecasts for the steps the refit
	// owns (until the next refit).
	ModelMean, ProfileMean []float64
}

// ScoredForecast is the model's and the profile's forecast for the step
// starting at At (NaN: that forecaster did not run), or, in State.Errors,
// their errors.
type ScoredForecast struct {
	At             time.Time
	Model, Profile float64
}

// ObservedDemand is the demand (requests/s) of the step starting at At.
type ObservedDemand struct {
	At  time.Time
	RPS float64
}

// State returns a copy of the controller's memory.
func (c *Controller) State() State {
	st := State{Version: StateVersion, Level: c.level, Reactive: c.reactive,
		Refit:    RefitState{Refit: c.last, ModelMean: slices.Clone(c.last.modelMean), ProfileMean: slices.Clone(c.last.profileMean)},
		Quantile: c.quantile, QuantileMemory: c.lnTail, MeanDemand: c.meanDemand, WarmPeak: c.warmPeak, ErrorsFrom: c.errorsFrom,
		Asked: slices.Clone(c.asked)}
	st.WithinStep = c.within.state()
	st.Backlog = float64(c.backlog)
	c.peaks.each(func(k int64, v float64) {
		st.Peaks = append(st.Peaks, ObservedDemand{At: stepTime(k, c.settings.Step), RPS: v})
	})
	st.Forecasts = c.scored(&c.forecasts)
	st.Errors = c.scored(&c.errors)
	c.actual.each(func(k int64, v float64) {
		st.Actual = append(st.Actual, ObservedDemand{At: stepTime(k, c.settings.Step), RPS: v})
	})
	return st
}

// scored lists a per-step log oldest first.
func (c *Controller) scored(l *stepLog[[2]float64]) []ScoredForecast {
	var out []ScoredForecast
	l.each(func(k int64, f [2]float64) {
		out = append(out, ScoredForecast{At: stepTime(k, c.settings.Step), Model: f[0], Profile: f[1]})
	})
	return out
}

// Restore replaces the controller's memory with st, taken by State from a
// controller of the same pool. A state of another version, or one whose
// forecast grid is not this controller's step, is refused and the
// controller is left as it was: the caller should then start afresh and
// say so.
func (c *Controller) Restore(st State) error {
	if st.Version != StateVersion {
		return fmt.Errorf("controller state version %d, want %d", st.Version, StateVersion)
	}
	if r := st.Refit; !r.At.IsZero() && r.Forecast.Step != 0 && r.Forecast.Step != c.settings.Step {
		return fmt.Errorf("controller state was made on a %v forecast step, the pool now uses forecast.step %v",
			r.Forecast.Step, c.settings.Step)
	}
	c.last = st.Refit.Refit
	c.last.modelMean, c.last.profileMean = slices.Clone(st.Refit.ModelMean), slices.Clone(st.Refit.ProfileMean)
	c.level = st.Level
	c.reactive = st.Reactive
	c.forecasts = c.unscored(st.Forecasts)
	c.errors = c.unscored(st.Errors)
	c.slotPools = slotPoolCache{}
	c.quantile, c.lnTail, c.meanDemand, c.warmPeak, c.errorsFrom = st.Quantile, st.QuantileMemory, st.MeanDemand, st.WarmPeak, st.ErrorsFrom
	c.asked = slices.Clone(st.Asked)
	c.actual = stepLog[float64]{}
	for _, a := range st.Actual {
		c.actual.set(c.step(a.At), a.RPS)
	}
	c.peaks = stepLog[float64]{}
	for _, a := range st.Peaks {
		c.peaks.set(c.step(a.At), a.RPS)
	}
	c.within.restore(st.WithinStep)
	c.backlog = planner.Backlog(st.Backlog)
	return nil
}

func (c *Controller) unscored(list []ScoredForecast) stepLog[[2]float64] {
	var l stepLog[[2]float64]
	for _, f := range list {
		l.set(c.step(f.At), [2]float64{f.Model, f.Profile})
	}
	return l
}

// Encode serialises st with encoding/gob, which keeps NaN.
func (st State) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("encoding controller state: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeState parses what Encode wrote. Corrupt input is an error, never a
// panic.
func DecodeState(data []byte) (st State, err error) {
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return State{}, fmt.Errorf("decoding controller state: %w", err)
	}
	for _, f := range append(slices.Clone(st.Forecasts), st.Errors...) {
		if math.IsInf(f.Model, 0) || math.IsInf(f.Profile, 0) {
			return State{}, fmt.Errorf("decoding controller state: infinite forecast at %s", f.At.Format(time.RFC3339))
		}
	}
	if !(st.Quantile >= 0.5 && st.Quantile < 1) || !(st.MeanDemand >= 0) || math.IsInf(st.MeanDemand, 0) ||
		!(st.WarmPeak >= 0) || math.IsInf(st.WarmPeak, 0) || !(st.QuantileMemory <= 0 && st.QuantileMemory > -100) {
		return State{}, fmt.Errorf("decoding controller state: quantile %v (memory %v), mean demand %v or warm-up peak %v out of range",
			st.Quantile, st.QuantileMemory, st.MeanDemand, st.WarmPeak)
	}
	if err := st.checkLearned(); err != nil {
		return State{}, fmt.Errorf("decoding controller state: %w", err)
	}
	return st, nil
}

// checkLearned refuses a state whose backlog, peaks or within-step
// weights are not finite and non-negative.
func (st State) checkLearned() error {
	if !(st.Backlog >= 0) || math.IsInf(st.Backlog, 0) {
		return fmt.Errorf("backlog %v out of range", st.Backlog)
	}
	for _, p := range st.Peaks {
		if !(p.RPS >= 0) || math.IsInf(p.RPS, 0) {
			return fmt.Errorf("peak demand %v at %s out of range", p.RPS, p.At.Format(time.RFC3339))
		}
	}
	for s, h := range st.WithinStep.Slots {
		for _, v := range h {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("within-step weight %v of slot %d out of range", v, s)
			}
		}
	}
	for _, v := range st.WithinStep.Pooled {
		if !(v >= 0) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("within-step pooled weight %v out of range", v)
		}
	}
	for _, v := range st.WithinStep.Obs {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("within-step observation %v out of range", v)
		}
	}
	return nil
}

// clampClocks takes every clock the controller keeps that is dated after
// now (a state saved before the wall clock was stepped back, or a step back
// while it runs) as set at now: the reactive rules' hold, cooldown and
// return-to-plan clocks and the record of what the pool was asked for. A
// clock in the future would otherwise hold the rules back (no scale-out
// while a cooldown "ends" hours ahead) until the wall clock caught up; at
// now it delays the next action by one hold or cooldown at most.
func (c *Controller) clampClocks(now time.Time) {
	r := &c.reactive
	for _, t := range []*time.Time{&r.HighSince, &r.QueueSince, &r.SLOSince, &r.LowSince,
		&r.LastOut, &r.LastAction, &r.FitsPlanSince} {
		if t.After(now) {
			*t = now
		}
	}
	for i := range c.asked {
		if c.asked[i].At.After(now) {
			c.asked[i].At = now
		}
	}
}
