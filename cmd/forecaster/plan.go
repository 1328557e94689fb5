package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/report"
)

// planJSON is the --format json document of 'forecaster plan': the
// report's plan section (package report) with the purchase advice.
type planJSON struct {
	Trace    string    `json:"trace"`
	From     time.Time `json:"from"`
	Horizon  string    `json:"horizon"`
	Forecast string    `json:"forecast"`
	// Gate is the controller's verdict at the plan's refit, "level: reason".
	Gate string `json:"gate"`
	// Schedule holds the decisions that change the desired count; Hours
	// the most asked for in each hour.
	Schedule planner.Schedule `json:"schedule"`
	Hours    []report.Hour    `json:"hours"`

	// Currency is the prices' code; PlaceholderPrices is true while they
	// are the defaults (examples, not anyone's bill).
	Currency          string `json:"currency"`
	PlaceholderPrices bool   `json:"placeholder_prices"`

	ExpectedRequests float64 `json:"expected_requests"`
	GPUHours         float64 `json:"gpu_hours"`
	ExpectedGPUHours float64 `json:"expected_gpu_hours"`
	OnDemandCost     float64 `json:"on_demand_cost"`
	CostPer1000      float64 `json:"cost_per_1000_requests"`
	// ReservedBaseline is the advice (report.Reserved.Recommended);
	// ReservedCurrent today's --reserved.
	ReservedBaseline    int     `json:"reserved_baseline"`
	ReservedCurrent     int     `json:"reserved_current"`
	ReservedBusyShare   float64 `json:"reserved_busy_share"`
	BreakEvenShare      float64 `json:"break_even_share"`
	ReservedCost        float64 `json:"reserved_cost"`
	BurstCost           float64 `json:"burst_cost"`
	BaselineCost        float64 `json:"baseline_plus_burst_cost"`
	BaselineCostPer1000 float64 `json:"baseline_cost_per_1000_requests"`
	SpotLimit           int     `json:"spot_limit"`
	SpotGPUHours        float64 `json:"spot_gpu_hours"`
	OnDemandPricePerH   float64 `json:"on_demand_price_per_hour"`
	ReservedPricePerH   float64 `json:"reserved_price_per_hour"`
	SpotPricePerH       float64 `json:"spot_price_per_hour"`
	GPURPS              float64 `json:"gpu_rps"`
	ForecastQuantile    float64 `json:"forecast_quantile"`
	BootDelay           string  `json:"boot"`
	ForecastStep        string  `json:"forecast_step"`
	History             string  `json:"history"`
	WarmUp              string  `json:"warm_up"`
	Peak                int     `json:"peak"`
	Max                 int     `json:"max"`
	SLOPeak             int     `json:"slo_peak"`

	Risks []report.Risk `json:"risks"`
}

// runPlan implements 'forecaster plan': the plan section of 'forecaster
// report' as a table, from the same controller serve runs.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("plan", "[--input FILE] [--counts] --gpu-rps R [FLAGS] | --config FILE --pool NAME [--store SPEC]\n"+
		"       [--horizon 24h] [--history 28d] [--warm-up 14d] [--format table|json]",
		"Forecast the demand after the end of the series and print the pre-warm capacity schedule hour by\n"+
			"hour (time, desired instances, reason), the expected GPU-hours and cost, all on demand and with the\n"+
			"reserved baseline 'forecaster report' advises plus on-demand/spot burst, and the cost per 1,000\n"+
			"requests. The schedule is the one 'forecaster serve' would make for the pool: --warm-up of history\n"+
			"is replayed through it first (a refit every forecast.refit_every, a decision a minute), so its gate\n"+
			"has scored its own forecasts against seasonal naive; --warm-up 0 is a cold start, serve's first\n"+
			"refit. 'forecaster report' gives the same plan with charts, the backtest and the risks.", stderr)
	var cf capacityFlags
	cf.register(fs)
	var rf reportFlags
	rf.register(fs, 24*time.Hour)
	var history time.Duration
	fs.Var(newSpanFlag(&history, 28*24*time.Hour, time.Hour, 366*24*time.Hour), "history",
		"most recent history each refit reads, as the pool's forecast.history (1h to 366d)")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected arguments %q", fs.Args())
	case *format != "table" && *format != "json":
		return usageErrorf("--format %q: want table or json", *format)
	}
	in, err := rf.input(ctx, fs, &cf, 0, stderr)
	if err != nil {
		return err
	}
	if rf.config() == "" || fs.Changed("history") {
		in.Backtest.Forecast.History = history
	}
	if h := in.Backtest.Forecast.History; h > 0 && h < 2*max(in.Backtest.Forecast.Step, in.Trace.Step) {
		return usageErrorf("--history %v: must cover at least two forecast steps", formatSpan(h))
	}
	in.PlanOnly = true
	rep, err := report.Build(ctx, in)
	if err != nil {
		return err
	}
	out := newPlanJSON(rep)
	if *format == "json" {
		return printJSON(stdout, out)
	}
	return writePlanTable(stdout, out)
}

