// Package collector gathers GPU and service metrics from its sources and
// writes them, complete and in order, to a store.Store.
//
// The shape is Telegraf's: a Source is an input (NVML, a dcgm-exporter
// scrape, a service's Prometheus endpoint; see the sub-packages) whose Gather
// returns the points it read. Every Interval the Collector gathers all
// sources at once, tags the points (global tags, per-input tags, the host's
// pool), checks them (NaN, infinite or negative values, malformed scrapes,
// tags no store can hold, clock jumps and out-of-order samples are counted,
// logged once per source and reason, and never written), hands them to
// Observers (alerts, the GPU gauges on /metrics) and queues them in a
// buffer.Buffer. A separate writer drains the buffer into the store in
// order, retrying while the store is unavailable or refuses its
// credentials, so an outage costs memory or disk, not data. A write the
// store rejects is retried one batch at a time, so only the batch it keeps
// refusing is dropped (and counted).
//
// Measurement names shared by the sources, the alert rules and the
// forecaster are the constants below (units in the names); the sources'
// READMEs say which raw metric each one comes from.
package collector
