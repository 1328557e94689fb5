package traceeval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

// writeTrace writes an hourly two-column CSV of n values to dir/name,
// leaving the listed indexes out (gaps).
func writeTrace(t *testing.T, dir, name string, n int, gaps ...int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,value\n")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	skip := map[int]bool{}
	for _, g := range gaps {
		skip[g] = true
	}
	for i := 0; i < n; i++ {
		if skip[i] {
			continue
		}
		fmt.Fprintf(&b, "%s,%d\n", start.Add(time.Duration(i)*time.Hour).Format("2006-01-02 15:04:05"), 100+i%24)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWindows(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "h.csv", 24*20, 5, 350)
	tr := Trace{ID: "h@1h", File: "h.csv", Horizon: 24 * time.Hour, MinHistory: 4 * 24 * time.Hour,
		MaxHistory: 7 * 24 * time.Hour, Origins: 4}
	ws, err := Windows(dir, []Trace{tr})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 4 {
		t.Fatalf("%d windows, want 4", len(ws))
	}
	wantOrigins := []int{96, 216, 336, 456} // 96 + k·(480−24−96)/3
	for k, w := range ws {
		if w.Origin != wantOrigins[k] || len(w.Test) != 24 || w.Step != time.Hour {
			t.Errorf("window %d: origin %d, %d test values, step %v", k, w.Origin, len(w.Test), w.Step)
		}
		if want := min(w.Origin, 168); len(w.Train) != want {
			t.Errorf("window %d: %d history values, want %d", k, len(w.Train), want)
		}
		if wantHalf := 1 + k/2; w.Half != wantHalf {
			t.Errorf("window %d in half %d, want %d", k, w.Half, wantHalf)
		}
		if !w.Time.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(w.Origin) * time.Hour)) {
			t.Errorf("window %d time %v", k, w.Time)
		}
	}
	// The gap at 5 is interpolated in the history; 350 falls in the
	// third window's test and stays missing there, but is interpolated
	// in the fourth's history.
	if v := ws[0].Train[5]; v != 105 {
		t.Errorf("interpolated history value %v, want 105", v)
	}
	if !math.IsNaN(ws[2].Test[350-336]) {
		t.Errorf("test gap filled: %v", ws[2].Test[350-336])
	}
	if v := ws[3].Train[350-(456-168)]; v != 100+350%24 {
		t.Errorf("history gap %v, want %d", v, 100+350%24)
	}
	// Two days of history give the day; the week needs two weeks.
	if ws[0].Period != 24 || len(ws[0].Periods) != 1 || len(ws[3].Periods) != 1 {
		t.Errorf("periods %d %v / %v", ws[0].Period, ws[0].Periods, ws[3].Periods)
	}
	tr.Origins = 40
	tr.MinHistory = 19 * 24 * time.Hour
	if _, err := Windows(dir, []Trace{tr}); err == nil {
		t.Error("more history than the trace holds: no error")
	}
	if _, err := Windows(dir, []Trace{{ID: "x", File: "missing.csv", Horizon: time.Hour, MinHistory: time.Hour, Origins: 2}}); err == nil {
		t.Error("missing file: no error")
	}
}

func TestScoreForecast(t *testing.T) {
	w := Window{Series: "s", Period: 1, Train: []float64{1, 2, 4}, Test: []float64{3, math.NaN(), 10}}
	sc := ScoreForecast(w, []float64{2, 0, 6}, []float64{1, 0, 7}, []float64{4, 0, 8}, []float64{0, 0, 5}, []float64{5, 0, 9})
	// Scored steps 0 and 2: errors 1 and 4; 80% [1,4] holds 3, [7,8] not
	// 10; 95% [0,5] holds 3, [5,9] misses 10 by 1: (5 + 4 + 40·1)/2.
	if sc.MAE != 2.5 || sc.Cov80 != 0.5 || sc.Cov95 != 0.5 || sc.IS95 != 24.5 || sc.Scale != 1.5 {
		t.Errorf("%+v", sc)
	}
}

func TestSummarise(t *testing.T) {
	s := func(series string, origin, half int, method string, mae float64) Score {
		return Score{Series: series, Origin: origin, Half: half, Method: method, MAE: mae, Scale: 1, Cov80: 1, Cov95: 1}
	}
	scores := []Score{
		s("a", 1, 1, Baseline, 2), s("a", 1, 1, "m", 1),
		s("a", 2, 2, Baseline, 2), s("a", 2, 2, "m", 3),
		s("b", 1, 1, Baseline, 4), s("b", 1, 1, "m", 1),
	}
	per := Summarise(scores, nil)
	want := map[string]float64{"a/m": 1, "b/m": 0.25, "a/" + Baseline: 1, "b/" + Baseline: 1}
	for _, p := range per {
		if r := want[p.Series+"/"+p.Method]; math.Abs(p.Ratio-r) > 1e-12 {
			t.Errorf("%s/%s ratio %v, want %v", p.Series, p.Method, p.Ratio, r)
		}
	}
	for _, o := range Overall(per) {
		if o.Method == "m" && math.Abs(o.Ratio-0.5) > 1e-12 {
			t.Errorf("geometric mean %v, want 0.5", o.Ratio)
		}
	}
	first := Summarise(scores, func(s Score) bool { return s.Half == 1 })
	for _, p := range first {
		if p.Series == "a" && p.Method == "m" && p.Ratio != 0.5 {
			t.Errorf("first half ratio %v, want 0.5", p.Ratio)
		}
	}
}

