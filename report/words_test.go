package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// An SLO attainment is printed to a hundredth of a percent, and a
// policy that missed any request never reads 100%.
func TestAttainment(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{1, "100.00%"}, {0.99999, "99.99%"}, {0.99995, "99.99%"}, {0.99969, "99.97%"},
		{0.99356, "99.36%"}, {0.995, "99.50%"}, {0, "0.00%"},
	} {
		if got := attainment(tc.v); got != tc.want {
			t.Errorf("attainment(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// A share just under a rule's limit is never printed as the limit.
func TestPctAgainst(t *testing.T) {
	for _, tc := range []struct {
		v, limit float64
		want     string
	}{
		{0.84, 0.9, "84%"}, {0.8996, 0.9, "89.9%"}, {0.895, 0.9, "89.5%"}, {0.9, 0.9, "90%"}, {0.9004, 0.9, "90%"},
		{0.5996, 0.6, "59.9%"}, {0.79, 0.6, "79%"},
	} {
		if got := pctAgainst(tc.v, tc.limit); got != tc.want {
			t.Errorf("pctAgainst(%v, %v) = %q, want %q", tc.v, tc.limit, got, tc.want)
		}
	}
}

// The headroom is said in words whose figures add up to max, with the
// noun's number following the count.
func TestHeadroomWords(t *testing.T) {
	for _, tc := range []struct {
		peak, max int
		want      string
	}{
		{29, 1000, "max 1000 leaves room for 971 more instances (97% of it) above the peak of 29"},
		{49, 50, "max 50 leaves room for 1 more instance (2% of it) above the peak of 49"},
		{40, 40, "no headroom: the peak of 40 instances is max itself"},
		{45, 40, "no headroom: the peak of 45 instances is 5 above max 40"},
		{1, 0, "no headroom: the peak of 1 instance is 1 above max 0"},
	} {
		cp := Capacity{Max: tc.max, Peak: tc.peak, Headroom: tc.max - tc.peak}
		if got := cp.HeadroomWords(); got != tc.want {
			t.Errorf("peak %d, max %d: %q, want %q", tc.peak, tc.max, got, tc.want)
		}
	}
}

// The gate's reasons are printed without comparison signs.
func TestComparisonWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"model trusted: MAE 1.07 <= seasonal naive 1.76", "model trusted: MAE 1.07 at most seasonal naive 1.76"},
		{"profile: model MAE 26.7 > seasonal naive 12.2", "profile: model MAE 26.7 above seasonal naive 12.2"},
		{"model trusted (no scores yet)", "model trusted (no scores yet)"},
	} {
		if got := comparisonWords(tc.in); got != tc.want {
			t.Errorf("comparisonWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Seasonal periods are listed in words, not in Prometheus' notation.
func TestSpansWords(t *testing.T) {
	day, week := Duration(24*time.Hour), Duration(7*24*time.Hour)
	for _, tc := range []struct {
		ds   []Duration
		want string
	}{
		{nil, "none"},
		{[]Duration{day}, "a day"},
		{[]Duration{day, week}, "a day and a week"},
		{[]Duration{Duration(12 * time.Hour), day, week}, "12 hours, a day and a week"},
	} {
		if got := spansWords(tc.ds); got != tc.want {
			t.Errorf("spansWords(%v) = %q, want %q", tc.ds, got, tc.want)
		}
	}
}

// Each policy's SLO attainment reads the same in the chart, the table and
// the sentences; the body states no formula, and the appendix holds them.
func TestRenderedFiguresAgree(t *testing.T) {
	rep := fullReport(t)
	for _, format := range []string{FormatHTML, FormatMarkdown} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, rep, format); err != nil {
				t.Fatal(err)
			}
			text := html.UnescapeString(buf.String())
			for _, p := range rep.Backtest.Policies {
				want := attainment(p.SLOAttainment)
				if !strings.Contains(text, want) {
					t.Errorf("%s: attainment %s not printed", p.Name, want)
				}
				if round1 := pct(p.SLOAttainment, 1); p.SLOAttainment < 1 && round1 == "100.0%" && strings.Contains(text, ">"+round1) {
					t.Errorf("%s: a shortfall printed as %s", p.Name, round1)
				}
			}
			if b := rep.Backtest.Baseline; b != nil && !strings.Contains(text, attainment(b.SLOAttainment)+" of requests within the SLO") {
				t.Errorf("the baseline's sentence does not state its attainment as %s", attainment(b.SLOAttainment))
			}
			appendix := strings.Index(text, "ppendix C. How the advice")
			if format == FormatMarkdown {
				appendix = strings.Index(text, "ppendix: how the advice")
			}
			if appendix < 0 {
				t.Fatal("no appendix of formulas")
			}
			body, formulas := text, text[appendix:]
			if i := strings.Index(body, "<body>"); i >= 0 {
				body = body[i:appendix] // not the stylesheet
			} else {
				body = body[:appendix]
			}
			body = regexp.MustCompile(`<svg[\s\S]*?</svg>`).ReplaceAllString(body, "")
			for _, f := range []string{"C(k)", "argmin", "r/p", "r / p", "Σ", "⌊", "λ·b", "≥", " <= ", " − peak", "= max"} {
				if strings.Contains(body, f) {
					t.Errorf("the body states the formula %q", f)
				}
			}
			for _, f := range []string{"C(k)", "argmin", "Σ", "⌊", "λ·b", "MASE is"} {
				if !strings.Contains(formulas, f) {
					t.Errorf("the appendix lacks %q", f)
				}
			}
			plain := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(body, " ")
			plain = regexp.MustCompile(`\s+`).ReplaceAllString(plain, " ")
			busy := regexp.MustCompile(`(?i)busy share (\d+)%|busy share of the baseline \([^)]*\) (\d+)%|` +
				`behind the reserved advice \((\d+)%\)|needed in (\d+)% of the hours`)
			stated := 0
			for _, at := range busy.FindAllStringSubmatchIndex(plain, -1) {
				if strings.HasSuffix(strings.ToLower(plain[:at[0]]), "break-even ") {
					continue // the break-even share, not a busy share
				}
				stated++
				m := plain[at[0]:at[1]]
				if got := regexp.MustCompile(`(\d+)%`).FindString(m); got != pct(rep.Reserved.BusyShare, 0) {
					t.Errorf("%q: a busy share of %s, the baseline's is %s", m, got, pct(rep.Reserved.BusyShare, 0))
				}
			}
			if stated < 3 {
				t.Errorf("the busy share is stated %d times, want the summary, the advice and the purchase section", stated)
			}
			for _, bad := range []string{"1d, 1w", "1w (", " 1 more instances", "spare above"} {
				if strings.Contains(text, bad) {
					t.Errorf("the report reads %q", bad)
				}
			}
		})
	}
}

