// Package promscrape fetches and parses one Prometheus text-format page
// (the exposition format of /metrics endpoints and dcgm-exporter) with
// github.com/prometheus/common/expfmt. It is shared by the dcgm and service
// sources; it keeps no state between scrapes.
package promscrape
