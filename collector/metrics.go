package collector

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/store"
)

// Metrics is the collector's own health on /metrics: what it gathered,
// rejected, buffered and wrote, and which sources are up. It also re-exports
// the last GPU readings as gauges (prewarm_gpu_util{host,gpu,...}) so a
// Prometheus can scrape the collector as it would a dcgm-exporter.
type Metrics struct {
	cycles        prometheus.Counter
	samples       *prometheus.CounterVec
	rejected      *prometheus.CounterVec
	sourceUp      *prometheus.GaugeVec
	gatherSeconds *prometheus.GaugeVec
	written       prometheus.Counter
	writeErrors   *prometheus.CounterVec
	buffered      *prometheus.GaugeVec
	dropped       *prometheus.CounterVec
	lastWrite     prometheus.Gauge
	ready         prometheus.Gauge
	gpu           *gpuGauges
}

// NewMetrics creates the collector's metrics and registers them on reg (a
// registry of the caller's, never the global one).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	const ns = "prewarm_collector"
	m := &Metrics{
		cycles: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "cycles_total",
			Help: "Collection cycles run."}),
		samples: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "samples_total",
			Help: "Samples accepted from each source."}, []string{"source"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "rejected_samples_total",
			Help: "Samples or scrapes refused, by source and reason (nan, negative, malformed, too_large, invalid, clock_jump, out_of_order, future)."},
			[]string{"source", "reason"}),
		sourceUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "source_up",
			Help: "1 when the source's last gather succeeded."}, []string{"source"}),
		gatherSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "gather_duration_seconds",
			Help: "Wall time of the source's last gather."}, []string{"source"}),
		written: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "points_written_total",
			Help: "Points the store acknowledged."}),
		writeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "write_errors_total",
			Help: "Failed store writes: unavailable or misconfigured (kept and retried) or rejected (retried, then dropped)."}, []string{"reason"}),
		buffered: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "buffered_points",
			Help: "Points waiting to be written, in memory or in the disk spool."}, []string{"where"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "dropped_points_total",
			Help: "Points lost, by reason: buffer_full (memory bound or spool_max_bytes reached), disk_full (no room on the spool's disk), spool_error (another failure to write the spool), rejected (refused by the store), spool_corrupt (damaged spool records)."}, []string{"reason"}),
		lastWrite: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "last_store_write_timestamp_seconds",
			Help: "Unix time of the last batch the store accepted (0: none since start)."}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "ready",
			Help: "1 when points reach the store (what /readyz answers), 0 while they have waited for more than the configured intervals."}),
		gpu: newGPUGauges(),
	}
	for _, c := range []prometheus.Collector{m.cycles, m.samples, m.rejected, m.sourceUp, m.gatherSeconds,
		m.written, m.writeErrors, m.buffered, m.dropped, m.lastWrite, m.ready, m.gpu} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// gpuGaugeLabels are the labels of every re-exported GPU gauge; a point
// lacking a tag gets an empty label.
var gpuGaugeLabels = []string{store.TagSource, store.TagPool, store.TagHost, store.TagGPU, store.TagUUID, store.TagModel}

// gpuGauges exports the last cycle's GPU points of each source as const
// gauges, so series of GPUs that vanish vanish from /metrics too.
type gpuGauges struct {
	mu       sync.Mutex
	bySource map[string][]store.Point
	descs    map[string]*prometheus.Desc
}

func newGPUGauges() *gpuGauges {
	g := &gpuGauges{bySource: map[string][]store.Point{}, descs: map[string]*prometheus.Desc{}}
	for _, name := range []string{store.GPUUtil, store.GPUSMActive, store.GPUEngineActive, store.GPUMemUsedBytes, store.GPUMemFreeBytes,
		store.GPUMemTotalBytes, store.GPUPowerWatts, store.GPUPowerLimitWatts, store.GPUTempCelsius, store.GPUProcesses} {
		g.descs[name] = prometheus.NewDesc("prewarm_"+name, "Last "+strings.ReplaceAll(name, "_", " ")+" read by the collector.",
			gpuGaugeLabels, nil)
	}
	return g
}

// set replaces the GPU points of one source.
func (g *gpuGauges) set(source string, points []store.Point) {
	var keep []store.Point
	for _, p := range points {
		if _, ok := g.descs[p.Measurement]; ok {
			keep = append(keep, p)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(keep) == 0 {
		delete(g.bySource, source)
		return
	}
	g.bySource[source] = keep
}

// Describe implements prometheus.Collector.
func (g *gpuGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range g.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (g *gpuGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	for _, points := range g.bySource {
		for _, p := range points {
			values := make([]string, len(gpuGaugeLabels))
			for i, l := range gpuGaugeLabels {
				values[i] = p.Tags[l]
			}
			key := p.Measurement + "\x00" + strings.Join(values, "\x00")
			if seen[key] { // two sources can't report one series twice
				continue
			}
			seen[key] = true
			ch <- prometheus.MustNewConstMetric(g.descs[p.Measurement], prometheus.GaugeValue, p.Value, values...)
		}
	}
}
