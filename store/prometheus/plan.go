package prometheus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/store"
)

// bounds says which ends a PromQL range [t-R, t] includes on the server.
type bounds int

const (
	unknownBounds  bounds = iota
	closedBounds          // [t-R, t]: Prometheus 2.x
	leftOpenBounds        // (t-R, t]: Prometheus 3.x
)

// overTime maps an aggregate to the PromQL function folding a range.
var overTime = map[store.Aggregate]string{
	store.Mean:  "avg_over_time",
	store.Sum:   "sum_over_time",
	store.Max:   "max_over_time",
	store.Min:   "min_over_time",
	store.Last:  "last_over_time",
	store.Count: "count_over_time",
}

// plan is a validated query in Unix milliseconds, Prometheus' time unit.
type plan struct {
	expr     string // the Expr, or "" for a selector
	selector string // {__name__="m",k="v"} when expr is ""
	from, to int64  // the samples in [from, to) count
	step     int64  // window width; 0: raw
	res      int64  // Expr evaluation step
	fn       string // the *_over_time function of the aggregate
	agg      store.Aggregate
	maxPts   int64
}

// request is one HTTP request of a plan and how to read its answer.
type request struct {
	promql string
	// at is an instant query's time; with step > 0 it is a query_range
	// from start to end (inclusive) every step.
	at, start, end, step int64
	// keepFrom, keepTo: when keep is set, only answer samples at times in
	// [keepFrom, keepTo) count (raw reads ask for a little more).
	keep             bool
	keepFrom, keepTo int64
	// shift is subtracted from the answer's times: a window's end → its start.
	shift int64
	// window, when asWindow, is the time every answer sample is reported
	// at (a clipped window read raw), counted as 1 when count is set.
	asWindow, count bool
	window          int64
}

// describe names the request in errors.
func (r request) describe() string {
	if r.step > 0 {
		return fmt.Sprintf("query_range %s from %s to %s step %s", r.promql, fmtMs(r.start), fmtMs(r.end),
			time.Duration(r.step)*time.Millisecond)
	}
	return fmt.Sprintf("query %s at %s", r.promql, fmtMs(r.at))
}

func fmtMs(ms int64) string { return msTime(ms).Format(time.RFC3339Nano) }

// plan validates q and turns it into milliseconds.
func (s *Store) plan(q store.Query) (plan, error) {
	vq := q // what store.Query.Validate checks: an Expr stands in for the measurement
	if q.Expr != "" {
		if strings.TrimSpace(q.Expr) == "" {
			return plan{}, fmt.Errorf("%w: the PromQL expression is blank", store.ErrInvalidQuery)
		}
		vq.Match = nil
		if vq.Measurement == "" {
			vq.Measurement = "expr"
		}
	}
	if err := vq.Validate(); err != nil {
		return plan{}, err
	}
	if q.Step%time.Millisecond != 0 {
		return plan{}, fmt.Errorf("%w: step %s is not a whole number of milliseconds, Prometheus' resolution", store.ErrInvalidQuery, q.Step)
	}
	p := plan{expr: q.Expr, from: ceilMs(q.Start), to: ceilMs(q.End), step: q.Step.Milliseconds(),
		res: s.cfg.Resolution.Milliseconds(), agg: q.Aggregate, fn: overTime[q.Aggregate], maxPts: int64(s.cfg.MaxPoints)}
	if p.expr == "" {
		sel, err := selector(q.Measurement, q.Match)
		if err != nil {
			return plan{}, err
		}
		p.selector = sel
	}
	if p.step > 0 {
		p.res = largestDivisor(p.step, p.res)
	}
	if n := p.count(); n > int64(s.cfg.MaxRequests) {
		return plan{}, fmt.Errorf("%w: %s to %s in steps of %s needs %d requests to Prometheus, more than the %d allowed; "+
			"use a coarser step or a shorter range", store.ErrInvalidQuery, q.Start.UTC().Format(time.RFC3339),
			q.End.UTC().Format(time.RFC3339), q.Step, n, s.cfg.MaxRequests)
	}
	return p, nil
}

