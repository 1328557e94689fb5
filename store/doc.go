// Package store is where prewarm keeps time series: GPU telemetry and service
// demand written by the collector, read back by the forecaster.
//
// A Store is a batch Writer plus a range Querier, shaped like Prometheus'
// storage.Appender/Querier pair. Series are identified by a measurement name
// and a set of tags (pool, host, gpu, ...); each point carries one float64
// value. Implementations live in sub-packages so that a user of one does not
// link the others.
package store
