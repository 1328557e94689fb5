// Package prometheus reads prewarm's series from Prometheus, or from any
// server that speaks its HTTP query API (VictoriaMetrics, Thanos, Mimir,
// Cortex), so that teams who already keep months of request rate and DCGM
// metrics there need no second collector.
//
// It is the read side only: a store.Store whose Query runs PromQL through
// github.com/prometheus/client_golang/api, and whose Write fails with
// ErrReadOnly (Prometheus is fed by its own scrapes).
//
//	forecaster serve --store prometheus:http://127.0.0.1:9090
//
// # What a Query becomes
//
// A store.Query with Expr set runs that PromQL expression, e.g. a pool's
// `demand: {promql: 'sum(rate(http_requests_total{pool="sd"}[1m]))'}`.
// Without Expr, Measurement and Match become a selector:
// {__name__="service_request_rate",pool="sd"} (tag keys must be valid
// Prometheus label names; values are quoted, so no value can widen it).
// Series come back with their labels as tags (__name__ dropped, job and
// instance kept), sorted by store.CanonicalTags, as every store returns
// them.
//
// With Step zero, a selector returns the raw samples in [Start, End) (an
// instant query of SEL[range], read in chunks of at most a day), and an
// Expr is evaluated every Resolution (default 15s) on the epoch-aligned
// grid of multiples of Resolution inside [Start, End).
//
// With Step set, each sample is one epoch-aligned window [w, w+Step) as
// store.WindowStart defines it, reported at w, folded by Aggregate:
//
//	mean  avg_over_time     sum   sum_over_time    max   max_over_time
//	min   min_over_time     last  last_over_time   count count_over_time
//
// The fold runs in Prometheus: a query_range evaluated at each window's
// end w+Step of
//
//	max_over_time(SEL[Rms] offset 1ms)               (a selector)
//	max_over_time((EXPR)[Rms:RESms] offset 1ms)      (an Expr: a subquery)
//
// whose range covers exactly [w, w+Step) in Prometheus' millisecond time.
// The subquery evaluates EXPR at every multiple of RES inside the window,
// RES being the largest divisor of Step not above Resolution (15s for a
// 5m step, 7s for a 7s step), so a forecast's history of the maximum
// demand per step is the maximum of EXPR over the window, on the same grid
// the embedded store and InfluxDB use. A window clipped by Start or End is
// asked for on its own with the clipped range; a window without samples is
// left out.
//
// Whether a range [t-R, t] includes its left end changed in Prometheus 3
// (2.x: closed; 3.x: left-open). The Store finds out which the server does
// once, with the probe count_over_time(vector(1)[60s:60s]) (2 when closed,
// 1 when left-open), and sizes R to match, so the windows hold the same
// samples on both.
//
// # Chunks
//
// Prometheus refuses a query_range of more than 11,000 points per series.
// Longer ranges are split into consecutive requests of at most
// Config.MaxPoints (default 11,000) evaluation points each, sent one
// after the other, and the pieces are joined per series; raw reads are
// split into days. A query that would need more than MaxRequests
// (default 1,000) requests is refused as store.ErrInvalidQuery.
//
// # Errors
//
// A server that cannot be reached, a timeout, HTTP 429 or 5xx wrap
// store.ErrUnavailable (retry later). PromQL the server refuses (bad_data)
// and queries this package cannot express (a tag key that is no label
// name, a Step that is not whole milliseconds) wrap store.ErrInvalidQuery.
// HTTP 401, 403 and 404 wrap store.ErrMisconfigured: a wrong token or URL.
//
// # Spec and credentials
//
// Open parses prometheus:URL, where URL is the API's base
// (http://HOST:9090, or with a path prefix) and may carry these
// parameters, which are not sent to the server:
//
//	resolution=15s   the grid an Expr is evaluated on (1ms to 1h)
//	timeout=30s      bound on each request (1s to 10m)
//	max_points=11000 evaluation points per query_range request (1 to 11000)
//	org_id=TENANT    sent as X-Scope-OrgID (Mimir, Cortex, Thanos receive)
//	token_file=PATH  bearer token read from PATH on every request
//
// A bearer token may also come from $PREWARM_PROMETHEUS_TOKEN.
// Credentials in the URL are refused (they would show in logs), and the
// token is redacted from every error.
package prometheus
