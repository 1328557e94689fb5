// Package remote reads a prewarm store over HTTP: a small read-only query
// API that the collector serves next to /metrics, and a store.Store client
// for it.
//
// It exists because the embedded store (package store/embedded) is one bbolt
// file that a single process holds locked. When the collector writes to
// that file, the forecaster cannot open it too; with remote, the forecaster
// reads the collector's store (embedded or InfluxDB alike) through the
// collector instead: `forecaster serve --store http://127.0.0.1:9108`.
//
// # Endpoint
//
// NewHandler serves
//
//	GET /api/v1/query?measurement=M&match=K=V&match=K2=V2
//	    &start=RFC3339&end=RFC3339&step=5m&aggregate=mean
//
// measurement, start and end are required; start and end are RFC 3339
// times (fractional seconds and any offset allowed, e.g.
// 2026-01-05T00:00:00.5Z); the range is [start, end). match is repeatable,
// one tag per parameter, split at its first '=' (so a tag key cannot hold
// '=', a value can: the client refuses such a query as
// store.ErrInvalidQuery); a key may appear once. step is a Go duration (5m, 1h,
// 90s); without it the raw points come back; with it aggregate is required
// and is one of mean, sum, max, min, last, count. Unknown or repeated
// parameters are refused, so that a typo ("mach=pool=a") cannot silently
// widen the query. The semantics are exactly store.Querier's.
//
// The answer is one JSON object:
//
//	{"series":[
//	  {"measurement":"gpu_util","tags":{"gpu":"0","pool":"a"},
//	   "samples":[[1767571200000000000,41.5],[1767571500000000000,"+Inf"]]}
//	]}
//
// Series come in store order (sorted by store.CanonicalTags); each sample is
// [time, value] with time in integer Unix nanoseconds (exact, unlike
// milliseconds; JavaScript clients must parse it as a BigInt or string) and
// value a JSON number printed so that it parses back to the same float64
// bit for bit. Stores only hold finite values, but an aggregate can
// overflow, so +Inf, -Inf and NaN are sent as those strings. For an
// aggregated query the time is the start of the epoch-aligned window.
//
// Errors are {"error":"...","parameter":"start","limit":"max_points"} with
// status 400 for a query that is malformed or invalid (parameter names the
// culprit), 405 for a method other than GET or HEAD, 503 when the store
// behind it answers store.ErrUnavailable (InfluxDB down), and 500
// otherwise. Error messages pass through the handler's redactor, so a store
// error quoting a secret (an upstream that echoes its request) does not
// carry it out.
//
// # Limits
//
// One query must not be able to exhaust the collector's memory (an OOM kill
// there would also stop its collection). Each refusal names its limit in
// "limit" and says how to narrow the query:
//
//   - max_windows (default 200,000): (end - start) / step of an aggregated
//     query; 400 with parameter "step", before the store is asked anything.
//     Ten years at a 1 s step is 315,619,200 windows.
//   - max_points (default 500,000): samples in the answer, over all series;
//     422. The handler first has the store count the points of each
//     matching series over the whole range (the count aggregate in one or
//     two windows, which scans the points but does not load them). That is
//     a raw answer's size; an aggregated series counts at most one sample
//     per window, and when that bound is over the limit the count is
//     repeated in at most 100 coarse windows per series, each counting at
//     most the answer's windows inside it, so a long range with little
//     data is still answered. The bound is an upper one: a query near the
//     limit can be refused although its answer would fit.
//   - max_response_bytes (default 32 MiB): the JSON answer; 422.
//   - max_concurrent (default 2): queries answered at once; one arriving
//     while that many run waits up to 5 s for a turn, then gets 429 with
//     Retry-After.
//
// # Client
//
// New returns a *Store whose Query calls the endpoint and returns exactly
// what the store behind it returns. It is read-only: Write fails with
// ErrReadOnly, since writes belong to the collector (its buffer and spool
// are what make them lossless). Errors follow store's contract: no
// connection, a timeout, a reply cut short or an HTTP 408, 429 or 5xx wrap
// store.ErrUnavailable (retry later); a 400 or 422 wraps
// store.ErrInvalidQuery (change the query) and carries the server's
// message; a refusal under a limit also wraps ErrLimit, with the limit in
// StatusError.Limit; other statuses are permanent errors with the server's
// message. The client reads at most Options.MaxAnswerBytes of an answer.
package remote