func TestReadReference(t *testing.T) {
	good := "series,origin,method,n_train,train_sum,mae,cov80,cov95,is95,seconds,error\n" +
		"a,10,ets,10,55,1.5,0.8,1,3.25,0.01,\"\"\n" +
		"a,10,stlf,10,55,NA,NA,NA,NA,0.001,\"y is not a seasonal ts object\"\n"
	rows, err := ReadReference(strings.NewReader(good), "good.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].MAE != 1.5 || rows[0].NTrain != 10 || !math.IsNaN(rows[1].MAE) || rows[1].Failed == "" {
		t.Errorf("%+v", rows)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"header", "series,origin\na,1\n", "good.csv"},
		{"origin", strings.Replace(good, "a,10,ets", "a,x,ets", 1), "good.csv:2: origin"},
		{"number", strings.Replace(good, ",1.5,", ",one,", 1), "good.csv:2: mae"},
	} {
		if _, err := ReadReference(strings.NewReader(tc.in), "good.csv"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadReference(strings.NewReader(Reference), "built in"); err != nil {
		t.Errorf("the built-in reference: %v", err)
	}
}

func TestAttach(t *testing.T) {
	w := Window{Series: "a", Origin: 10, Half: 2, Period: 1, Train: []float64{1, 2, 3}, Test: []float64{4}}
	base := []Score{{Series: "a", Origin: 10, Method: Baseline, MAE: 1}}
	ok := func(method string, mae float64) RefScore {
		return RefScore{Score: Score{Series: "a", Origin: 10, Method: method, MAE: mae}, NTrain: 3, TrainSum: 6}
	}
	scores, failed, err := Attach([]RefScore{ok("r_snaive", 1), ok("ets", 0.5), {Score: Score{Series: "a", Origin: 10, Method: "stlf", MAE: math.NaN()}, NTrain: 3, TrainSum: 6, Failed: "no"}}, []Window{w}, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 1 || scores[0].Half != 2 || scores[0].Scale != 1 || failed["stlf"] != 1 {
		t.Errorf("scores %+v failed %v", scores, failed)
	}
	for _, tc := range []struct {
		name string
		ref  []RefScore
		want string
	}{
		{"other window", []RefScore{{Score: Score{Series: "b", Origin: 1}}}, "not a window"},
		{"other history", []RefScore{{Score: Score{Series: "a", Origin: 10, Method: "r_snaive"}, NTrain: 3, TrainSum: 7}}, "summing"},
		{"other baseline", []RefScore{ok("r_snaive", 2)}, "snaive MAE"},
		{"missing window", []RefScore{ok("ets", 1)}, "no R rows"},
	} {
		if _, _, err := Attach(tc.ref, []Window{w}, base); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestWriteWindows(t *testing.T) {
	w := Window{Series: "a", Origin: 3, Time: time.Date(2024, 1, 1, 3, 0, 0, 0, time.UTC), Step: time.Minute,
		Half: 1, Period: 1, Train: []float64{1.5, 2, 0.1}, Test: []float64{math.NaN(), 4}}
	var b strings.Builder
	if err := WriteWindows(&b, []Window{w}); err != nil {
		t.Fatal(err)
	}
	want := "series,origin,time,step_seconds,half,period,periods,train_sum,train,test\n" +
		"a,3,2024-01-01T03:00:00Z,60,1,1,,3.6000000000000001,1.5 2 0.1,NA 4\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// tracesDir returns the shared traces folder or skips the test.
func tracesDir(t *testing.T) string {
	dir := filepath.Join(datasets.Locate(), "traces")
	if _, err := os.Stat(filepath.Join(dir, "nyc_taxi.csv")); err != nil {
		t.Skipf("recorded traces not found at %s (set %s to the shared datasets folder): %v", dir, datasets.EnvDir, err)
	}
	return dir
}

// The built-in R reference matches the windows of DefaultTraces exactly:
// same histories, and R's seasonal naive reproduces the baseline.
func TestReferenceMatchesTheWindows(t *testing.T) {
	ws, err := Windows(tracesDir(t), DefaultTraces())
	if err != nil {
		t.Fatal(err)
	}
	scores, err := Evaluate(context.Background(), ws, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ReadReference(strings.NewReader(Reference), "r_reference.csv")
	if err != nil {
		t.Fatal(err)
	}
	rs, failed, err := Attach(ref, ws, scores)
	if err != nil {
		t.Fatal(err)
	}
	per := Summarise(append(scores, rs...), nil)
	for _, o := range Overall(per) {
		t.Logf("%-6s geo-mean ratio %.3f over %d traces", o.Method, o.Ratio, o.Windows)
	}
	if failed["ets"] != 0 || failed["tbats"] != 0 {
		t.Errorf("R's ets or tbats failed on some windows: %v", failed)
	}
}

var _ model.Forecaster = seasonal.Naive{}
