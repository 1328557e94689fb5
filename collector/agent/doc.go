// Package agent runs the collector process: from a validated
// config.Config it builds the inputs (NVML, dcgm-exporter scrapes,
// services), the store (InfluxDB, the embedded file, or nowhere for a
// printing --once), the spool buffer, the alert engine and its webhooks,
// and the HTTP listener (/metrics, /healthz, /readyz and the store's
// read-only query API), and runs them until its context ends.
//
// The shape is Telegraf's agent: package collector is the pipeline and
// its inputs are sub-packages; this package wires the ones a
// configuration names into a running process. It is a package of its own
// because the inputs import package collector, so the wiring cannot live
// there, and so that cmd/collector holds only the command line.
package agent