func newPlanJSON(rep *report.Report) planJSON {
	s, p, r, c := rep.Settings, rep.Plan, rep.Reserved, rep.Cost
	return planJSON{Trace: rep.Title, From: p.Start, Horizon: formatSpan(p.End.Sub(p.Start)), Forecast: rep.Forecast.Method,
		Gate: rep.Demand.Gate.Level + ": " + rep.Demand.Gate.Reason, Schedule: p.Changes, Hours: p.Hours,
		ExpectedRequests: p.ExpectedRequests, GPUHours: p.GPUHours, ExpectedGPUHours: c.ExpectedGPUHours,
		OnDemandCost: p.OnDemandCost, CostPer1000: p.CostPer1kRequests,
		ReservedBaseline: r.Recommended, ReservedCurrent: r.Current, ReservedBusyShare: r.BusyShare, BreakEvenShare: r.BreakEven,
		ReservedCost: c.ReservedCost, BurstCost: c.BurstCost, BaselineCost: c.Recommended, BaselineCostPer1000: c.RecommendedPer1k,
		SpotLimit: rep.Burst.SpotLimit, SpotGPUHours: rep.Burst.SpotGPUHours,
		OnDemandPricePerH: s.Prices.OnDemandPerHour, ReservedPricePerH: s.Prices.ReservedPerHour, SpotPricePerH: s.Prices.SpotPerHour,
		GPURPS: s.GPURPS, ForecastQuantile: rep.Demand.ForecastQuantile, BootDelay: time.Duration(s.BootDelay).String(),
		ForecastStep: time.Duration(s.ForecastStep).String(), History: formatSpan(time.Duration(s.History)),
		WarmUp: formatSpan(time.Duration(s.WarmUp)), Peak: p.Peak, Max: rep.Capacity.Max, SLOPeak: rep.Capacity.SLOPeak,
		Currency: s.Prices.Currency, PlaceholderPrices: s.Prices.Placeholder, Risks: rep.Risks}
}

func writePlanTable(w io.Writer, r planJSON) error {
	fmt.Fprintf(w, "Capacity plan for %s: %s from %s (UTC)\n", r.Trace, r.Horizon, r.From.UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(w, "forecast: %s, sized at p%.3g on %s steps from %s of history; %s of it replayed through the controller\n",
		r.Forecast, 100*r.ForecastQuantile, r.ForecastStep, r.History, r.WarmUp)
	fmt.Fprintf(w, "gate:     %s\n", r.Gate)
	fmt.Fprintf(w, "fleet:    %.4g req/s per instance, boot %s (instances are asked for that much ahead)\n\n", r.GPURPS, r.BootDelay)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "hour (UTC)\tdesired\tneed at mean\treason")
	for _, h := range r.Hours {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", h.Start.UTC().Format("2006-01-02 15:04"), h.Desired, h.NeedMean, h.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nexpected requests:  %.0f\n", r.ExpectedRequests)
	fmt.Fprintf(w, "GPU-hours:          %.1f as planned, %.1f expected with demand across its band\n", r.GPUHours, r.ExpectedGPUHours)
	fmt.Fprintf(w, "peak:               %s as planned (the SLO at the top of the 95%% band needs %d), max %d\n",
		plural(r.Peak, "instance"), r.SLOPeak, r.Max)
	money := func(v float64) string { return fmt.Sprintf("%.2f %s", v, r.Currency) }
	if r.PlaceholderPrices {
		money = func(v float64) string { return fmt.Sprintf("%.2f %s†", v, r.Currency) }
	}
	fmt.Fprintf(w, "all on demand:      %s at %s an hour (%s per 1,000 requests)\n", money(r.OnDemandCost), money(r.OnDemandPricePerH), money(r.CostPer1000))
	fmt.Fprintf(w, "reserved baseline:  %d (needed %.0f%% of the hours; a reservation pays above %.0f%%; today %d)\n",
		r.ReservedBaseline, 100*r.ReservedBusyShare, 100*r.BreakEvenShare, r.ReservedCurrent)
	fmt.Fprintf(w, "with the baseline:  %s reserved at %s an hour + %s burst (up to %d on spot) = %s (%s per 1,000 requests)\n",
		money(r.ReservedCost), money(r.ReservedPricePerH), money(r.BurstCost), r.SpotLimit, money(r.BaselineCost), money(r.BaselineCostPer1000))
	if r.PlaceholderPrices {
		fmt.Fprintln(w, "† at the placeholder prices: set prices.on_demand_per_hour, prices.reserved_per_hour and prices.spot_per_hour (or --price, --reserved-price, --spot-price)")
	}
	for _, risk := range r.Risks {
		fmt.Fprintf(w, "%-20s%s\n", "risk ("+risk.Severity+"):", risk.Title)
	}
	return nil
}
