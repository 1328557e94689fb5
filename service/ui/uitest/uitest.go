// Package uitest checks the status page of a running service in headless
// Chromium (internal/chromium): the page loads nothing but its own origin,
// raises no exception, console error or warning, refreshes itself, and
// draws its charts with data. Tests of the service, the demo and the
// binary share it.
package uitest

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/internal/chromium"
)

// Report is what the page showed.
type Report struct {
	// Points is the number of data points drawn per chart series
	// ("demand-chart/demand": 300, ...), from the paths' data-points.
	Points map[string]int
	// PathBytes is the length of each series' SVG path data.
	PathBytes map[string]int
	// PoolRows is the number of rows of the pools table.
	PoolRows int
	// Refreshes counts the page's refreshes while it was watched.
	Refreshes int
	// Requests are the URLs the page asked for.
	Requests []string
	// Saving is the cost card's saving figure and its note, as shown.
	Saving string
	// Now is the selected pool's "Now" card, one "key: value" line a row.
	Now string
	// Gates is the text of the pools table's gate cells, one line a pool.
	Gates string
	// Screenshot is a PNG of the viewport (1400×1000).
	Screenshot []byte
}

// pageState reads the page once its first refresh is done.
const pageState = `(() => {
  const out = {points: {}, bytes: {}, rows: 0, refreshed: Number(document.body.dataset.refreshed) || 0};
  for (const p of document.querySelectorAll("svg.chart path[data-series]")) {
    const key = p.closest("svg").id + "/" + p.dataset.series;
    out.points[key] = (out.points[key] || 0) + Number(p.dataset.points);
    out.bytes[key] = (out.bytes[key] || 0) + p.getAttribute("d").length;
  }
  out.rows = document.querySelectorAll("#pools tbody tr[data-pool]").length;
  out.saving = document.getElementById("saving").textContent + " | " + document.getElementById("saving-note").textContent;
  out.now = [...document.querySelectorAll("#now dt")].map((dt) => dt.textContent + ": " + dt.nextElementSibling.textContent).join("\n");
  out.gates = [...document.querySelectorAll("#pools tbody tr[data-pool] td:nth-child(3)")].map((td) => td.textContent).join("\n");
  out.stale = document.getElementById("live").classList.contains("stale") ? document.getElementById("live").textContent : "";
  return out;
})()`

// openPage starts Chromium (skipping t without one) on base's status
// page, refreshing every half second; the caller closes it.
func openPage(ctx context.Context, t testing.TB, base string) *chromium.Browser {
	t.Helper()
	b, err := chromium.Start(ctx, chromium.Find(t), 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Navigate(ctx, base+"/?refresh=0.5"); err != nil {
		b.Close()
		t.Fatal(err)
	}
	return b
}

// Check opens base (the service's root URL) in Chromium, watches the page
// for watch (at least two refreshes at ?refresh=0.5), and fails t on any
// problem the page had. It returns what the page drew.
func Check(t testing.TB, base string, watch time.Duration) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watch+60*time.Second)
	defer cancel()
	b := openPage(ctx, t, base)
	defer b.Close()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(ctx, `Number(document.body.dataset.refreshed) >= 1 && document.querySelector("#demand-chart path[data-series=demand]")`); err != nil {
		t.Fatalf("the page drew no demand chart: %v\nproblems: %v", err, b.Problems())
	}
	time.Sleep(watch)
	var st struct {
		Points, Bytes map[string]int
		Rows          int
		Refreshed     int
		Stale         string
		Saving        string
		Now, Gates    string
	}
	if err := b.Eval(ctx, pageState, &st); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	r := Report{Points: st.Points, PathBytes: st.Bytes, PoolRows: st.Rows, Refreshes: st.Refreshed, Requests: b.Requests(), Screenshot: shot, Saving: st.Saving,
		Now: st.Now, Gates: st.Gates}
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page had %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
	for _, req := range r.Requests {
		if ru, err := url.Parse(req); err != nil || (ru.Host != u.Host && ru.Scheme != "data") {
			t.Errorf("the page requested %s, off its origin %s", req, u.Host)
		}
	}
	if st.Stale != "" {
		t.Errorf("the page's last refresh failed: %s", st.Stale)
	}
	if r.Refreshes < 2 {
		t.Errorf("the page refreshed %d times in %v, want it to refresh itself", r.Refreshes, watch)
	}
	return r
}

// String summarises the report for a test log.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d pool rows, %d refreshes, %d requests; points per series:", r.PoolRows, r.Refreshes, len(r.Requests))
	for _, k := range slices.Sorted(maps.Keys(r.Points)) {
		fmt.Fprintf(&b, " %s=%d", k, r.Points[k])
	}
	return b.String()
}

// OlderDecisions opens base's status page in Chromium, waits for its
// decisions table, clicks "Show older decisions" and returns how many rows
// the table held before and after, and its note. It fails t when the page
// has no such button, or has a problem.
func OlderDecisions(t testing.TB, base string) (before, after int, note string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := openPage(ctx, t, base)
	defer b.Close()
	rows := `document.querySelectorAll("#decisions tbody tr td:first-child[title]").length`
	if err := b.WaitFor(ctx, `document.getElementById("decisions-older") && `+rows+` > 0`); err != nil {
		t.Fatalf("no decisions with a \"Show older decisions\" button: %v\nproblems: %v", err, b.Problems())
	}
	if err := b.Eval(ctx, rows, &before); err != nil {
		t.Fatal(err)
	}
	if err := b.Eval(ctx, `document.getElementById("decisions-older").click(), 0`, new(int)); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(ctx, rows+` > `+fmt.Sprint(before)); err != nil {
		t.Fatalf("the older decisions did not appear: %v\nproblems: %v", err, b.Problems())
	}
	// Through two refreshes, the older rows stay.
	time.Sleep(1200 * time.Millisecond)
	if err := b.Eval(ctx, rows, &after); err != nil {
		t.Fatal(err)
	}
	if err := b.Eval(ctx, `document.getElementById("decisions-note").textContent`, &note); err != nil {
		t.Fatal(err)
	}
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page had %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
	return before, after, note
}
