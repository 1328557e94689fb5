package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// PlanSummary is the --format json document of 'forecaster plan': the
// report's plan section with the purchase advice, and what WritePlanTable
// prints.
type PlanSummary struct {
	Trace    string    `json:"trace"`
	From     time.Time `json:"from"`
	Horizon  string    `json:"horizon"`
	Forecast string    `json:"forecast"`
	// Gate is the controller's verdict at the plan's refit, "level: reason".
	Gate string `json:"gate"`
	// Schedule holds the decisions that change the desired count; Hours
	// the most asked for in each hour.
	Schedule planner.Schedule `json:"schedule"`
	Hours    []Hour           `json:"hours"`

	// Currency is the prices' code; PlaceholderPrices is true while they
	// are the defaults (examples, not anyone's bill).
	Currency          string `json:"currency"`
	PlaceholderPrices bool   `json:"placeholder_prices"`

	ExpectedRequests float64 `json:"expected_requests"`
	GPUHours         float64 `json:"gpu_hours"`
	ExpectedGPUHours float64 `json:"expected_gpu_hours"`
	OnDemandCost     float64 `json:"on_demand_cost"`
	CostPer1000      float64 `json:"cost_per_1000_requests"`
	// ReservedBaseline is the advice (Reserved.Recommended);
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

	Risks []Risk `json:"risks"`
}

// NewPlanSummary is the plan section of rep with its purchase advice.
func NewPlanSummary(rep *Report) PlanSummary {
	s, p, r, c := rep.Settings, rep.Plan, rep.Reserved, rep.Cost
	return PlanSummary{Trace: rep.Title, From: p.Start, Horizon: poolspec.FormatSpan(p.End.Sub(p.Start)), Forecast: rep.Forecast.Method,
		Gate: rep.Demand.Gate.Level + ": " + rep.Demand.Gate.Reason, Schedule: p.Changes, Hours: p.Hours,
		ExpectedRequests: p.ExpectedRequests, GPUHours: p.GPUHours, ExpectedGPUHours: c.ExpectedGPUHours,
		OnDemandCost: p.OnDemandCost, CostPer1000: p.CostPer1kRequests,
		ReservedBaseline: r.Recommended, ReservedCurrent: r.Current, ReservedBusyShare: r.BusyShare, BreakEvenShare: r.BreakEven,
		ReservedCost: c.ReservedCost, BurstCost: c.BurstCost, BaselineCost: c.Recommended, BaselineCostPer1000: c.RecommendedPer1k,
		SpotLimit: rep.Burst.SpotLimit, SpotGPUHours: rep.Burst.SpotGPUHours,
		OnDemandPricePerH: s.Prices.OnDemandPerHour, ReservedPricePerH: s.Prices.ReservedPerHour, SpotPricePerH: s.Prices.SpotPerHour,
		GPURPS: s.GPURPS, ForecastQuantile: rep.Demand.ForecastQuantile, BootDelay: time.Duration(s.BootDelay).String(),
		ForecastStep: time.Duration(s.ForecastStep).String(), History: poolspec.FormatSpan(time.Duration(s.History)),
		WarmUp: poolspec.FormatSpan(time.Duration(s.WarmUp)), Peak: p.Peak, Max: rep.Capacity.Max, SLOPeak: rep.Capacity.SLOPeak,
		Currency: s.Prices.Currency, PlaceholderPrices: s.Prices.Placeholder, Risks: rep.Risks}
}

// WritePlanTable prints r as the table of 'forecaster plan': the
// schedule hour by hour, the GPU-hours, the costs and the risks.
func WritePlanTable(w io.Writer, r PlanSummary) error {
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

// plural writes a count with its noun: "1 risk", "2 risks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteFile renders rep in format to stdout, or, with path, to that file,
// and then prints to stdout the one line that sums it up: where it went,
// what to reserve and burst, the cost and the count of risks (title and
// horizon are the report's).
func WriteFile(stdout io.Writer, path, format string, rep *Report, title string, horizon time.Duration) error {
	var buf bytes.Buffer
	if err := Render(&buf, rep, format); err != nil {
		return err
	}
	if path == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprint(stdout, summaryLine(path, format, rep, title, horizon))
	return nil
}

// summaryLine is the line 'forecaster report --out PATH' prints: where the
// report of format went, what to reserve and burst, its cost in its
// currency (marked at placeholder prices) and the count of risks.
func summaryLine(path, format string, rep *Report, title string, horizon time.Duration) string {
	cost := moneyIn(rep.Cost.Recommended, rep.Settings.Prices.Currency)
	if rep.Settings.Prices.Placeholder {
		cost += " at placeholder prices"
	}
	return fmt.Sprintf("%s: %s report of %s for %s: reserve %d, burst up to +%d, cost %s (%.0f%% below all on demand), %s\n",
		path, format, title, nextSpan(Duration(horizon)), rep.Reserved.Recommended, rep.Plan.Peak-rep.Reserved.Recommended,
		cost, 100*rep.Cost.SavingShare, plural(len(rep.Risks), "risk"))
}
