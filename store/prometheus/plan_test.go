package prometheus

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

func TestPromQL(t *testing.T) {
	base := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s, err := New(Config{URL: "http://127.0.0.1:9090"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		q      store.Query
		bounds bounds
		want   []string
	}{
		{"selector, closed ranges", store.Query{Measurement: "service_request_rate", Match: map[string]string{"pool": "sd", "az": `a"b`},
			Start: base, End: base.Add(time.Hour), Step: 5 * time.Minute, Aggregate: store.Max}, closedBounds,
			[]string{`max_over_time({__name__="service_request_rate",az="a\"b",pool="sd"}[299999ms] offset 1ms)`}},
		{"selector, left-open ranges", store.Query{Measurement: "m", Start: base, End: base.Add(time.Hour), Step: 5 * time.Minute, Aggregate: store.Mean},
			leftOpenBounds, []string{`avg_over_time({__name__="m"}[300000ms] offset 1ms)`}},
		{"expression: a subquery on the 15 s grid", store.Query{Expr: `sum(rate(x[1m]))`, Start: base, End: base.Add(time.Hour), Step: 30 * time.Minute, Aggregate: store.Max},
			closedBounds, []string{`max_over_time((sum(rate(x[1m])))[1799999ms:15000ms] offset 1ms)`}},
		{"expression: a 7 s step makes a 7 s grid", store.Query{Expr: `up`, Start: base, End: base.Add(time.Hour), Step: 7 * time.Second, Aggregate: store.Last},
			// base is 3 s past a multiple of 7 s: the first window is clipped to 4 s, the last (base+1h) to 5 s.
			closedBounds, []string{`last_over_time((up)[3999ms:7000ms] offset 1ms)`, `last_over_time((up)[6999ms:7000ms] offset 1ms)`,
				`last_over_time((up)[4999ms:7000ms] offset 1ms)`}},
		{"raw selector", store.Query{Measurement: "m", Start: base, End: base.Add(time.Minute)}, closedBounds,
			[]string{`{__name__="m"}[60001ms]`}},
		{"raw expression", store.Query{Expr: `up == 1`, Start: base, End: base.Add(time.Minute)}, closedBounds, []string{`up == 1`}},
		{"clipped windows", store.Query{Measurement: "m", Start: base.Add(10 * time.Second), End: base.Add(150 * time.Second), Step: time.Minute, Aggregate: store.Count},
			closedBounds, []string{`count_over_time({__name__="m"}[49999ms] offset 1ms)`, `count_over_time({__name__="m"}[59999ms] offset 1ms)`,
				`count_over_time({__name__="m"}[29999ms] offset 1ms)`}},
		{"a 1 ms window on closed ranges is read raw", store.Query{Measurement: "m", Start: base.Add(time.Minute - time.Millisecond), End: base.Add(time.Minute),
			Step: time.Minute, Aggregate: store.Sum}, closedBounds, []string{`{__name__="m"}[2ms]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.plan(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.requests(tc.bounds) {
				if !slices.Contains(got, r.promql) {
					got = append(got, r.promql)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("PromQL:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

// TestRequestsCoverWindows checks on random ranges and steps that the
// requests of a plan cover each window of [from, to) exactly once, at
// most MaxPoints per query_range, within the count the plan announced.
func TestRequestsCoverWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		step := int64(1 + rng.IntN(5000))
		from := int64(1767571200000) + rng.Int64N(100000) - 50000
		to := from + 1 + rng.Int64N(200000)
		p := plan{selector: `{__name__="m"}`, from: from, to: to, step: step, fn: "count_over_time", agg: store.Count, maxPts: int64(1 + rng.IntN(40)), res: 15000}
		for _, b := range []bounds{closedBounds, leftOpenBounds} {
			reqs := p.requests(b)
			if int64(len(reqs)) > p.count() {
				t.Fatalf("case %d: %d requests, count() said %d", i, len(reqs), p.count())
			}
			var windows []int64
			for _, r := range reqs {
				switch {
				case r.step > 0:
					if pts := (r.end-r.start)/r.step + 1; pts > p.maxPts {
						t.Fatalf("case %d: a query_range of %d points, max %d", i, pts, p.maxPts)
					}
					for e := r.start; e <= r.end; e += r.step {
						windows = append(windows, e-r.shift)
					}
				case r.asWindow:
					windows = append(windows, r.window)
				}
			}
			var want []int64
			for w := floorDiv(from, step) * step; w < to; w += step {
				want = append(want, w)
			}
			if !slices.Equal(windows, want) {
				t.Fatalf("case %d (from %d to %d step %d, max %d points): windows %v, want %v", i, from, to, step, p.maxPts, windows, want)
			}
		}
	}
}

func TestLargestDivisor(t *testing.T) {
	for _, tc := range []struct{ step, limit, want int64 }{
		{300000, 15000, 15000}, {7000, 15000, 7000}, {20000, 15000, 10000}, {61000, 15000, 12200}, {61001, 15000, 1}, {1, 15000, 1},
	} {
		if got := largestDivisor(tc.step, tc.limit); got != tc.want {
			t.Errorf("largestDivisor(%d, %d) = %d, want %d", tc.step, tc.limit, got, tc.want)
		}
	}
}

func TestCeilMs(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{time.UnixMilli(1500), 1500}, {time.Unix(1, 500000001), 1501}, {time.Unix(-1, 999999999), 0}, {time.Unix(-2, 1), -1999},
	} {
		if got := ceilMs(tc.t); got != tc.want {
			t.Errorf("ceilMs(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
}
