package dcgm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/store"
)

// Field maps one DCGM field to a prewarm measurement.
type Field struct {
	// Metric is the dcgm-exporter metric name, e.g. DCGM_FI_DEV_GPU_UTIL.
	Metric string
	// Measurement is the point's measurement name.
	Measurement string
	// Scale converts the exporter's unit to the measurement's (MiB to bytes).
	Scale float64
}

const mib = 1 << 20

// Fields are the DCGM fields read, when the exporter publishes them (the
// profiling fields need DCGM's profiling module and are absent on many
// installs; FB_TOTAL and POWER_MGMT_LIMIT are not in the default counters).
var Fields = []Field{
	{"DCGM_FI_DEV_GPU_UTIL", store.GPUUtil, 1},
	{"DCGM_FI_DEV_FB_USED", store.GPUMemUsedBytes, mib},
	{"DCGM_FI_DEV_FB_FREE", store.GPUMemFreeBytes, mib},
	{"DCGM_FI_DEV_FB_TOTAL", store.GPUMemTotalBytes, mib},
	{"DCGM_FI_DEV_POWER_USAGE", store.GPUPowerWatts, 1},
	{"DCGM_FI_DEV_POWER_MGMT_LIMIT", store.GPUPowerLimitWatts, 1},
	{"DCGM_FI_DEV_GPU_TEMP", store.GPUTempCelsius, 1},
	{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", store.GPUEngineActive, 1},
	{"DCGM_FI_PROF_SM_ACTIVE", store.GPUSMActive, 1},
}

// Source scrapes one dcgm-exporter.
type Source struct {
	name   string
	url    string
	client *http.Client
	// maxBytes bounds a page (0: promscrape.DefaultMaxBodyBytes).
	maxBytes int64
	// host tags samples that carry no Hostname label: the exporter's host
	// from the URL, or "" for a loopback exporter (the collector's own host
	// then applies).
	host string
}

var _ collector.Source = (*Source)(nil)

// New returns a Source for the exporter at rawURL (e.g.
// http://10.0.0.7:9400/metrics). client may be nil for http.DefaultClient;
// the collector bounds each Gather with its own timeout. A page longer than
// maxBodyBytes (<= 0: promscrape.DefaultMaxBodyBytes) fails the scrape.
func New(rawURL string, client *http.Client, maxBodyBytes int64) (*Source, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("dcgm: %q is not an http(s) URL", rawURL)
	}
	name := "dcgm:" + u.Host
	if uri := u.RequestURI(); uri != "/metrics" {
		name += uri
	}
	return &Source{name: name, url: rawURL, client: client, maxBytes: maxBodyBytes, host: remoteHost(u)}, nil
}

// remoteHost is the host of an exporter URL, or "" when it is this machine
// (localhost, a loopback address). Without it, samples of a remote exporter
// whose Hostname label is turned off would carry the collector's own host,
// and idle events would name the wrong instance.
func remoteHost(u *url.URL) string {
	h := u.Hostname()
	if h == "localhost" {
		return ""
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return ""
	}
	return h
}

// Name is "dcgm:" and the exporter's host:port, followed by the path when it
// is not /metrics.
func (s *Source) Name() string { return s.name }

// Gather scrapes the exporter once. Samples without a Hostname label are
// tagged with the exporter's host from its URL unless it is a loopback one.
func (s *Source) Gather(ctx context.Context) ([]store.Point, error) {
	fams, err := promscrape.FetchLimit(ctx, s.client, s.url, s.maxBytes)
	if err != nil {
		return nil, err
	}
	points, err := Convert(fams)
	if s.host != "" {
		for _, p := range points {
			if p.Tags[store.TagHost] == "" {
				p.Tags[store.TagHost] = s.host
			}
		}
	}
	return points, err
}

// Convert turns a parsed dcgm-exporter page into points (without time).
// Samples lacking both the gpu and UUID labels are skipped and reported with
// an error wrapping collector.ErrMalformed, alongside the good points.
func Convert(fams promscrape.Families) ([]store.Point, error) {
	var points []store.Point
	var bad int
	var example string
	for _, f := range Fields {
		fam, ok := fams[f.Metric]
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, m := range fam.GetMetric() {
			v, ok := promscrape.Value(m)
			labels := promscrape.Labels(m)
			tags := gpuTags(labels)
			if !ok || (tags[store.TagGPU] == "" && tags[store.TagUUID] == "") {
				bad++
				example = fmt.Sprintf("%s%v", f.Metric, labels)
				continue
			}
			// Per-pod labels can repeat a GPU (MIG aside); keep its first sample.
			key := tags[store.TagHost] + "/" + tags[store.TagUUID] + "/" + tags[store.TagGPU] + "/" + tags["mig"]
			if seen[key] {
				continue
			}
			seen[key] = true
			points = append(points, store.Point{Measurement: f.Measurement, Tags: tags, Value: v * f.Scale})
		}
	}
	if bad > 0 {
		return points, fmt.Errorf("%w: %d dcgm sample(s) without gpu/UUID labels or value, e.g. %s", collector.ErrMalformed, bad, example)
	}
	return points, nil
}

// gpuTags picks prewarm's tags from a dcgm-exporter sample's labels.
// Releases differ in spelling the host label: Hostname, hostname.
func gpuTags(labels map[string]string) map[string]string {
	tags := map[string]string{store.TagSource: "dcgm"}
	set := func(tag string, keys ...string) {
		for _, k := range keys {
			if v := labels[k]; v != "" {
				tags[tag] = v
				return
			}
		}
	}
	set(store.TagGPU, "gpu")
	set(store.TagUUID, "UUID", "uuid")
	set(store.TagModel, "modelName")
	set(store.TagHost, "Hostname", "hostname")
	set("mig", "GPU_I_ID")
	return tags
}
