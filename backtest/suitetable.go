package backtest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSuiteTable prints one line per trace and the summary.
func WriteSuiteTable(w io.Writer, rep SuiteReport) error {
	fmt.Fprintf(w, "policy suite: every figure is the second half of each trace, as a share of a static fleet at the peak's need;\n"+
		"SLO target %.2f%% of requests; baseline: the cheaper of the reactive setting and the flat size chosen on the first half\n\n", 100*rep.SLOTarget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "trace\tfrom\thybrid\tSLO\tbaseline\tits SLO\tchosen on the first half\thindsight reactive\thindsight flat\toracle\thybrid ÷ baseline\t÷ oracle\tbar")
	for _, e := range rep.Entries {
		fmt.Fprintln(tw, suiteRow(e))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeReserved(w, rep.Entries); err != nil {
		return err
	}
	return writeSuiteSummary(w, rep.SuiteSummary, len(rep.Entries))
}

// writeReserved names the reserved base each trace replayed on, when one
// did: every policy of the trace, the baseline and the oracle paid for
// it.
func writeReserved(w io.Writer, entries []SuiteEntry) error {
	var parts []string
	for _, e := range entries {
		if e.Reserved > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", e.Trace, e.Reserved))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nreserved base, every policy (prices.reserved_instances): %s\n", strings.Join(parts, ", "))
	return err
}

// suiteRow is one trace's line of the suite table.
func suiteRow(e SuiteEntry) string {
	h, b := e.Hybrid, e.Baseline
	bar := barOf(e)
	return fmt.Sprintf("%s\t%s\t%.1f%%\t%.3f%%\t%s %.1f%%\t%.3f%%\t%s\t%.1f%% (%.2f%%)\t%.1f%% (%s)\t%.1f%%\t%.3f×\t%.2f×\t%s",
		e.Trace, e.ScoredFrom.Format(time.DateOnly), 100*h.CostVsStatic, 100*h.SLOAttainment, b.Policy, 100*b.Scored.CostVsStatic,
		100*b.Scored.SLOAttainment, choiceSettings(b), 100*e.HindsightReactive.Scored.CostVsStatic,
		100*e.HindsightReactive.Scored.SLOAttainment, 100*e.HindsightFlat.Scored.CostVsStatic,
		e.HindsightFlat.Settings["instances"], 100*e.Oracle.CostVsStatic, e.VsBaseline, e.VsOracle, bar)
}

// barOf says whether a trace meets the suite's bar: the SLO (the target,
// or the baseline's attainment where that falls short) at no more than
// the baseline's cost.
func barOf(e SuiteEntry) string {
	var failed []string
	if !e.MeetsSLO {
		failed = append(failed, "SLO missed")
	}
	if e.VsBaseline > 1 {
		failed = append(failed, "costs more")
	}
	if len(failed) == 0 {
		return "met"
	}
	return strings.Join(failed, ", ")
}

// choiceSettings names a baseline's setting: the flat size, or the
// reactive thresholds.
func choiceSettings(c Choice) string {
	if n, ok := c.Settings["instances"]; ok {
		return n + " instances"
	}
	return FormatSettings(c.Settings)
}

// writeSuiteSummary prints the summary line of n traces: the worst, the
// geometric mean, and the traces below the SLO bar or above their
// baseline's cost.
func writeSuiteSummary(w io.Writer, sum SuiteSummary, n int) error {
	line := fmt.Sprintf("\nworst: %s at %.3f× its baseline; geometric mean %.3f× over %d traces", sum.Worst, sum.WorstVsBaseline, sum.GeoMeanVsBaseline, n)
	if len(sum.MissedSLO) > 0 {
		line += "; below the SLO bar (the target, or the baseline's attainment where it falls short): " + strings.Join(sum.MissedSLO, ", ")
	}
	if len(sum.AboveBaseline) > 0 {
		line += "; above the baseline's cost: " + strings.Join(sum.AboveBaseline, ", ")
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// WriteLOTOTable prints the leave-one-trace-out protocol: the setting
// chosen without each trace and that trace's second half with it.
func WriteLOTOTable(w io.Writer, rep LOTOReport) error {
	fmt.Fprintf(w, "leave one trace out: each trace scored on its second half with the tuner's defaults chosen on the other traces' first halves\n"+
		"defaults chosen on every first half: %s\n\n", rep.Defaults)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "trace\tchosen without it\thybrid\tSLO\tbaseline\tits SLO\thybrid ÷ baseline\t÷ oracle\tbar")
	for _, le := range rep.Entries {
		e := le.Entry
		bar := barOf(e)
		fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.3f%%\t%s %.1f%%\t%.3f%%\t%.3f×\t%.2f×\t%s\n", e.Trace, le.Chosen, 100*e.Hybrid.CostVsStatic,
			100*e.Hybrid.SLOAttainment, e.Baseline.Policy, 100*e.Baseline.Scored.CostVsStatic, 100*e.Baseline.Scored.SLOAttainment,
			e.VsBaseline, e.VsOracle, bar)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	entries := make([]SuiteEntry, len(rep.Entries))
	for i, le := range rep.Entries {
		entries[i] = le.Entry
	}
	if err := writeReserved(w, entries); err != nil {
		return err
	}
	return writeSuiteSummary(w, rep.SuiteSummary, len(rep.Entries))
}
