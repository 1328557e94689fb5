package backtest

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// refit is what the forecasting policies know from one walk-forward refit:
// plans made at At from the demand strictly before At.
type refit struct {
	At time.Time
	// ModelPlan and ProfilePlan are nil when there was too little history.
	ModelPlan, ProfilePlan planner.Schedule
	// Model and Profile name the methods that ran (with any fallback).
	Model, Profile string
	// Gate says which plan the hybrid policy trusts.
	Gate planner.GateResult

	// modelMean and profileMean are the forecasts for the buckets this
	// refit owns (until the next refit), scored at later refits.
	modelMean, profileMean []float64
}

// forecaster runs the walk-forward refits of one trace.
type forecaster struct {
	cfg      Config
	trace    Trace
	buckets  []float64 // demand per forecast step, aggregated
	perStep  int       // trace steps per forecast step
	perRefit int       // forecast steps per refit
	periods  []int     // seasonal periods in forecast steps, shortest first
	horizon  int
}

func newForecaster(cfg Config, t Trace) *forecaster {
	f := &forecaster{cfg: cfg, trace: t}
	fo := cfg.Forecast
	f.perStep = int(fo.Step / t.Step)
	f.perRefit = int(fo.RefitEvery / fo.Step)
	nb := (len(t.RPS) + f.perStep - 1) / f.perStep
	f.buckets = make([]float64, nb)
	for b := range f.buckets {
		v, seen := 0.0, 0
		for _, x := range t.RPS[b*f.perStep : min((b+1)*f.perStep, len(t.RPS))] {
			if math.IsNaN(x) {
				continue
			}
			if fo.Aggregate == "mean" {
				v += x
			} else {
				v = math.Max(v, x)
			}
			seen++
		}
		switch {
		case seen == 0:
			v = math.NaN()
		case fo.Aggregate == "mean":
			v /= float64(seen)
		}
		f.buckets[b] = v
	}
	for _, p := range fo.Periods {
		f.periods = append(f.periods, int(p/fo.Step))
	}
	sort.Ints(f.periods)
	lead := cfg.Planner.Fleet.BootDelay
	f.horizon = f.perRefit + int((lead+fo.Step-1)/fo.Step) + 1
	f.horizon = max(f.horizon, int(fo.Horizon/fo.Step))
	return f
}

// run computes every refit: the forecasts in parallel (each sees only the
// buckets before its own time), then the gates in time order.
func (f *forecaster) run(ctx context.Context) ([]refit, error) {
	n := (len(f.buckets) + f.perRefit - 1) / f.perRefit
	refits := make([]refit, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				refits[j], errs[j] = f.refitAt(j)
			}
		}()
	}
	for j := 0; j < n; j++ {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	f.gate(refits)
	return refits, nil
}

// refitAt forecasts from refit j's point of view: history is the buckets
// before bucket j·perRefit, nothing later.
func (f *forecaster) refitAt(j int) (refit, error) {
	fo := f.cfg.Forecast
	k := j * f.perRefit
	r := refit{At: f.trace.Start.Add(time.Duration(k) * fo.Step)}
	window := int(fo.History / fo.Step)
	hist := f.buckets[max(0, k-window):k]
	if !hasFinite(hist) {
		return r, nil
	}
	df := planner.DemandForecast{Start: r.At, Step: fo.Step}
	level := f.cfg.Planner.ForecastLevel()

	var trusted []int
	for _, p := range f.periods {
		if k >= f.cfg.Planner.Gating.MinSeasons*p {
			trusted = append(trusted, p)
		}
	}
	if trusted == nil {
		trusted = []int{}
	}
	fc, err := fo.NewModel(trusted).Forecast(hist, f.horizon, level)
	if err != nil {
		return r, fmt.Errorf("refit at %s: model: %w", r.At.Format(time.RFC3339), err)
	}
	df.Forecast = fc
	if r.ModelPlan, err = planner.ForecastPlan(r.At, df, f.cfg.Planner); err != nil {
		return r, fmt.Errorf("refit at %s: %w", r.At.Format(time.RFC3339), err)
	}
	r.Model = methodName(fc.Method, fc.Fallback)
	r.modelMean = fc.Mean[:min(f.perRefit, len(fc.Mean))]

	if p := f.profilePeriod(k); p > 0 {
		fc, err := fo.NewProfile(p).Forecast(hist, f.horizon, level)
		if err != nil {
			return r, fmt.Errorf("refit at %s: profile: %w", r.At.Format(time.RFC3339), err)
		}
		df.Forecast = fc
		if r.ProfilePlan, err = planner.ForecastPlan(r.At, df, f.cfg.Planner); err != nil {
			return r, fmt.Errorf("refit at %s: %w", r.At.Format(time.RFC3339), err)
		}
		r.Profile = methodName(fc.Method, fc.Fallback)
		r.profileMean = fc.Mean[:min(f.perRefit, len(fc.Mean))]
	}
	return r, nil
}

