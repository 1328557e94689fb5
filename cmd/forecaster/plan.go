package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/seasonal"
	"github.com/prewarm/prewarm/planner"
)

// planReport is the --format json document of 'forecaster plan'.
type planReport struct {
	Trace    string    `json:"trace"`
	From     time.Time `json:"from"`
	Horizon  string    `json:"horizon"`
	Forecast string    `json:"forecast"`
	Gate     string    `json:"gate"`
	Steps    []struct {
		At      time.Time `json:"at"`
		Desired int       `json:"desired"`
		Reason  string    `json:"reason"`
	} `json:"schedule"`
	ExpectedRequests      float64 `json:"expected_requests"`
	GPUHours              float64 `json:"gpu_hours"`
	OnDemandCost          float64 `json:"on_demand_cost"`
	ReservedBaseline      int     `json:"reserved_baseline"`
	ReservedCost          float64 `json:"reserved_cost"`
	BurstCost             float64 `json:"burst_cost"`
	BaselineCost          float64 `json:"baseline_plus_burst_cost"`
	CostPer1000           float64 `json:"cost_per_1000_requests"`
	BaselineCostPer1000   float64 `json:"baseline_cost_per_1000_requests"`
	OnDemandPricePerHour  float64 `json:"on_demand_price_per_hour"`
	ReservedPricePerHour  float64 `json:"reserved_price_per_hour"`
	RequestsPerInstanceS  float64 `json:"gpu_rps"`
	ForecastQuantile      float64 `json:"forecast_quantile"`
	BootDelay             string  `json:"boot"`
	ForecastStep          string  `json:"forecast_step"`
	HistoryStepsForecast  int     `json:"history_steps"`
	ReservedBaselineIsMin bool    `json:"reserved_baseline_is_plan_minimum"`
}

