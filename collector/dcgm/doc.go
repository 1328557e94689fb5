// Package dcgm is the collector source that scrapes an NVIDIA dcgm-exporter
// (/metrics in Prometheus text format) and turns its per-GPU fields into
// prewarm's GPU measurements (gpu_util, gpu_mem_used_bytes, ...), tagged with
// the GPU's index, UUID, model and host. See README.md for the mapping.
package dcgm