// profilePeriod is the longest period with a whole cycle of history before
// bucket k (within the history window), or 0.
func (f *forecaster) profilePeriod(k int) int {
	window := int(f.cfg.Forecast.History / f.cfg.Forecast.Step)
	best := 0
	for _, p := range f.periods {
		if k >= p && window >= p {
			best = p
		}
	}
	return best
}

// gate scores each refit's forecasts once their buckets are past and lets
// planner.Gate decide, at every refit, which plan the hybrid trusts. The
// errors are mean absolute errors over the Gating.Window before the refit,
// against seasonal naive at the longest period the history covers.
func (f *forecaster) gate(refits []refit) {
	nb := len(f.buckets)
	model := make([]float64, nb)
	profile := make([]float64, nb)
	for i := range model {
		model[i], profile[i] = math.NaN(), math.NaN()
	}
	for j, r := range refits {
		k := j * f.perRefit
		for i, v := range r.modelMean {
			if k+i < nb {
				model[k+i] = v
			}
		}
		for i, v := range r.profileMean {
			if k+i < nb {
				profile[k+i] = v
			}
		}
	}
	window := max(1, int(f.cfg.Planner.Gating.Window/f.cfg.Forecast.Step))
	shortest := 1
	if len(f.periods) > 0 {
		shortest = f.periods[0]
	}
	for j := range refits {
		k := j * f.perRefit
		in := planner.GateInput{HistorySteps: k, Season: shortest}
		in.ModelError, in.ProfileError, in.NaiveError = f.recentErrors(k, window, model, profile)
		refits[j].Gate = f.cfg.Planner.Gate(in)
	}
}

// recentErrors returns the MAEs of the model, the profile and seasonal
// naive over the buckets [k−window, k) where all of them and the actual
// value are known; NaN when there are none. The model's error is NaN
// (not measured) where only the profile ran yet.
func (f *forecaster) recentErrors(k, window int, model, profile []float64) (mErr, pErr, nErr float64) {
	naivePeriod := 0
	for _, p := range f.periods {
		if k >= 2*p {
			naivePeriod = p
		}
	}
	if naivePeriod == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var sm, sp, sn, n float64
	var spOnly, snOnly, nOnly float64
	for i := max(naivePeriod, k-window); i < k; i++ {
		y, naive := f.buckets[i], f.buckets[i-naivePeriod]
		if math.IsNaN(y) || math.IsNaN(naive) || math.IsNaN(profile[i]) {
			continue
		}
		spOnly += math.Abs(y - profile[i])
		snOnly += math.Abs(y - naive)
		nOnly++
		if math.IsNaN(model[i]) {
			continue
		}
		sm += math.Abs(y - model[i])
		sp += math.Abs(y - profile[i])
		sn += math.Abs(y - naive)
		n++
	}
	switch {
	case n > 0:
		return sm / n, sp / n, sn / n
	case nOnly > 0:
		return math.NaN(), spOnly / nOnly, snOnly / nOnly
	}
	return math.NaN(), math.NaN(), math.NaN()
}

func hasFinite(x []float64) bool {
	for _, v := range x {
		if !math.IsNaN(v) {
			return true
		}
	}
	return false
}

func methodName(method, fallback string) string {
	if fallback != "" {
		return method + " (fallback: " + fallback + ")"
	}
	return method
}
