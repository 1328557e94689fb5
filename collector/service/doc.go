// Package service is the collector source for a service's own Prometheus
// endpoint: the demand signals the forecaster learns from. From the metric
// names in its configuration it derives, per scrape,
//
//   - request rate (requests/s) from a counter: the increase since the last
//     scrape over the time between them, summed over the counter's series,
//     with counter resets handled as Prometheus' rate() does (a value lower
//     than the last one means the counter restarted from zero);
//   - queue length from a gauge (summed over its series);
//   - a latency quantile (P99 by default) from a histogram, computed like
//     PromQL's histogram_quantile over the buckets' increase during the
//     interval, not over the histogram's whole life.
//
// The first scrape only records the counters; rates and quantiles start from
// the second. An interval with no requests yields no latency point (there is
// no latency to report), never a NaN.
package service
