// Package influx stores prewarm's time series in InfluxDB through the
// official client, github.com/influxdata/influxdb-client-go/v2.
//
// It speaks InfluxDB's v2 HTTP API (/api/v2/write, /api/v2/query with Flux),
// which InfluxDB 2.x serves natively and InfluxDB 1.8+ serves as its
// compatibility API when Flux is enabled (flux-enabled = true under [http]).
// Against 1.8 use Token "" (no auth) or "user:password", Org "-" (ignored)
// and Bucket "database/retention-policy", e.g. "prewarm/autogen".
//
// Each point is one line-protocol row: the measurement, the point's tags,
// one float field named "value" and a nanosecond timestamp.
//
// # Writes
//
// Write splits a batch into requests of Config.BatchSize points and sends
// each through the client's blocking WriteAPI, so that it knows, before it
// returns, whether every point landed. (The client's asynchronous WriteAPI
// would return at once and report failures later on a channel, after the
// caller had forgotten the points; it also drops batches when its own retry
// buffer fills.) A failed request stops the Write: the error says how many
// points were written before it and wraps store.ErrUnavailable when the
// server could not be reached, timed out or answered 5xx/429, and
// store.ErrMisconfigured when it refused the token, org or bucket
// (401/403/404), so that in both cases the caller keeps the batch and
// retries it; any other answer (a 400 about the points) is a rejection of
// that batch. Rewriting points that already
// landed is harmless: InfluxDB keys a point by series and time and keeps the
// last value written.
//
// # Reads
//
// Query builds one Flux script: from(bucket) |> range |> filter on
// measurement, field and the matched tags |> aggregateWindow(every: Step,
// fn: ..., createEmpty: false). Every string from the caller is escaped as a
// Flux string literal (quotes, backslashes and "${" interpolation), so a tag
// value cannot change the script. aggregateWindow's windows are aligned to
// the Unix epoch and clipped to the range; Query reports each sample at its
// window's epoch-aligned start, as the embedded store does.
package influx
