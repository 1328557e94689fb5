package report

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
)

// The backtest command repeats the given flags it keeps, quoted for a
// shell, booleans as switches, and scores from the report's weeks.
func TestBacktestCommand(t *testing.T) {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.String("input", "", "")
	fs.Bool("counts", false, "")
	fs.Bool("calibrate", true, "")
	fs.String("title", "", "")
	fs.Float64("old", 0, "")
	_ = fs.MarkDeprecated("old", "gone")
	if err := fs.Parse([]string{"--input", "my demand.csv", "--counts", "--calibrate=false", "--title", "x", "--old", "1"}); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := backtest.Trace{Start: start, Step: time.Hour, RPS: make([]float64, 6*7*24)}
	got := BacktestCommand(fs, []string{"input", "counts", "calibrate", "old"}, tr, 1)
	want := "forecaster backtest --input 'my demand.csv' --counts --calibrate=false --score-from 2026-02-05T00:00:00Z --policies " +
		strings.Join(BacktestPolicies, ",")
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// fakeQuerier answers every query with its series, or its error.
type fakeQuerier struct {
	series []store.Series
	err    error
}

func (f fakeQuerier) Query(context.Context, store.Query) ([]store.Series, error) {
	return f.series, f.err
}

// The store's demand is summed over tag sets on the forecast step, from
// the first step with data; no data, or a failing store, is an error
// naming the series and the store.
func TestReadDemand(t *testing.T) {
	pool := poolspec.DefaultPool()
	pool.Name = "sd"
	pool.Forecast.Step = time.Hour
	now := time.Date(2026, 1, 2, 0, 30, 0, 0, time.UTC)
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC) }
	two := []store.Series{
		{Samples: []store.Sample{{Time: at(20), Value: 1}, {Time: at(21), Value: 2}}},
		{Samples: []store.Sample{{Time: at(21), Value: 3}}},
	}
	for _, tc := range []struct {
		name string
		q    fakeQuerier
		want []float64
		err  string
	}{
		{"summed", fakeQuerier{series: two}, []float64{1, 5}, ""},
		{"empty", fakeQuerier{}, nil, "over the last 24h0m0s"},
		{"down", fakeQuerier{err: errors.New("refused")}, nil, "from embedded:x: refused"},
	} {
		tr, err := ReadDemand(context.Background(), tc.q, "embedded:x", pool, 24*time.Hour, now)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && (err != nil || !tr.Start.Equal(at(20)) || len(tr.RPS) < 2 || tr.RPS[0] != tc.want[0] || tr.RPS[1] != tc.want[1]):
			t.Errorf("%s: %+v, %v; want %v from 20:00", tc.name, tr, err, tc.want)
		}
	}
}

// The spot flags are checked in order; with --config only the prices
// and the demand's flags may be given; given prices override the pool's.
func TestPoolFlagInput(t *testing.T) {
	for _, tc := range []struct {
		price, rate, share float64
		want               string
	}{
		{1, 0.05, 0, ""},
		{-1, 0.05, 0, "--spot-price -1: must be in [0, 1e+06]"},
		{1, 200, 0, "--spot-interruptions 200"},
		{1, 0.05, 2, "--spot-share 2: must be in [0, 1]"},
	} {
		err := backtest.CheckSpot(tc.price, tc.rate, tc.share)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--price", "3", "--input", "d.csv"}, ""},
		{[]string{"--input", "d.csv", "--skip-bad", "--allow-outliers", "--value-column", "rps"}, ""},
		{[]string{"--reserved", "2", "--reserved-price", "1"}, ""},
		{[]string{"--slots", "2", "--gpu-rps", "3", "--price", "3"},
			"--config f.yaml --pool p sets the fleet, SLO, planner and forecast settings; drop --gpu-rps (the pool's rps_per_instance), --slots (the pool's slots)"},
		{[]string{"--synthetic-days", "20"}, "drop --synthetic-days (the pool's demand)"},
		{[]string{"--max", "9"}, "(only --price, --reserved-price, --reserved, --spot-price, --currency may override it)"},
	} {
		fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
		var in backtest.InputFlags
		in.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := poolspec.RefuseOverrides(fs, "f.yaml", "p", demandKeys, priceOverrides...)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	p := poolspec.DefaultPool().Prices
	before := p
	f := PriceFlags{OnDemand: 3, Reserved: 2, Spot: 1, ReservedInstances: 4, Currency: "EUR"}
	f.Apply(&p, func(flag string) bool { return flag == "price" || flag == "currency" })
	if p.OnDemandPerHour != 3 || p.Currency != "EUR" || p.ReservedPerHour != before.ReservedPerHour || p.ReservedInstances != before.ReservedInstances {
		t.Errorf("--price 3 --currency EUR over %+v: %+v", before, p)
	}
	for _, tc := range []struct {
		input  string
		counts bool
		want   string
	}{
		{"", false, "synthetic demand, 7 days"},
		{"d.csv", true, "d.csv (requests per step, as requests/s)"},
		{"d.csv", false, "d.csv (requests/s)"},
	} {
		if got := DemandSource(tc.input, tc.counts, 7); got != tc.want {
			t.Errorf("%q %v: %q, want %q", tc.input, tc.counts, got, tc.want)
		}
	}
}

// The line printed after --out says the span and the cost in words, with
// the currency and thousands separators, and marks placeholder prices.
func TestSummaryLineInWords(t *testing.T) {
	rep := &Report{}
	rep.Cost.Recommended, rep.Cost.SavingShare = 2879.674, 0.34
	rep.Settings.Prices.Currency, rep.Settings.Prices.Placeholder = "USD", true
	rep.Reserved.Recommended, rep.Plan.Peak = 8, 20
	got := summaryLine("plan.html", "html", rep, "nyc_taxi.csv", 7*24*time.Hour)
	want := "plan.html: html report of nyc_taxi.csv for the next week: reserve 8, burst up to +12, cost 2,879.67 USD at placeholder prices (34% below all on demand), 0 risks\n"
	if got != want {
		t.Errorf("summary line\n got %q\nwant %q", got, want)
	}
}

// A history shorter than two forecast steps (or two of the demand's,
// when coarser) is refused by flag; unset (0) and two steps pass.
func TestCheckHistory(t *testing.T) {
	for _, tc := range []struct {
		history, forecastStep, demandStep time.Duration
		want                              string
	}{
		{0, 30 * time.Minute, time.Minute, ""},
		{time.Hour, 30 * time.Minute, time.Minute, ""},
		{59 * time.Minute, 30 * time.Minute, time.Minute, "--history 59m: must cover at least two forecast steps"},
		{time.Hour, 30 * time.Minute, time.Hour, "--history 1h: must cover at least two forecast steps"},
	} {
		var in Input
		in.Backtest.Forecast.History, in.Backtest.Forecast.Step, in.Trace.Step = tc.history, tc.forecastStep, tc.demandStep
		err := in.CheckHistory("--history")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		}
	}
}
