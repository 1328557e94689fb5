// Package m4eval scores prewarm's forecasting methods on the M4 Hourly
// series the way 'forecaster eval m4' reports them: the methods it offers
// by name, each run over every series (package m4), with OWA relative to
// Naive2 — the published Naive2 figures on the official test, Naive2 on
// the same windows on the holdout — and the official results beside them.
//
// It is a package of its own, not part of m4, because it builds the
// methods (model/auto, model/seasonal, model/holtwinters), whose tests
// read the M4 data through m4.
package m4eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/holtwinters"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Method is one forecasting method the evaluation can score.
type Method struct {
	Name string
	// Official is its id in the official results table, "" when it has
	// none.
	Official string
	// About says what it is, for help texts.
	About string
	// New builds it for hourly series.
	New func() model.Forecaster
}

// Methods lists the methods by name, the default one first.
func Methods() []Method {
	return []Method{
		{"auto", "", "prewarm's default: a validated pool (seasonal shapes, Holt-Winters, STL/MSTL + ETS) at the hourly clock's periods and the detected ones, conformal intervals",
			func() model.Forecaster { return auto.New(auto.Config{Step: time.Hour}) }},
		{"snaive", "sNaive", "seasonal naive, period 24", func() model.Forecaster {
			return seasonal.SeasonalNaive{Period: m4.HourlyPeriod}
		}},
		{"naive2", "Naive2", "naive on seasonally adjusted data (M4 benchmark)", func() model.Forecaster {
			return seasonal.Naive2{Period: m4.HourlyPeriod}
		}},
		{"naive", "Naive", "last value", func() model.Forecaster { return seasonal.Naive{} }},
		{"profile", "", "median daily shape of the last 7 days at the latest day's level", func() model.Forecaster {
			return seasonal.Profile{Period: m4.HourlyPeriod, Cycles: 7, Robust: true, Relative: true}
		}},
		{"hw", "", "Holt-Winters, periods 24 and 168, form chosen by AICc", func() model.Forecaster {
			return holtwinters.Forecaster{Periods: []int{m4.HourlyPeriod, 168}}
		}},
	}
}

// DefaultMethods names the methods run when none are asked for: all but
// hw, which fits every Holt-Winters form to every series and takes
// minutes.
func DefaultMethods() []string {
	var names []string
	for _, m := range Methods() {
		if m.Name != "hw" {
			names = append(names, m.Name)
		}
	}
	return names
}

