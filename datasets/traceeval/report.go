package traceeval

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// Row is one method's line for one trace (Series "" for the geometric
// mean over the traces); its JSON form is the output of 'forecaster eval
// traces --format json'.
type Row struct {
	Series    string  `json:"series,omitempty"`
	Method    string  `json:"method"`
	Windows   int     `json:"windows"`
	MASE      float64 `json:"mase"`
	Ratio     float64 `json:"mase_ratio"`
	Cov80     float64 `json:"coverage80"`
	Cov95     float64 `json:"coverage95"`
	MSIS      float64 `json:"msis"`
	Seconds   float64 `json:"seconds_per_fit"`
	Fallbacks int     `json:"fallbacks"`
}

// Report is the whole output of 'forecaster eval traces': per trace and
// over the traces, with R's failed fits; its JSON form is that of --format
// json.
type Report struct {
	Series []Row `json:"series"`
	// Overall, FirstHalf and SecondHalf hold each method's geometric mean
	// ratio over the traces (windows = traces) for all origins, the
	// tuning half and the held-out half.
	Overall    []Row          `json:"overall"`
	FirstHalf  []Row          `json:"first_half"`
	SecondHalf []Row          `json:"second_half"`
	RFailed    map[string]int `json:"r_failed_fits,omitempty"`

	traces  []string
	methods []string
}

// writeSubsets says, for each method that covers fewer traces than the
// others (R's stlf and mstl need two days of history), what the first
// method scores on the same traces, so the geometric means compare.
func (r Report) writeSubsets(w io.Writer) {
	covers := map[string]map[string]Row{}
	for _, s := range r.Series {
		if covers[s.Method] == nil {
			covers[s.Method] = map[string]Row{}
		}
		covers[s.Method][s.Series] = s
	}
	if len(r.methods) < 2 {
		return
	}
	ours := r.methods[1]
	for _, m := range r.methods[2:] {
		if len(covers[m]) >= len(covers[ours]) || len(covers[m]) == 0 {
			continue
		}
		logs, n := 0.0, 0
		for id := range covers[m] {
			if s, ok := covers[ours][id]; ok {
				logs += math.Log(s.Ratio)
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(w, "%s fits %d of the traces; %s on the same %d: geo-mean %.3f\n", m, len(covers[m]), ours, n, math.Exp(logs/float64(n)))
		}
	}
}

// NewReport summarises scores (of the methods on the windows of traces,
// R's reference scores among them with their failed fits) per trace, in
// the traces' order, and over the traces.
func NewReport(traces []Trace, scores []Score, failed map[string]int) Report {
	var ids []string
	for _, t := range traces {
		ids = append(ids, t.ID)
	}
	per := Summarise(scores, nil)
	SortSeries(per, ids)
	rows := func(s []Summary) []Row {
		out := make([]Row, len(s))
		for i, x := range s {
			out[i] = Row(x)
		}
		return out
	}
	half := func(h int) []Row {
		return rows(Overall(Summarise(scores, func(s Score) bool { return s.Half == h })))
	}
	r := Report{Series: rows(per), Overall: rows(Overall(per)), FirstHalf: half(1), SecondHalf: half(2),
		RFailed: failed, traces: ids}
	for _, o := range r.Overall {
		r.methods = append(r.methods, o.Method)
	}
	return r
}

// WriteTable prints the report as two tables: the ratios per trace, and
// the means over the traces.
func (r Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "Recorded traces, rolling origins: MASE ratio against seasonal naive on the same windows (< 1 beats it)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cell := map[[2]string]Row{}
	for _, s := range r.Series {
		cell[[2]string{s.Series, s.Method}] = s
	}
	fmt.Fprint(tw, "trace\twindows\tsnaive MASE\t")
	for _, m := range r.methods[1:] {
		fmt.Fprintf(tw, "%s\t", m)
	}
	fmt.Fprintln(tw)
	for _, id := range r.traces {
		b := cell[[2]string{id, Baseline}]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t", id, b.Windows, b.MASE)
		for _, m := range r.methods[1:] {
			if c, ok := cell[[2]string{id, m}]; ok {
				fmt.Fprintf(tw, "%.3f\t", c.Ratio)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nOver the traces: geometric mean of the ratios (all origins; first, tuning half; second, held-out half),\n"+
		"the worst trace, and means of coverage, MSIS (95%%) and milliseconds per fit\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\ttraces\tgeo-mean\tfirst half\tsecond half\tworst\tworst trace\tcoverage 80\tcoverage 95\tMSIS\tms/fit\tfallbacks\t")
	find := func(rows []Row, m string) float64 {
		for _, x := range rows {
			if x.Method == m {
				return x.Ratio
			}
		}
		return math.NaN()
	}
	for _, o := range r.Overall {
		worst, worstName := "-", "-"
		if o.Method != Baseline {
			wr := Row{}
			for _, s := range r.Series {
				if s.Method == o.Method && s.Ratio > wr.Ratio {
					wr = s
				}
			}
			worst, worstName = fmt.Sprintf("%.3f", wr.Ratio), wr.Series
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%s\t%.3f\t%.3f\t%.2f\t%.1f\t%d\t\n", o.Method, o.Windows, o.Ratio,
			find(r.FirstHalf, o.Method), find(r.SecondHalf, o.Method), worst, worstName,
			o.Cov80, o.Cov95, o.MSIS, 1000*o.Seconds, o.Fallbacks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.writeSubsets(w)
	if len(r.RFailed) > 0 {
		fmt.Fprintf(w, "\nR fits that failed (left out of that method's figures): %v\n", r.RFailed)
	}
	return nil
}

// Run scores methods (and the baseline) on the windows of traces and,
// with ref, adds R's reference scores, checked against the windows
// (Attach); it returns their report.
func Run(ctx context.Context, traces []Trace, windows []Window, methods []Method, ref []RefScore, opt Options) (Report, error) {
	scores, err := Evaluate(ctx, windows, methods, opt)
	if err != nil {
		return Report{}, err
	}
	var failed map[string]int
	if len(ref) > 0 {
		var rScores []Score
		if rScores, failed, err = Attach(ref, windows, scores); err != nil {
			return Report{}, err
		}
		scores = append(scores, rScores...)
	}
	return NewReport(traces, scores, failed), nil
}