// runPlan implements 'forecaster plan'.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", "[--input FILE] [--value-column C] [--counts] [--step 1m] --gpu-rps R [--boot 10m] [--horizon 24h]\n"+
		"       [--price 2.5] [--reserved-price 1.6] [--reserved N] [--schedule FILE] [--format table|json]",
		"Forecast the demand after the end of the series and print the pre-warm capacity schedule\n"+
			"(time, desired instances, reason), the expected GPU-hours and cost, all on demand and as a\n"+
			"reserved baseline plus on-demand burst, and the cost per 1,000 requests. The forecast is\n"+
			"gated like the hybrid policy: when the model's last week is worse than seasonal naive it\n"+
			"steps back to the seasonal profile, and when that is worse too, there is no forecast plan.", stderr)
	var cf capacityFlags
	cf.register(fs)
	horizon := fs.Duration("horizon", 24*time.Hour, "how far ahead to plan")
	history := fs.Duration("history", 28*24*time.Hour, "most recent history the forecast uses")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case *format != "table" && *format != "json":
		return usageErrorf("--format %q: want table or json", *format)
	case *horizon <= 0:
		return usageErrorf("--horizon %v: must be positive", *horizon)
	}
	tr, err := cf.load(stderr)
	if err != nil {
		return err
	}
	cfg, err := cf.plannerConfig(tr)
	if err != nil {
		return err
	}
	// Forecast on steps of at least 30 minutes, sized for the busiest
	// part of each (as the backtest does).
	s := datasets.Series{Name: tr.Name, Start: tr.Start, Step: tr.Step, Values: tr.RPS}
	fstep := tr.Step
	for fstep < 30*time.Minute {
		fstep += tr.Step
	}
	if fstep != tr.Step {
		if s, err = datasets.Resample(s, fstep, datasets.AggregateMax); err != nil {
			return err
		}
	}
	hist := s.Values[max(0, len(s.Values)-int(*history/fstep)):]
	now := s.End()
	h := int((*horizon + fstep - 1) / fstep)
	day, week := int(24*time.Hour/fstep), int(7*24*time.Hour/fstep)
	periods := []int{}
	naive := 0
	for _, p := range []int{day, week} {
		if p > 1 && len(hist) >= cfg.Gating.MinSeasons*p {
			periods = append(periods, p)
			naive = p
		}
	}
	profilePeriod := 0
	for _, p := range []int{day, week} {
		if p > 1 && len(hist) >= p {
			profilePeriod = p
		}
	}
	modelF := auto.New(auto.Config{Periods: periods})
	var profileF model.Forecaster
	if profilePeriod > 0 {
		profileF = seasonal.Profile{Period: profilePeriod, Cycles: 4}
	}
	level := cfg.ForecastLevel()
	in, err := planner.Assess(hist, day, naive, int(cfg.Gating.Window/fstep), day, level, modelF, profileF)
	if err != nil {
		return fmt.Errorf("assessing the forecast: %w", err)
	}
	gate := cfg.Gate(in)
	rep := planReport{Trace: tr.Name, From: now, Horizon: horizon.String(), Gate: gate.Level + ": " + gate.Reason,
		OnDemandPricePerHour: cfg.Prices.OnDemandPerHour, ReservedPricePerHour: cfg.Prices.ReservedPerHour,
		RequestsPerInstanceS: cfg.Fleet.RPS(), ForecastQuantile: cfg.ForecastQuantile, BootDelay: cfg.Fleet.BootDelay.String(),
		ForecastStep: fstep.String(), HistoryStepsForecast: len(hist)}
	var fc model.Forecast
	switch gate.Level {
	case planner.GateModel:
		fc, err = modelF.Forecast(hist, h, level)
	case planner.GateProfile:
		fc, err = profileF.Forecast(hist, h, level)
	default:
		// No trusted forecast: plan the floors and min instances only.
		fc = model.Forecast{Method: "none", Mean: make([]float64, h), Upper: make([]float64, h), Lower: make([]float64, h), Level: level}
	}
	if err != nil {
		return fmt.Errorf("forecast: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep.Forecast = fc.Method
	if fc.Fallback != "" {
		rep.Forecast += " (fallback: " + fc.Fallback + ")"
	}
	df := planner.DemandForecast{Start: now, Step: fstep, Forecast: fc}
	sched, err := planner.Plan(now, df, cfg)
	if err != nil {
		return err
	}
	for _, v := range fc.Mean {
		if v > 0 && !math.IsNaN(v) {
			rep.ExpectedRequests += v * fstep.Seconds()
		}
	}
	end := df.End()
	onDemand := planner.Prices{OnDemandPerHour: cfg.Prices.OnDemandPerHour}.UsageOf(sched, end)
	baseline := cfg.Prices
	if baseline.ReservedInstances == 0 {
		// Suggest the plan's own minimum as the committed baseline.
		baseline.ReservedInstances = math.MaxInt
		for _, st := range sched {
			baseline.ReservedInstances = min(baseline.ReservedInstances, st.Desired)
		}
		rep.ReservedBaselineIsMin = true
	}
	withBaseline := baseline.UsageOf(sched, end)
	rep.GPUHours = onDemand.GPUHours
	rep.OnDemandCost = onDemand.Cost
	rep.ReservedBaseline = baseline.ReservedInstances
	rep.ReservedCost, rep.BurstCost, rep.BaselineCost = withBaseline.ReservedCost, withBaseline.BurstCost, withBaseline.Cost
	if rep.ExpectedRequests > 0 {
		rep.CostPer1000 = onDemand.Cost / rep.ExpectedRequests * 1000
		rep.BaselineCostPer1000 = withBaseline.Cost / rep.ExpectedRequests * 1000
	}
	for _, st := range sched {
		rep.Steps = append(rep.Steps, struct {
			At      time.Time `json:"at"`
			Desired int       `json:"desired"`
			Reason  string    `json:"reason"`
		}{st.At, st.Desired, st.Reason})
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writePlanTable(stdout, rep)
}

func writePlanTable(w io.Writer, r planReport) error {
	fmt.Fprintf(w, "Capacity plan for %s: %s from %s (UTC)\n", r.Trace, r.Horizon, r.From.UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(w, "forecast: %s, p%g on %s steps from %d steps of history\n", r.Forecast, 100*r.ForecastQuantile, r.ForecastStep, r.HistoryStepsForecast)
	fmt.Fprintf(w, "gate:     %s\n", r.Gate)
	fmt.Fprintf(w, "fleet:    %.4g req/s per instance, boot %s (instances are asked for that much ahead)\n\n", r.RequestsPerInstanceS, r.BootDelay)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "time (UTC)\tdesired\treason")
	for _, s := range r.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", s.At.UTC().Format("2006-01-02 15:04"), s.Desired, s.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	baseline := fmt.Sprintf("reserved baseline of %d", r.ReservedBaseline)
	if r.ReservedBaselineIsMin {
		baseline += " (the plan's minimum)"
	}
	fmt.Fprintf(w, "\nexpected requests:  %.0f\n", r.ExpectedRequests)
	fmt.Fprintf(w, "GPU-hours:          %.1f\n", r.GPUHours)
	fmt.Fprintf(w, "all on demand:      %.2f at %.2f/h (%.4f per 1,000 requests)\n", r.OnDemandCost, r.OnDemandPricePerHour, r.CostPer1000)
	fmt.Fprintf(w, "%s at %.2f/h + on-demand burst: %.2f + %.2f = %.2f (%.4f per 1,000 requests)\n", baseline,
		r.ReservedPricePerHour, r.ReservedCost, r.BurstCost, r.BaselineCost, r.BaselineCostPer1000)
	return nil
}