// Pick returns the methods names lists, in its order; an unknown name, or
// none, is an error.
func Pick(names []string) ([]Method, error) {
	all := Methods()
	var out []Method
	for _, name := range names {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(m Method) bool { return m.Name == name })
		if i < 0 {
			known := make([]string, len(all))
			for j, m := range all {
				known[j] = m.Name
			}
			return nil, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	if len(out) == 0 {
		return nil, errors.New("name at least one method")
	}
	return out, nil
}

// Unit holds the Naive2 scores OWA is relative to, and where they come
// from.
type Unit struct {
	SMAPE, MASE float64
	Source      string
}

// UnitFor returns OWA's unit on split: the published Naive2 on the
// official test, Naive2 scored on series (the holdout windows) otherwise.
func UnitFor(ctx context.Context, split m4.Split, series []m4.Series) (Unit, error) {
	if split != m4.SplitHoldout {
		return Unit{SMAPE: accuracy.Naive2HourlySMAPE, MASE: accuracy.Naive2HourlyMASE, Source: "the official Naive2"}, nil
	}
	res, err := m4.Evaluate(ctx, seasonal.Naive2{Period: m4.HourlyPeriod}, series, m4.EvalOptions{Horizon: m4.HourlyHorizon})
	if err != nil {
		return Unit{}, fmt.Errorf("naive2 on the holdout: %w", err)
	}
	return Unit{SMAPE: res.Scores.SMAPE, MASE: res.Scores.MASE, Source: "Naive2 on the same holdout windows"}, nil
}

// Row is one method's line of the report; its JSON form is the documented
// output of 'forecaster eval m4 --format json'.
type Row struct {
	Name     string  `json:"name"`
	SMAPE    float64 `json:"smape"`
	MASE     float64 `json:"mase"`
	OWA      float64 `json:"owa"`
	MSIS     float64 `json:"msis"`
	Coverage float64 `json:"coverage"`
	Seconds  float64 `json:"seconds"`

	official  *m4.Result
	fallbacks int
}

// Report is the whole evaluation; its JSON form is the output of
// 'forecaster eval m4 --format json'.
type Report struct {
	Split       m4.Split `json:"split"`
	Naive2SMAPE float64  `json:"naive2_smape"`
	Naive2MASE  float64  `json:"naive2_mase"`
	Methods     []Row    `json:"methods"`

	unit     Unit
	official []m4.Result
	series   int
}

// Options are what Run needs besides the methods and the series.
type Options struct {
	// Split is the future the series hold as their test values.
	Split m4.Split
	// Official are the official results to print beside the methods'
	// (none on the holdout).
	Official []m4.Result
	// Progress, when set, is called before each method with its name and
	// the number of series; it returns what to call after each series and
	// when the method is done.
	Progress func(method string, series int) (step, done func())
}

// Run scores each method on series (already split, see m4.Split.Apply)
// with horizon m4.HourlyHorizon, OWA relative to UnitFor's Naive2.
func Run(ctx context.Context, series []m4.Series, methods []Method, opts Options) (Report, error) {
	unit, err := UnitFor(ctx, opts.Split, series)
	if err != nil {
		return Report{}, err
	}
	r := Report{Split: opts.Split, Naive2SMAPE: unit.SMAPE, Naive2MASE: unit.MASE, unit: unit, official: opts.Official,
		series: len(series)}
	for _, m := range methods {
		step, done := func() {}, func() {}
		if opts.Progress != nil {
			step, done = opts.Progress(m.Name, len(series))
		}
		res, err := m4.Evaluate(ctx, m.New(), series, m4.EvalOptions{Horizon: m4.HourlyHorizon, Progress: step})
		done()
		if err != nil {
			return Report{}, fmt.Errorf("method %s: %w", m.Name, err)
		}
		r.Methods = append(r.Methods, r.row(m, res))
	}
	return r, nil
}

// row is m's line for its result res.
func (r Report) row(m Method, res m4.EvalResult) Row {
	sc := res.Scores
	row := Row{Name: m.Name, SMAPE: sc.SMAPE, MASE: sc.MASE,
		OWA:  accuracy.OWA(sc.SMAPE, sc.MASE, r.unit.SMAPE, r.unit.MASE),
		MSIS: sc.MSIS, Coverage: sc.Coverage, Seconds: res.Elapsed.Seconds(), fallbacks: res.Fallbacks}
	for i := range r.official {
		if m.Official != "" && r.official[i].ID == m.Official {
			row.official = &r.official[i]
		}
	}
	return row
}

// WriteTable prints the report as a table, the official figures beside
// each method's on the official split, and the best official entry.
func (r Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "M4 Hourly, %s split, %d series, horizon %d, 95%% intervals; OWA relative to %s (sMAPE %.3f, MASE %.3f)\n\n",
		r.Split, r.series, m4.HourlyHorizon, r.unit.Source, r.unit.SMAPE, r.unit.MASE)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "method\tsMAPE\tMASE\tOWA\tMSIS\tcoverage\tseconds\tms/series\tfallbacks\t"
	if r.Split == m4.SplitOfficial {
		header += "official sMAPE\tofficial MASE\tofficial OWA\t"
	}
	fmt.Fprintln(tw, header)
	for _, row := range r.Methods {
		line := fmt.Sprintf("%s\t%.3f\t%.3f\t%.3f\t%.2f\t%.3f\t%.2f\t%.1f\t%d\t",
			row.Name, row.SMAPE, row.MASE, row.OWA, row.MSIS, row.Coverage, row.Seconds, 1000*row.Seconds/float64(r.series), row.fallbacks)
		if r.Split == m4.SplitOfficial {
			off := "-\t-\t-"
			if row.official != nil {
				off = fmt.Sprintf("%.3f\t%.3f\t%.3f", row.official.SMAPE, row.official.MASE, row.official.OWA)
			}
			line += off + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.official) > 0 {
		best := r.official[0]
		for _, o := range r.official {
			if o.OWA < best.OWA {
				best = o
			}
		}
		fmt.Fprintf(w, "\nBest official entry: %s (%s) sMAPE %.3f, MASE %.3f, OWA %.3f.\n", best.ID, best.Team, best.SMAPE, best.MASE, best.OWA)
	}
	return nil
}
