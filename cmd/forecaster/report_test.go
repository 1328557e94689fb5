package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/report"
)

// reportDoc is the part of 'report --format json' the tests read.
type reportDoc struct {
	Title    string `json:"title"`
	Forecast struct {
		Points []struct {
			Mean, Upper95 float64
		} `json:"points"`
		ExpectedRequests float64 `json:"expected_requests"`
	} `json:"forecast"`
	Plan struct {
		GPUHours float64 `json:"gpu_hours"`
		Peak     int     `json:"peak"`
		Hours    []any   `json:"hours"`
	} `json:"plan"`
	Cost struct {
		AllOnDemand float64 `json:"all_on_demand"`
		Recommended float64 `json:"recommended"`
		Saving      float64 `json:"saving"`
		SavingShare float64 `json:"saving_share"`
	} `json:"cost"`
	Reserved struct {
		Recommended int     `json:"recommended"`
		BusyShare   float64 `json:"busy_share"`
		BreakEven   float64 `json:"break_even_share"`
	} `json:"reserved"`
	Burst struct {
		SpotLimit    int     `json:"spot_limit"`
		SpotGPUHours float64 `json:"spot_gpu_hours"`
	} `json:"burst"`
	Settings struct {
		Max    int `json:"max"`
		Prices struct {
			OnDemand    float64 `json:"on_demand_per_hour"`
			Reserved    float64 `json:"reserved_per_hour"`
			Currency    string  `json:"currency"`
			Placeholder bool    `json:"placeholder"`
		} `json:"prices"`
		ForecastStep string `json:"forecast_step"`
	} `json:"settings"`
	Backtest struct {
		Command  string `json:"command"`
		Policies []struct {
			Name     string  `json:"name"`
			GPUHours float64 `json:"gpu_hours"`
			Cost     float64 `json:"cost"`
			SLO      float64 `json:"slo_attainment"`
		} `json:"policies"`
	} `json:"backtest"`
	Risks []struct {
		ID, Severity string
	} `json:"risks"`
}

