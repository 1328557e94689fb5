package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
)

// Limits bound what one query may cost the process that serves it (the
// collector, whose buffer an out-of-memory kill would also take down).
// Zero fields take the defaults below. Each refusal is a 4xx whose JSON
// names the limit (see the package doc).
type Limits struct {
	// MaxPoints bounds the samples in one answer, summed over its series.
	// It is checked before the answer is built, from a count the store
	// makes without loading the points.
	MaxPoints int
	// MaxWindows bounds (end - start) / step for an aggregated query: the
	// samples of one series.
	MaxWindows int
	// MaxResponseBytes bounds the JSON answer.
	MaxResponseBytes int
	// MaxConcurrent bounds the queries answered at once; a query arriving
	// while that many run waits up to QueueTimeout for a turn, then is
	// refused with 429.
	MaxConcurrent int
	QueueTimeout  time.Duration
}

// The defaults of Limits' zero fields. 500,000 points is a year of hourly
// windows for 57 series, or 5 weeks of one series' raw 10 s points; the
// forecaster's default refit reads 1,344 windows a series.
const (
	DefaultMaxPoints        = 500_000
	DefaultMaxWindows       = 200_000
	DefaultMaxResponseBytes = 32 << 20
	DefaultMaxConcurrent    = 2
	DefaultQueueTimeout     = 5 * time.Second
)

// The names of the limits in refusals ("limit" in the error JSON, and
// StatusError.Limit), which are also their keys under query_api: in the
// collector's configuration.
const (
	LimitMaxPoints        = "max_points"
	LimitMaxWindows       = "max_windows"
	LimitMaxResponseBytes = "max_response_bytes"
	LimitMaxConcurrent    = "max_concurrent"
)

func (l Limits) withDefaults() Limits {
	if l.MaxPoints <= 0 {
		l.MaxPoints = DefaultMaxPoints
	}
	if l.MaxWindows <= 0 {
		l.MaxWindows = DefaultMaxWindows
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = DefaultMaxConcurrent
	}
	if l.QueueTimeout <= 0 {
		l.QueueTimeout = DefaultQueueTimeout
	}
	return l
}

// HandlerOptions tune NewHandler; the zero value takes the default limits
// and redacts nothing.
type HandlerOptions struct {
	Limits Limits
	// Redactor removes secrets from error answers: a store error can quote
	// what an upstream echoed (InfluxDB's token, behind a proxy).
	Redactor *redact.Redactor
}

// NewHandler serves the query API (see the package doc) over q within
// opts' limits (the zero HandlerOptions: the default limits). Mount it at
// Path. It only reads: nothing sent to it can change the store.
func NewHandler(q store.Querier, opts HandlerOptions) http.Handler {
	limits := opts.Limits.withDefaults()
	return &handler{q: q, limits: limits, red: opts.Redactor, slots: make(chan struct{}, limits.MaxConcurrent),
		bufs: sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}}
}

type handler struct {
	q      store.Querier
	limits Limits
	red    *redact.Redactor
	slots  chan struct{} // one token per query running
	// bufs recycles response buffers: an answer is built whole before it
	// is sent, so that a store error can still become a proper status.
	bufs sync.Pool
}

// refusal is an answer other than 200: its status and JSON body.
type refusal struct {
	status int
	body   errorBody
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.refuse(w, &refusal{http.StatusMethodNotAllowed, errorBody{Error: "method " + r.Method + " not allowed: the query API is read-only (GET)"}})
		return
	}
	// Not r.URL.Query(): it silently drops pairs it cannot unescape.
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		h.refuse(w, &refusal{http.StatusBadRequest, errorBody{Error: "malformed query string: " + err.Error()}})
		return
	}
	q, perr := parseQuery(values)
	if perr != nil {
		h.refuse(w, &refusal{http.StatusBadRequest, errorBody{Error: perr.Error(), Parameter: perr.param}})
		return
	}
	if ref := h.checkWindows(q); ref != nil {
		h.refuse(w, ref)
		return
	}
	if ref := h.acquire(r.Context()); ref != nil {
		if ref.status != 0 {
			w.Header().Set("Retry-After", "1")
			h.refuse(w, ref)
		}
		return
	}
	defer func() { <-h.slots }()

	body, ref := h.answer(r.Context(), q)
	if ref != nil {
		if r.Context().Err() == nil { // else the client has gone; nobody reads an answer
			h.refuse(w, ref)
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(*body)))
	w.Write(*body)
	if cap(*body) <= 4<<20 { // do not pin huge buffers
		h.bufs.Put(body)
	}
}

