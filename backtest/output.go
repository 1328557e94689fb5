package backtest

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// CapacityCSVHeader is the header of WriteCapacityCSV's output.
var CapacityCSVHeader = []string{"timestamp", "demand_rps", "ready", "desired", "billed", "spot", "stopped"}

// WriteCapacityCSV writes one row per trace step of a policy's run:
// timestamp (RFC 3339), demand_rps (empty for a step with no data), and the
// time-averaged ready, desired and billed instance counts over the step.
// Billed counts booting and draining instances too, so Σ billed × step is
// the run's GPU-hours; spot is the part of billed on spot, and stopped the
// warm tier's stopped instances (Σ stopped × step: its stopped hours).
func WriteCapacityCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range r.Capacity {
		demand := ""
		if !math.IsNaN(p.DemandRPS) {
			demand = f(p.DemandRPS)
		}
		rec := []string{p.At.Format(time.RFC3339), demand, f(round6(p.Ready)), f(round6(p.Desired)), f(round6(p.Billed)),
			f(round6(p.Spot)), f(round6(p.Stopped))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// WriteReplayedDemand writes the trace as requests per step, exactly (a file
// --input … --counts reads back to the same rates), a gap as an empty
// value.
func WriteReplayedDemand(path string, tr Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "timestamp,requests")
	for i, v := range tr.RPS {
		count := ""
		if !math.IsNaN(v) {
			count = strconv.FormatFloat(v*tr.Step.Seconds(), 'g', -1, 64)
		}
		fmt.Fprintf(w, "%s,%s\n", tr.Start.Add(time.Duration(i)*tr.Step).Format(time.RFC3339), count)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteTable prints the report as the table of `forecaster backtest`:
// the run's settings, one line per policy, and what each column means.
func WriteTable(w io.Writer, rep Report, c planner.Config) error {
	fmt.Fprintf(w, "%s: static peak needs %d instances of %.4g req/s (%d slots, %.3g s a request); boot %s; SLO: %.1f%% wait <= %s;\n"+
		"tick %s, forecast step %s, refit every %s\n\n",
		rep.Trace, rep.Static, c.Fleet.RPS(), c.Fleet.Slots, c.Fleet.ServiceTime.Seconds(), c.Fleet.BootDelay,
		100*c.SLO.Quantile, c.SLO.Latency, rep.Tick, rep.ForecastStep, rep.RefitEvery)
	warm := c.Fleet.WarmTier()
	if warm {
		fmt.Fprintf(w, "warm tier: a stopped instance starts in %s, %.4g an hour stopped\n\n", c.Fleet.WarmStart, c.Prices.StoppedPerHour)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "policy\tGPU-hours\tcost\tvs static\tvs oracle\tper 1k req\tSLO attainment\tafter day 1\tP99 wait (s)\tP99 latency (s)\tdropped\tunder-prov. min\tactions\t"
	if warm {
		header += "stopped hours\twarm starts\t"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rep.Policies {
		name := r.Name
		if r.Name == PolicyFlat || r.Name == PolicyStatic {
			name = fmt.Sprintf("%s (%d)", r.Name, r.Instances)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.1f%%\t%.2fx\t%.4f\t%.3f%%\t%.3f%%\t%.1f\t%.1f\t%.0f\t%.0f\t%d\t", name, r.GPUHours, r.Cost,
			100*r.CostVsStatic, r.CostVsOracle, r.CostPer1kRequests, 100*r.SLOAttainment, 100*r.SLOAttainmentAfterWarmUp,
			r.P99WaitS, r.P99LatencyS, r.Dropped, r.UnderprovisionedMinutes, r.Actions)
		if warm {
			fmt.Fprintf(tw, "%.1f\t%d\t", r.StoppedHours, r.WarmStarts)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, backtestColumns)
	if warm && err == nil {
		_, err = fmt.Fprint(w, warmColumns)
	}
	return err
}

// warmColumns explains the warm tier's columns.
const warmColumns = `GPU-hours with a warm tier: running instances, the cold boots that fill it included. stopped hours: its
stopped instance-hours, billed at --stopped-price. warm starts: launches that started a stopped instance.
`

// backtestColumns explains the table's columns under it.
const backtestColumns = `
cost: at --price, billed per second; vs static / vs oracle: that cost over theirs; per 1k req: cost per 1,000 requests.
SLO attainment: share of requests that waited at most --slo (dropped ones count as late); after day 1: from --warm-up on.
P99 wait / latency: the 99th percentile of the wait for a server, and of the wait plus the service.
dropped: requests that gave up after waiting --timeout. under-prov. min: minutes in which more requests waited
past --slo than the SLO allows, or a backlog was left. actions: changes applied to the fleet.
`

// WriteFrontierTable prints the cheapest setting of each policy per SLO
// target.
func WriteFrontierTable(w io.Writer, front []FrontierPoint) error {
	fmt.Fprintln(w, "frontier: the cheapest setting of each policy that reaches each SLO target")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policy\tSLO target\treached\tvs static\tSLO attainment\tsettings")
	for _, p := range front {
		fmt.Fprintf(tw, "%s\t%.2f%%\t%v\t%.1f%%\t%.3f%%\t%s\n", p.Policy, 100*p.SLOTarget, p.Reached, 100*p.CostVsStatic,
			100*p.SLOAttainment, FormatSettings(p.Settings))
	}
	return tw.Flush()
}

// FormatSettings writes a frontier setting as sorted key=value pairs.
func FormatSettings(s map[string]string) string {
	keys := slices.Sorted(maps.Keys(s))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + s[k]
	}
	return strings.Join(parts, " ")
}

// WriteFiles writes the files of `forecaster backtest --out DIR`: each
// policy's capacity CSV and plots (the busiest and a typical week of a
// long run), the trade-off plot and, with trials, the frontier plot, in
// plotFormat (svg or png). It returns the names written, also when it
// fails part-way.
func WriteFiles(dir, plotFormat string, rep Report, trials []FrontierTrial, targets []float64, c planner.Config) ([]string, error) {
	rps := c.Fleet.RPS()
	var written []string
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	write := func(name string, fill func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		written = append(written, name)
		return nil
	}
	for _, r := range rep.Policies {
		if err := write("capacity-"+r.Name+".csv", func(w io.Writer) error { return WriteCapacityCSV(w, r) }); err != nil {
			return written, err
		}
		for i, win := range CapacityWindows(r) {
			name := "capacity-" + r.Name
			if i > 0 {
				name += "-" + strings.ReplaceAll(win.Name, " ", "-")
			}
			p := PlotCapacity(r, rep.Trace, rps, win)
			if err := write(name+"."+plotFormat, func(w io.Writer) error { return WritePlot(w, p, plotFormat) }); err != nil {
				return written, err
			}
		}
	}
	p := PlotTradeoff(rep, c.SLO.Quantile)
	if err := write("tradeoff."+plotFormat, func(w io.Writer) error { return WritePlot(w, p, plotFormat) }); err != nil {
		return written, err
	}
	if len(trials) == 0 {
		return written, nil
	}
	fp := PlotFrontier(rep.Trace, trials, targets, rep.Policies)
	err := write("frontier."+plotFormat, func(w io.Writer) error { return WritePlot(w, fp, plotFormat) })
	return written, err
}