func runReportJSON(t *testing.T, args ...string) reportDoc {
	t.Helper()
	code, out, errOut := runForecaster(append([]string{"report", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("report %v: exit %d: %s", args, code, errOut)
	}
	var doc reportDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%.2000s", err, out)
	}
	return doc
}

// checkAgainstBacktest runs the report's own 'forecaster backtest' line and
// checks that every policy's GPU-hours and cost are the backtest's.
func checkAgainstBacktest(t *testing.T, doc reportDoc) {
	t.Helper()
	fields := strings.Fields(doc.Backtest.Command)
	if len(fields) < 3 || fields[0] != "forecaster" || fields[1] != "backtest" || strings.Contains(doc.Backtest.Command, "'") {
		t.Fatalf("backtest command %q", doc.Backtest.Command)
	}
	code, out, errOut := runForecaster(append(fields[1:], "--format", "json")...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", doc.Backtest.Command, code, errOut)
	}
	var bt struct {
		Policies []struct {
			Name     string  `json:"name"`
			GPUHours float64 `json:"gpu_hours"`
			Cost     float64 `json:"cost"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &bt); err != nil {
		t.Fatal(err)
	}
	if len(bt.Policies) != len(doc.Backtest.Policies) || len(bt.Policies) != len(report.BacktestPolicies) {
		t.Fatalf("backtest %d policies, report %d", len(bt.Policies), len(doc.Backtest.Policies))
	}
	for i, p := range bt.Policies {
		r := doc.Backtest.Policies[i]
		if r.Name != p.Name || r.GPUHours != p.GPUHours || r.Cost != p.Cost {
			t.Errorf("%s: report %.3f GPU-h / %.2f, backtest %s %.3f GPU-h / %.2f", r.Name, r.GPUHours, r.Cost, p.Name, p.GPUHours, p.Cost)
		}
		t.Logf("%-8s GPU-hours report %.3f, backtest %.3f", p.Name, r.GPUHours, p.GPUHours)
	}
}

func TestReportJSONMatchesBacktest(t *testing.T) {
	doc := runReportJSON(t, "--synthetic-days", "21", "--step", "30m", "--peak-instances", "20", "--max", "40",
		"--backtest-weeks", "1", "--warm-up", "3d", "--spot-share", "0.3")
	if len(doc.Forecast.Points) != 336 || len(doc.Plan.Hours) != 168 || doc.Reserved.Recommended < 1 ||
		!(doc.Cost.Recommended < doc.Cost.AllOnDemand) {
		t.Errorf("report %+v", doc)
	}
	if !strings.Contains(doc.Backtest.Command, "--spot-share 0.3") || !strings.Contains(doc.Backtest.Command, "--score-from 2026-01-19T00:00:00Z") {
		t.Errorf("command %q", doc.Backtest.Command)
	}
	checkAgainstBacktest(t, doc)
}

// TestReportShownNYC is the documented report command on the NYC taxi trace: its
// JSON carries forecast, cost and reserved figures, and its static and
// hybrid GPU-hours are the backtest's.
func TestReportShownNYC(t *testing.T) {
	if testing.Short() {
		t.Skip("seven months of refits, twice; skipped with -short")
	}
	input := filepath.Join(datasets.Locate(), "traces", "nyc_taxi.csv")
	if _, err := os.Stat(input); err != nil {
		t.Skipf("no NYC taxi trace (%v): set PREWARM_DATASETS", err)
	}
	doc := runReportJSON(t, "--input", input, "--counts", "--gpu-rps", "1.0", "--horizon", "7d")
	if len(doc.Forecast.Points) != 336 || doc.Forecast.ExpectedRequests <= 0 || doc.Cost.Recommended <= 0 || doc.Reserved.Recommended < 1 {
		t.Errorf("forecast %d steps, %v requests; cost %+v; reserved %+v", len(doc.Forecast.Points), doc.Forecast.ExpectedRequests, doc.Cost, doc.Reserved)
	}
	t.Logf("reserve %d (busy %.3f, break-even %.3f), spot up to %d; cost %.2f vs %.2f all on demand (saving %.2f, %.1f%%); plan %.1f GPU-h, peak %d",
		doc.Reserved.Recommended, doc.Reserved.BusyShare, doc.Reserved.BreakEven, doc.Burst.SpotLimit, doc.Cost.Recommended,
		doc.Cost.AllOnDemand, doc.Cost.Saving, 100*doc.Cost.SavingShare, doc.Plan.GPUHours, doc.Plan.Peak)
	checkAgainstBacktest(t, doc)
}

// TestReportConfigPool: --config --pool reads the pool's settings and its
// demand from the store, as serve would; fleet flags are the config's.
func TestReportConfigPool(t *testing.T) {
	dir := t.TempDir()
	demand := filepath.Join(dir, "demand.csv")
	if code, _, errOut := runForecaster("backtest", "--synthetic-days", "16", "--step", "30m", "--gpu-rps", "10",
		"--policies", "static", "--write-demand", demand); code != 0 {
		t.Fatalf("writing the demand: %s", errOut)
	}
	db := "embedded:" + filepath.Join(dir, "store.db")
	if code, _, errOut := runForecaster("import", "--input", demand, "--counts", "--pool", "sd", "--store", db, "--shift-to-now"); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	config := filepath.Join(dir, "prewarm.yaml")
	yaml := "pools:\n  - name: sd\n    backend: dryrun\n    max: 30\n    rps_per_instance: 10\n    prices:\n      on_demand_per_hour: 3\n      reserved_per_hour: 1.5\n      currency: EUR\n"
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := runReportJSON(t, "--config", config, "--pool", "sd", "--store", db, "--backtest-weeks", "1", "--warm-up", "2d", "--horizon", "2d")
	if doc.Title != "sd" || doc.Settings.Max != 30 || doc.Settings.Prices.OnDemand != 3 || doc.Settings.Prices.Reserved != 1.5 ||
		doc.Settings.Prices.Currency != "EUR" || doc.Settings.Prices.Placeholder ||
		doc.Settings.ForecastStep != "30m0s" || len(doc.Forecast.Points) != 96 {
		t.Errorf("report %+v", doc)
	}
	if !strings.Contains(doc.Backtest.Command, "--config "+config+" --pool sd") {
		t.Errorf("command %q", doc.Backtest.Command)
	}
	// A price and the currency may be overridden, the fleet may not.
	if doc := runReportJSON(t, "--config", config, "--pool", "sd", "--store", db, "--price", "4", "--currency", "CNY", "--warm-up", "0",
		"--horizon", "6h", "--backtest-weeks", "1"); doc.Settings.Prices.OnDemand != 4 || doc.Settings.Prices.Currency != "CNY" {
		t.Errorf("--price 4 --currency CNY with --config: %v %s", doc.Settings.Prices.OnDemand, doc.Settings.Prices.Currency)
	}
	// plan reads the same pool the same way.
	code, out, errOut := runForecaster("plan", "--config", config, "--pool", "sd", "--store", db, "--horizon", "6h", "--warm-up", "1d")
	if code != 0 || !strings.Contains(out, "Capacity plan for sd: 6h from") || !strings.Contains(out, "at 3.00 EUR an hour") {
		t.Errorf("plan --config: exit %d, %s\n%s", code, errOut, out)
	}
	code, _, errOut = runForecaster("report", "--config", config, "--pool", "sd", "--store", db, "--max", "5", "--gpu-rps", "3")
	if code != 2 || !strings.Contains(errOut, "drop --gpu-rps (the pool's rps_per_instance), --max (the pool's max), or change the pool in the file") {
		t.Errorf("fleet flags with --config: exit %d, %s", code, errOut)
	}
	code, _, errOut = runForecaster("report", "--config", config, "--pool", "nope", "--store", db)
	if code != 2 || !strings.Contains(errOut, `no pool "nope" in the configuration (pools: sd)`) {
		t.Errorf("unknown pool: exit %d, %s", code, errOut)
	}
}

// TestReportSummaryLine: with --out, the one line printed names the
// currency, says when the prices are placeholders, and counts the risks in
// words.
func TestReportSummaryLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.md")
	base := []string{"report", "--synthetic-days", "15", "--step", "30m", "--peak-instances", "10", "--max", "20", "--backtest-weeks", "1",
		"--warm-up", "1d", "--horizon", "1d", "--format", "md", "--out", out}
	for _, tc := range []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"default prices", nil, regexp.MustCompile(`cost [\d,.]+ USD at placeholder prices \(\d+% below all on demand\), (1 risk|\d+ risks)\n$`)},
		{"prices and currency set", []string{"--price", "3", "--currency", "EUR"},
			regexp.MustCompile(`cost [\d,.]+ EUR \(\d+% below all on demand\), (1 risk|\d+ risks|0 risks)\n$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, errOut := runForecaster(append(base, tc.args...)...)
			if code != 0 || !tc.want.MatchString(stdout) {
				t.Errorf("exit %d, %q (%s); want %v", code, stdout, errOut, tc.want)
			}
		})
	}
}

func TestReportFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backtest-weeks", "0"}, "--backtest-weeks 0: must be between 1 and 52"},
		{[]string{"--backtest-weeks", "53"}, "--backtest-weeks 53"},
		{[]string{"--format", "pdf"}, `--format "pdf": want one of html, md, json`},
		{[]string{"--horizon", "30d"}, `"--horizon" flag: 30d is out of range`},
		{[]string{"--warm-up", "-1h"}, `"--warm-up" flag`},
		{[]string{"--spot-share", "1.5"}, "--spot-share 1.5: must be in [0, 1]"},
		{[]string{"--config", "x.yaml"}, "--config needs --pool NAME"},
		{[]string{"--currency", "usd"}, `--currency: "usd" is not a currency code: want three capital letters, e.g. USD, EUR, CNY`},
		{[]string{"--currency", "EURO"}, `--currency: "EURO" is not a currency code`},
		{[]string{"--currency", ""}, `--currency: "" is not a currency code`},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		code, _, errOut := runForecaster(append([]string{"report", "--gpu-rps", "5"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestReportPageInChromium opens the HTML report in headless Chromium: no
// console error, no fetch, the charts drawn; then prints it on A4
// (Page.printToPDF, what --print-to-pdf does) and turns the pages into
// PNGs with pdftoppm, saved in $PREWARM_SCREENSHOT_DIR to be looked at.
func TestReportPageInChromium(t *testing.T) {
	bin := chromium.Find(t)
	args := []string{"--synthetic-days", "21", "--step", "30m", "--peak-instances", "20", "--max", "40", "--backtest-weeks", "1", "--warm-up", "3d"}
	name := "synthetic"
	if input := filepath.Join(datasets.Locate(), "traces", "alibaba_sd_requests_hourly.csv"); fileExists(input) {
		args, name = []string{"--input", input, "--counts", "--gpu-rps", "0.05"}, "alibaba"
	}
	page := filepath.Join(t.TempDir(), "report.html")
	code, _, errOut := runForecaster(append([]string{"report", "--format", "html", "--out", page}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := chromium.Start(ctx, bin, 1000, 1400)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url := "file://" + page
	if err := b.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	var drawn struct {
		Charts   int
		Series   map[string]int
		Risks    int
		Advice   string
		Width    float64
		Overflow bool
	}
	err = b.Eval(ctx, `(() => {
	  const out = {charts: document.querySelectorAll("svg.chart").length, series: {}, risks: document.querySelectorAll("#risks li, #risks .ok").length,
	    advice: document.getElementById("advice").textContent, width: document.querySelector("#demand-chart").getBoundingClientRect().width,
	    overflow: document.documentElement.scrollWidth > window.innerWidth};
	  for (const p of document.querySelectorAll("svg.chart path[data-series]")) {
	    const k = p.closest("svg").id + "/" + p.dataset.series;
	    if (p.getBBox().width > 0 || p.getBBox().height > 0) out.series[k] = (out.series[k] || 0) + Number(p.dataset.points);
	  }
	  return out;
	})()`, &drawn)
	if err != nil {
		t.Fatal(err)
	}
	if drawn.Charts < 2 || drawn.Risks < 1 || !strings.Contains(drawn.Advice, "reserved instances") || drawn.Overflow || drawn.Width < 500 {
		t.Errorf("page: %+v", drawn)
	}
	for _, s := range []string{"demand-chart/history", "demand-chart/forecast", "demand-chart/band80", "demand-chart/band95",
		"plan-chart/plan", "reserved-chart/busy", "backtest-chart/cost"} {
		if drawn.Series[s] < 1 {
			t.Errorf("chart series %s not drawn (%v)", s, drawn.Series)
		}
	}
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page had problems: %v", p)
	}
	for _, r := range b.Requests() {
		if r != url {
			t.Errorf("the page fetched %s", r)
		}
	}
	shot, err := b.Screenshot(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	chromium.SaveScreenshot(t, "report-"+name+".png", shot)
	pdf := printPDF(ctx, t, b)
	pages := pdfPages(t, pdf)
	if pages < 3 || pages > 8 {
		t.Errorf("the report prints on %d A4 pages, want 3 to 8", pages)
	}
	for i, png := range pdfToPNG(t, pdf) {
		chromium.SaveScreenshot(t, fmt.Sprintf("report-%s-page-%d.png", name, i+1), png)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// printPDF prints the page on A4 as --print-to-pdf does, without the
// browser's header and footer, and returns the file's path.
func printPDF(ctx context.Context, t *testing.T, b *chromium.Browser) string {
	t.Helper()
	res, err := b.Call(ctx, "Page.printToPDF", map[string]any{"paperWidth": 8.27, "paperHeight": 11.69, "printBackground": true,
		"preferCSSPageSize": true, "displayHeaderFooter": false})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-")) {
		t.Fatalf("not a PDF (%v): %.20q", err, data)
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv(chromium.EnvScreenshots); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "report.pdf"), data, 0o644)
	}
	return path
}

// popplerTool finds a poppler-utils program (scripts/test.sh installs
// them); like Chromium, it is a failure under PREWARM_REQUIRE_CHROMIUM=1
// and a skip otherwise.
func popplerTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv(chromium.EnvRequire) == "1" {
		t.Fatalf("no %s: apt-get install poppler-utils (scripts/test.sh does)", name)
	}
	t.Skipf("no %s (poppler-utils): the PDF was printed but not looked at", name)
	return ""
}

func pdfPages(t *testing.T, pdf string) int {
	t.Helper()
	out, err := exec.Command(popplerTool(t, "pdfinfo"), pdf).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(A4)") {
		t.Errorf("not A4:\n%s", out)
	}
	m := regexp.MustCompile(`Pages:\s+(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("pdfinfo: no page count:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pdfToPNG renders each page at 60 dpi.
func pdfToPNG(t *testing.T, pdf string) [][]byte {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(popplerTool(t, "pdftoppm"), "-png", "-r", "60", pdf, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "page-*.png"))
	var out [][]byte
	for _, f := range files {
		png, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: not a PNG (%v)", f, err)
		}
		out = append(out, png)
	}
	if len(out) == 0 {
		t.Fatal("pdftoppm wrote no page")
	}
	return out
}
