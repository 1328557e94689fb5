package traceeval

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Trace is one series of the evaluation: a file of the traces folder, read
// through the datasets loaders at a step, and the rolling origins to
// forecast it from.
type Trace struct {
	// ID names the series in reports: the file's stem, the column and the
	// step, e.g. "alibaba_sd_qps:generative_qps_sum@1m".
	ID string
	// File is the base name of the file in the traces folder.
	File string
	// Column is the value column of a CSV file ("" when it has one).
	Column string
	// Arrivals marks a per-request log, counted per Step (the first and
	// last intervals, which are partial, are dropped).
	Arrivals bool
	// Counts marks values that are counts per step: a resampling sums
	// them rather than averaging.
	Counts bool
	// Step is the series' step: 0 for the file's own, or a coarser step
	// to resample to (for Arrivals, the counting interval).
	Step time.Duration
	// Horizon is how far ahead each origin forecasts.
	Horizon time.Duration
	// MinHistory is the history before the first origin.
	MinHistory time.Duration
	// MaxHistory caps the history a forecaster sees at an origin (0: all
	// of it); the control loop keeps 28 days.
	MaxHistory time.Duration
	// Origins is how many origins, evenly spaced from MinHistory to the
	// last full horizon.
	Origins int
}

// DefaultTraces are the series 'forecaster eval traces' scores: every
// recorded demand trace of the shared folder at its own step, and at the
// per-minute and 5-minute resamplings where the trace is finer than that
// and still holds 8 hours of history and 8 origins after resampling.
// Horizons: a day for the hourly and half-hourly traces (the planner's
// schedule), two hours for the traces of under a day at steps of minutes,
// ten minutes for the one-hour Azure logs. The Alibaba latency logs
// (alibaba_sd_inference_ms.csv, alibaba_sd_model_load_ms.csv) describe
// service, not demand, and are left out; pods_reporting is the fleet, not
// its load.
func DefaultTraces() []Trace {
	const day = 24 * time.Hour
	out := []Trace{
		{ID: "nyc_taxi@30m", File: "nyc_taxi.csv", Counts: true,
			Horizon: day, MinHistory: 28 * day, MaxHistory: 28 * day, Origins: 8},
		{ID: "alibaba_sd_requests_hourly@1h", File: "alibaba_sd_requests_hourly.csv", Counts: true,
			Horizon: day, MinHistory: 14 * day, MaxHistory: 28 * day, Origins: 8},
	}
	short := []struct{ file, column, stem string }{
		{"alibaba_sd_qps.csv", "generative_qps_sum", "alibaba_sd_qps:generative"},
		{"alibaba_sd_qps.csv", "api_qps_sum", "alibaba_sd_qps:api"},
		{"alibaba_sd_gpu_util.csv", "mean_gpu_util_pct", "alibaba_sd_gpu_util:mean"},
	}
	for _, s := range short {
		for _, step := range []struct {
			d    time.Duration
			name string
		}{{0, "57s"}, {time.Minute, "1m"}, {5 * time.Minute, "5m"}} {
			out = append(out, Trace{ID: s.stem + "@" + step.name, File: s.file, Column: s.column, Step: step.d,
				Horizon: 2 * time.Hour, MinHistory: 8 * time.Hour, Origins: 8})
		}
	}
	for _, f := range []string{"azure_llm_2023_code", "azure_llm_2023_conv"} {
		out = append(out, Trace{ID: f + "@1m", File: f + ".csv", Arrivals: true, Counts: true, Step: time.Minute,
			Horizon: 10 * time.Minute, MinHistory: 20 * time.Minute, Origins: 8})
	}
	return out
}