// The gate's own reasons read in words in the report, the tolerance
// included, so that the figures agree with the verdict; no comparison
// sign is left.
func TestGateWordsOfThePlannersReasons(t *testing.T) {
	cfg := planner.DefaultConfig()
	cfg.Gating.Tolerance = 1.5
	for _, tc := range []struct {
		in   planner.GateInput
		want string
	}{
		{planner.GateInput{HistorySteps: 10000, Season: 24, ModelError: 1.07, ProfileError: 2, NaiveError: 1.76},
			"model trusted: MAE 1.07 at most seasonal naive's 1.76"},
		{planner.GateInput{HistorySteps: 10000, Season: 24, ModelError: 2, ProfileError: 2, NaiveError: 1.76},
			"model trusted: MAE 2 within 1.5× seasonal naive's 1.76"},
		{planner.GateInput{HistorySteps: 10000, Season: 24, ModelError: 3, ProfileError: 1, NaiveError: 1.76},
			"stepped back to seasonal profile: model MAE 3 above 1.5× seasonal naive's 1.76"},
		{planner.GateInput{HistorySteps: 10, Season: 24, ModelError: 3, ProfileError: 1, NaiveError: 1.76},
			"forecast stepped back, reactive only: history 10 steps below 2 seasons of 24; history 10 steps below 1 season of 24"},
	} {
		if got := comparisonWords(cfg.Gate(tc.in).Reason); got != tc.want {
			t.Errorf("gate reason in words = %q, want %q", got, tc.want)
		}
	}
}