// selector is the PromQL selector of a measurement and its tag matches.
// Tag keys must be label names; values are quoted, so that none can widen
// the selection.
func selector(measurement string, match map[string]string) (string, error) {
	var b strings.Builder
	b.WriteString(`{__name__=`)
	b.WriteString(strconv.Quote(measurement))
	keys := make([]string, 0, len(match))
	for k := range match {
		if !model.LegacyValidation.IsValidLabelName(k) {
			return "", fmt.Errorf("%w: match: tag %q is not a Prometheus label name (letters, digits and '_', not starting with a digit)",
				store.ErrInvalidQuery, k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%s", k, strconv.Quote(match[k]))
	}
	b.WriteString("}")
	return b.String(), nil
}

// largestDivisor returns the largest divisor of step that is at most limit.
func largestDivisor(step, limit int64) int64 {
	for d := min(step, limit); d > 1; d-- {
		if step%d == 0 {
			return d
		}
	}
	return 1
}

// ceilMs is the first Unix millisecond at or after t.
func ceilMs(t time.Time) int64 {
	ms := t.UnixMilli() // floor: Nanosecond() is never negative
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if q*b > a {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// span is the epoch-aligned windows a plan covers.
type span struct {
	first, last int64 // the first and last window's start
	// firstClipped: the first window is not whole inside [from, to);
	// lastClipped: the last one is not either and is another window.
	firstClipped, lastClipped bool
	// fullFrom to fullTo (inclusive, empty when fullFrom > fullTo) are the
	// starts of the windows whole inside [from, to).
	fullFrom, fullTo int64
}

func (p plan) windows() span {
	sp := span{first: floorDiv(p.from, p.step) * p.step, last: floorDiv(p.to-1, p.step) * p.step}
	sp.firstClipped = sp.first < p.from || sp.first+p.step > p.to
	sp.lastClipped = sp.last != sp.first && sp.last+p.step > p.to
	sp.fullFrom, sp.fullTo = sp.first, sp.last
	if sp.firstClipped {
		sp.fullFrom += p.step
	}
	if sp.last+p.step > p.to {
		sp.fullTo -= p.step
	}
	return sp
}

// count is how many requests the plan sends.
func (p plan) count() int64 {
	if p.from >= p.to {
		return 0
	}
	if p.step == 0 {
		if p.expr == "" {
			return ceilDiv(p.to-p.from, rawChunk.Milliseconds())
		}
		g0, gl := p.grid(p.from, p.to)
		if g0 > gl {
			return 0
		}
		return ceilDiv((gl-g0)/p.res+1, p.maxPts)
	}
	sp := p.windows()
	n := int64(0)
	if sp.fullFrom <= sp.fullTo {
		n = ceilDiv((sp.fullTo-sp.fullFrom)/p.step+1, p.maxPts)
	}
	if sp.firstClipped {
		n++
	}
	if sp.lastClipped {
		n++
	}
	return n
}

// grid returns the first and last multiple of res in [from, to).
func (p plan) grid(from, to int64) (g0, gl int64) {
	return ceilDiv(from, p.res) * p.res, floorDiv(to-1, p.res) * p.res
}

// requests lists the plan's requests in time order, for a server whose
// ranges include what b says.
func (p plan) requests(b bounds) []request {
	if p.from >= p.to {
		return nil
	}
	if p.step == 0 {
		return p.raw(p.from, p.to)
	}
	sp := p.windows()
	var out []request
	if sp.firstClipped {
		out = append(out, p.clipped(b, sp.first, max(sp.first, p.from), min(sp.first+p.step, p.to))...)
	}
	for w := sp.fullFrom; w <= sp.fullTo; w += p.maxPts * p.step {
		end := min(w+(p.maxPts-1)*p.step, sp.fullTo)
		out = append(out, request{promql: p.window(b, p.step), start: w + p.step, end: end + p.step, step: p.step, shift: p.step})
	}
	if sp.lastClipped {
		out = append(out, p.clipped(b, sp.last, sp.last, p.to)...)
	}
	return out
}

// raw lists the requests of a raw read of [from, to).
func (p plan) raw(from, to int64) []request {
	var out []request
	if p.expr == "" {
		// SEL[(e-c+1)ms] at e holds [c-1, e] or [c, e] whatever the
		// bounds; keeping [c, e) makes the chunks disjoint.
		chunk := rawChunk.Milliseconds()
		for c := from; c < to; c += chunk {
			e := min(c+chunk, to)
			out = append(out, request{promql: fmt.Sprintf("%s[%dms]", p.selector, e-c+1), at: e,
				keep: true, keepFrom: c, keepTo: e})
		}
		return out
	}
	g0, gl := p.grid(from, to)
	for g := g0; g <= gl; g += p.maxPts * p.res {
		out = append(out, request{promql: p.expr, start: g, end: min(g+(p.maxPts-1)*p.res, gl), step: p.res})
	}
	return out
}

// window is the PromQL folding [t-width, t) at evaluation time t: the
// range ends 1 ms before t (offset 1ms) and spans width-1 ms more on a
// server with closed ranges, width on one with left-open ranges.
func (p plan) window(b bounds, width int64) string {
	r := width
	if b == closedBounds {
		r--
	}
	if p.expr == "" {
		return fmt.Sprintf("%s(%s[%dms] offset 1ms)", p.fn, p.selector, r)
	}
	return fmt.Sprintf("%s((%s)[%dms:%dms] offset 1ms)", p.fn, p.expr, r, p.res)
}

// clipped lists the requests for the part [x, y) of the window starting at w.
func (p plan) clipped(b bounds, w, x, y int64) []request {
	if b == closedBounds && y-x == 1 {
		// A closed range cannot be 1 ms wide (PromQL refuses [0ms]): read
		// the one millisecond raw; a series holds at most one sample there.
		reqs := p.raw(x, y)
		for i := range reqs {
			reqs[i].asWindow, reqs[i].window, reqs[i].count = true, w, p.agg == store.Count
		}
		return reqs
	}
	return []request{{promql: p.window(b, y-x), at: y, asWindow: true, window: w}}
}