// Load reads the trace from the traces folder dir at its step.
func (tr Trace) Load(dir string) (datasets.Series, error) {
	path := filepath.Join(dir, tr.File)
	if tr.Arrivals {
		s, err := datasets.LoadArrivals(path, datasets.ArrivalOptions{Step: tr.Step})
		if err != nil {
			return s, err
		}
		if len(s.Values) < 3 {
			return s, fmt.Errorf("trace %s: %d intervals, too few", tr.ID, len(s.Values))
		}
		// The first and last intervals are partial.
		s.Start = s.Time(1)
		s.Values = s.Values[1 : len(s.Values)-1]
		return s, nil
	}
	s, err := datasets.LoadCSV(path, datasets.CSVOptions{ValueColumn: tr.Column, Counts: tr.Counts})
	if err != nil {
		return s, err
	}
	if tr.Step > 0 && tr.Step != s.Step {
		agg := datasets.AggregateMean
		if tr.Counts {
			agg = datasets.AggregateSum
		}
		return datasets.Resample(s, tr.Step, agg)
	}
	return s, nil
}

// Window is one rolling origin of a trace: the history a forecaster sees
// and the future it is scored on.
type Window struct {
	// Series is the Trace's ID.
	Series string
	// Origin is the index in the series of the first forecast step, and
	// Time its start.
	Origin int
	Time   time.Time
	// Step is the series' step, so a forecaster can compute its clock
	// periods.
	Step time.Duration
	// Half is 1 for the earlier half of the trace's origins (on which
	// constants may be tuned) and 2 for the later, held-out half.
	Half int
	// Period is the seasonal naive period in steps: a day when the
	// history holds two of them, else 1 (naive).
	Period int
	// Periods are the clock's periods (a day, a week, in steps) of which
	// the history holds two cycles: what R is told as msts periods.
	Periods []int
	// Train is the history, oldest first, gaps filled by linear
	// interpolation (seasonal.Interpolate; R is given the filled values,
	// so both sides forecast the same history); Test the next Horizon values, NaN where the trace
	// has none (not scored).
	Train, Test []float64
}

// Windows loads each trace from dir and cuts it into its rolling origins.
func Windows(dir string, traces []Trace) ([]Window, error) {
	var out []Window
	for _, tr := range traces {
		s, err := tr.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", tr.ID, err)
		}
		ws, err := tr.windows(s)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return out, nil
}

// windows cuts s into tr's origins.
func (tr Trace) windows(s datasets.Series) ([]Window, error) {
	steps := func(d time.Duration) int { return int(d / s.Step) }
	h, minHist, maxHist := steps(tr.Horizon), steps(tr.MinHistory), steps(tr.MaxHistory)
	n := len(s.Values)
	if h < 1 || tr.Origins < 2 || minHist < 2 || n-h-minHist < tr.Origins-1 {
		return nil, fmt.Errorf("trace %s: %d steps of %v cannot hold %d distinct origins with %v of history and %v ahead",
			tr.ID, n, s.Step, tr.Origins, tr.MinHistory, tr.Horizon)
	}
	clock := seasonal.ClockPeriods(s.Step)
	var out []Window
	for k := range tr.Origins {
		o := minHist + int(math.Round(float64(k)*float64(n-h-minHist)/float64(tr.Origins-1)))
		lo := 0
		if maxHist > 0 {
			lo = max(0, o-maxHist)
		}
		w := Window{Series: tr.ID, Origin: o, Time: s.Time(o), Step: s.Step, Half: 1, Period: 1,
			Train: seasonal.Interpolate(s.Values[lo:o]), Test: append([]float64(nil), s.Values[o:o+h]...)}
		if 2*k >= tr.Origins {
			w.Half = 2
		}
		for _, p := range clock {
			if len(w.Train) >= 2*p {
				w.Periods = append(w.Periods, p)
			}
		}
		if len(w.Periods) > 0 {
			w.Period = w.Periods[0]
		}
		if math.IsNaN(w.Train[0]) {
			return nil, fmt.Errorf("trace %s: origin %d has no recorded value in its history", tr.ID, o)
		}
		out = append(out, w)
	}
	return out, nil
}