// checkWindows refuses an aggregated query with more windows than
// MaxWindows, before the store is asked anything.
func (h *handler) checkWindows(q store.Query) *refusal {
	if q.Step == 0 {
		return nil
	}
	if n := windows(q); n > float64(h.limits.MaxWindows) {
		return &refusal{http.StatusBadRequest, errorBody{
			Error: fmt.Sprintf("parameter %q: %s / %s is %.0f windows, more than the limit of %d (query_api.%s): raise step or shorten the range",
				paramStep, q.End.Sub(q.Start), q.Step, n, h.limits.MaxWindows, LimitMaxWindows),
			Parameter: paramStep, Limit: LimitMaxWindows}}
	}
	return nil
}

// windows is how many epoch-aligned windows of q.Step meet [q.Start,
// q.End), in float64 so that no range overflows it.
func windows(q store.Query) float64 {
	first := store.WindowStart(q.Start, q.Step)
	span := q.End.Sub(first) // saturates at ~292 years, far beyond any limit
	return math.Ceil(float64(span) / float64(q.Step))
}

// acquire takes a query slot, waiting up to QueueTimeout. It returns nil
// with the slot held, a 429 refusal, or a refusal with status 0 when the
// client went away while waiting.
func (h *handler) acquire(ctx context.Context) *refusal {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
	}
	timer := time.NewTimer(h.limits.QueueTimeout)
	defer timer.Stop()
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &refusal{}
	case <-timer.C:
		return &refusal{http.StatusTooManyRequests, errorBody{
			Error: fmt.Sprintf("%d queries are running, the limit (query_api.%s), and none finished within %s: retry later",
				h.limits.MaxConcurrent, LimitMaxConcurrent, h.limits.QueueTimeout),
			Limit: LimitMaxConcurrent}}
	}
}

// answer counts what q would return, refuses it when over MaxPoints, and
// otherwise runs it and encodes the answer within MaxResponseBytes.
func (h *handler) answer(ctx context.Context, q store.Query) (*[]byte, *refusal) {
	estimate, err := h.estimate(ctx, q)
	if err != nil {
		return nil, storeRefusal(err)
	}
	if !(estimate <= float64(h.limits.MaxPoints)) { // NaN too
		return nil, h.tooManyPoints(estimate)
	}
	series, err := h.q.Query(ctx, q)
	if err != nil {
		return nil, storeRefusal(err)
	}
	n := 0
	for _, s := range series {
		n += len(s.Samples)
	}
	if n > h.limits.MaxPoints { // points written between the count and the query
		return nil, h.tooManyPoints(float64(n))
	}
	bp := h.bufs.Get().(*[]byte)
	body, err := appendResponse((*bp)[:0], series, h.limits.MaxResponseBytes)
	if errors.Is(err, errAnswerTooLarge) {
		h.bufs.Put(bp)
		return nil, &refusal{http.StatusUnprocessableEntity, errorBody{
			Error: fmt.Sprintf("the answer is larger than the limit of %d bytes (query_api.%s): narrow the range, raise step or match fewer series",
				h.limits.MaxResponseBytes, LimitMaxResponseBytes),
			Limit: LimitMaxResponseBytes}}
	}
	if err != nil {
		h.bufs.Put(bp)
		return nil, &refusal{http.StatusInternalServerError, errorBody{Error: "encoding the answer: " + err.Error()}}
	}
	*bp = body
	return bp, nil
}

