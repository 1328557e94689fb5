package backtest

import (
	"context"
	"fmt"
	"io"

	"github.com/prewarm/prewarm/planner"
)

// Document is the --format json document of 'forecaster backtest': each
// policy's figures ("policies") and the frontier ("frontier"), plus the
// settings that produced them. Config and Pool are --config and --pool,
// empty when the flags gave the fleet.
type Document struct {
	Trace         string          `json:"trace"`
	Config        string          `json:"config,omitempty"`
	Pool          string          `json:"pool,omitempty"`
	Static        int             `json:"static_instances"`
	Flat          int             `json:"flat_instances,omitempty"`
	GPURPS        float64         `json:"gpu_rps"`
	ServiceTimeS  float64         `json:"service_time_s"`
	Slots         int             `json:"slots"`
	SLOTarget     float64         `json:"slo_target"`
	TraceRequests float64         `json:"trace_requests"`
	Tick          string          `json:"tick"`
	ForecastStep  string          `json:"forecast_step"`
	Refit         string          `json:"refit_every"`
	Policies      []Result        `json:"policies"`
	Frontier      []FrontierPoint `json:"frontier,omitempty"`
}

// NewDocument is the document of rep and front, run with cfg; config and
// pool name the pool spec it came from, if any.
func NewDocument(rep Report, front Frontier, cfg Config, config, pool string) Document {
	f := cfg.Planner.Fleet
	return Document{Trace: rep.Trace, Config: config, Pool: pool,
		Static: rep.Static, Flat: rep.Flat, GPURPS: f.RPS(),
		ServiceTimeS: f.ServiceTime.Seconds(), Slots: f.Slots, SLOTarget: cfg.Planner.SLO.Quantile,
		TraceRequests: rep.TraceRequests, Tick: rep.Tick.String(), ForecastStep: rep.ForecastStep.String(),
		Refit: rep.RefitEvery.String(), Policies: rep.Policies, Frontier: front.Points}
}

// Compare runs the policies through tr (Run) or, with frontier, also
// sweeps their knobs for the cheapest setting reaching each of targets
// (RunFrontier); the frontier is empty without it.
func Compare(ctx context.Context, tr Trace, cfg Config, frontier bool, targets []float64, policies ...string) (Report, Frontier, error) {
	if frontier {
		return RunFrontier(ctx, tr, cfg, targets, policies...)
	}
	rep, err := Run(ctx, tr, cfg, policies...)
	return rep, Frontier{}, err
}

// WriteTables writes the policies' table (WriteTable) and, with
// frontier, a blank line and the frontier's (WriteFrontierTable).
func WriteTables(w io.Writer, rep Report, front Frontier, c planner.Config, frontier bool) error {
	if err := WriteTable(w, rep, c); err != nil {
		return err
	}
	if !frontier {
		return nil
	}
	fmt.Fprintln(w)
	return WriteFrontierTable(w, front.Points)
}