func (h *handler) tooManyPoints(n float64) *refusal {
	return &refusal{http.StatusUnprocessableEntity, errorBody{
		Error: fmt.Sprintf("the answer would hold %.0f points, more than the limit of %d (query_api.%s): narrow the range, raise step or match fewer series",
			n, h.limits.MaxPoints, LimitMaxPoints),
		Limit: LimitMaxPoints}}
}

// estimate bounds the samples q returns without loading them: the store
// counts the points of each matching series (the count aggregate), first
// over the whole range in one or two windows. A raw answer holds exactly
// that many samples. An aggregated series holds at most one sample per
// window with points; when the first bound is over MaxPoints, the count is
// repeated in at most refineWindows coarse windows per series (a multiple
// of the step, so every window of the answer lies in one of them), and
// each coarse window counts for at most min(its points, the answer's
// windows inside it). So a long range with little data (ten years hourly
// over a month of points) is answered, and the count itself stays within
// about twice MaxPoints samples.
func (h *handler) estimate(ctx context.Context, q store.Query) (float64, error) {
	span := q.End.Sub(q.Start)
	counts, err := h.count(ctx, q, span)
	if err != nil {
		return 0, err
	}
	perSeries := math.Inf(1)
	if q.Step > 0 {
		perSeries = windows(q)
	}
	total := 0.0
	for _, s := range counts {
		total += math.Min(sumCounts(s.Samples), perSeries)
	}
	if q.Step == 0 || total <= float64(h.limits.MaxPoints) || len(counts) > h.limits.MaxPoints {
		return total, nil // (each series is at least one sample)
	}
	coarseWindows := min(refineWindows, max(2*h.limits.MaxPoints/len(counts), 2))
	perCoarse := int64(math.Ceil(float64(span) / float64(q.Step) / float64(coarseWindows)))
	coarse := q.Step * time.Duration(perCoarse)
	if perCoarse <= 0 || coarse/q.Step != time.Duration(perCoarse) || coarse <= 0 {
		return total, nil // a coarse window too long for a Duration: keep the first bound
	}
	counts, err = h.count(ctx, q, coarse)
	if err != nil {
		return 0, err
	}
	total = 0
	for _, s := range counts {
		for _, smp := range s.Samples {
			total += math.Min(max(smp.Value, 0), float64(perCoarse)) // NaN stays NaN: refused
		}
	}
	return total, nil
}

// refineWindows bounds the coarse windows per series of estimate's second
// count.
const refineWindows = 100

// count asks the store for q's point counts in windows of step.
func (h *handler) count(ctx context.Context, q store.Query, step time.Duration) ([]store.Series, error) {
	if step <= 0 {
		step = time.Duration(math.MaxInt64)
	}
	return h.q.Query(ctx, store.Query{Measurement: q.Measurement, Match: q.Match, Start: q.Start, End: q.End,
		Step: step, Aggregate: store.Count})
}

// sumCounts adds count samples; only positive values count (+Inf, from a
// broken store, refuses the query).
func sumCounts(samples []store.Sample) float64 {
	n := 0.0
	for _, smp := range samples {
		if smp.Value > 0 {
			n += smp.Value
		}
	}
	return n
}

// storeRefusal turns a store error into an answer: 400 for a query the
// store refuses, 503 while it is unavailable, 500 otherwise.
func storeRefusal(err error) *refusal {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, store.ErrInvalidQuery):
		status = http.StatusBadRequest
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		status = http.StatusServiceUnavailable
	}
	return &refusal{status, errorBody{Error: err.Error()}}
}

// errorBody is the JSON of a refused request.
type errorBody struct {
	Error string `json:"error"`
	// Parameter names the query parameter at fault, when one is.
	Parameter string `json:"parameter,omitempty"`
	// Limit names the limit (Limits, query_api: key) the query ran into.
	Limit string `json:"limit,omitempty"`
}

// refuse writes a refusal, its message redacted.
func (h *handler) refuse(w http.ResponseWriter, ref *refusal) {
	ref.body.Error = h.red.String(ref.body.Error)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ref.status)
	json.NewEncoder(w).Encode(ref.body)
}
