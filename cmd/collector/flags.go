package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/store/open"
)

// usageError marks a mistake on the command line (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// options are the command-line flags.
type options struct {
	configFile   string
	interval     time.Duration
	nvml         bool
	dcgmURLs     []string
	scrapes      []string
	storeSpec    string
	influxURL    string
	influxToken  string
	influxOrg    string
	influxBucket string
	listen       string
	host         string
	instanceID   string
	spoolDir     string
	bufferPoints int
	webhooks     []string
	once         bool
	print        bool
	logLevel     cli.LogLevelFlag
	scrapeMax    int64
	unreadyAfter int
	version      bool
}

const defaultEmbeddedPath = "prewarm-collector.db"

func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("collector", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&o.configFile, "config", "", "YAML configuration file; flags override it")
	fs.DurationVar(&o.interval, "interval", 10*time.Second, "time between collection cycles")
	fs.BoolVar(&o.nvml, "nvml", false, "read the local GPUs through NVML")
	fs.StringArrayVar(&o.dcgmURLs, "dcgm-url", nil, "dcgm-exporter /metrics URL to scrape (repeatable)")
	fs.StringArrayVar(&o.scrapes, "scrape", nil, "service endpoint NAME=URL, tagged service=NAME and pool=NAME: its "+config.DefaultRequestsCounter+
		" counter, and "+config.DefaultQueueGauge+" and "+config.DefaultLatencyHistogram+" when the page has them (repeatable)")
	fs.StringVar(&o.storeSpec, "store", "", "embedded:PATH for the embedded store (default embedded:"+defaultEmbeddedPath+" when no InfluxDB is set)")
	fs.StringVar(&o.influxURL, "influx-url", "", "InfluxDB URL, e.g. http://127.0.0.1:8086")
	fs.StringVar(&o.influxToken, "influx-token", "", "InfluxDB token; prefer the INFLUX_TOKEN environment variable (flags show in ps)")
	fs.StringVar(&o.influxOrg, "influx-org", "", "InfluxDB 2.x organisation (1.8: ignored)")
	fs.StringVar(&o.influxBucket, "influx-bucket", "", "InfluxDB 2.x bucket, or database/retention-policy for 1.8")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9108", `address serving /metrics, /healthz and the store query API /api/v1/query; "" disables it`)
	fs.StringVar(&o.host, "host", "", "host tag for points that lack one (default: the hostname)")
	fs.StringVar(&o.instanceID, "instance-id", "", "this host's cloud instance ID, sent in idle events")
	fs.StringVar(&o.spoolDir, "spool-dir", "", "directory spooling points beyond --buffer-points while the store is down (default: next to the embedded store, or ./prewarm-spool)")
	fs.IntVar(&o.bufferPoints, "buffer-points", 0, "points held in memory while the store is down (default 100000)")
	fs.StringArrayVar(&o.webhooks, "webhook", nil, "[json|wecom|dingtalk=]URL receiving events (repeatable); a bearer token comes from PREWARM_WEBHOOK_TOKEN")
	fs.BoolVar(&o.once, "once", false, "run one collection cycle and exit")
	fs.BoolVar(&o.print, "print", false, "print each cycle's points to stdout (line-protocol-like)")
	fs.Int64Var(&o.scrapeMax, "scrape-max-bytes", promscrape.DefaultMaxBodyBytes, "largest page a dcgm or service scrape reads, in bytes (1 KiB to 1 GiB); a longer page fails the scrape")
	fs.IntVar(&o.unreadyAfter, "unready-after-intervals", collector.DefaultUnreadyAfter, "intervals points may wait without a write reaching the store before /readyz fails (1 to 10000)")
	fs.Var(&o.logLevel, "log-level", "least severe log lines written to stderr: "+strings.Join(cli.LogLevels, ", "))
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	return fs
}

// apply overrides cfg with the flags the user set. List flags replace the
// file's list.
func (o *options) apply(fs *pflag.FlagSet, cfg *config.Config, getenv func(string) string) error {
	set := fs.Changed
	if set("interval") {
		cfg.Interval = o.interval
	}
	if set("nvml") {
		cfg.NVML.Enabled = o.nvml
	}
	if set("dcgm-url") {
		cfg.DCGM = nil
		for _, u := range o.dcgmURLs {
			cfg.DCGM = append(cfg.DCGM, config.DCGM{URL: u})
		}
	}
	if set("scrape") {
		cfg.Scrape = nil
		for _, s := range o.scrapes {
			name, u, ok := strings.Cut(s, "=")
			if !ok || name == "" || u == "" {
				return usageErrorf("--scrape %q: want NAME=URL", s)
			}
			// A service named on the command line is its own pool, so the
			// forecaster's default demand query (pool=NAME) finds it; the
			// config file can group several services into one pool.
			cfg.Scrape = append(cfg.Scrape, config.Scrape{Name: name, URL: u, RequestsCounter: config.DefaultRequestsCounter,
				QueueGauge: config.DefaultQueueGauge, LatencyHistogram: config.DefaultLatencyHistogram,
				OptionalSignals: true, Tags: map[string]string{"pool": name}})
		}
	}
	if set("store") {
		// The collector writes: the read-only query APIs are no store for it.
		spec, err := open.Parse(o.storeSpec)
		if err != nil || !spec.Writable() {
			return usageErrorf("--store %q: want embedded:PATH (for InfluxDB use --influx-url)", o.storeSpec)
		}
		cfg.Store.Embedded, cfg.Store.Influx = spec.Target, nil
	}
	if set("influx-url") || set("influx-bucket") || set("influx-org") || set("influx-token") {
		if set("store") {
			return usageErrorf("--store and --influx-* both given: choose one store")
		}
		in := cfg.Store.Influx
		if in == nil {
			in = &config.Influx{}
		}
		cfg.Store.Embedded = ""
		if set("influx-url") {
			in.URL = o.influxURL
		}
		if set("influx-bucket") {
			in.Bucket = o.influxBucket
		}
		if set("influx-org") {
			in.Org = o.influxOrg
		}
		cfg.Store.Influx = in
	}
	if set("listen") {
		cfg.Listen = o.listen
	}
	if set("host") {
		cfg.Host = o.host
	}
	if set("instance-id") {
		cfg.InstanceID = o.instanceID
	}
	if set("spool-dir") {
		cfg.Buffer.SpoolDir = o.spoolDir
	}
	if set("buffer-points") {
		cfg.Buffer.MemoryPoints = o.bufferPoints
	}
	if set("scrape-max-bytes") {
		if o.scrapeMax < 1<<10 || o.scrapeMax > 1<<30 {
			return usageErrorf("--scrape-max-bytes %d: want 1024 (1 KiB) to 1073741824 (1 GiB)", o.scrapeMax)
		}
		cfg.ScrapeMaxBytes = o.scrapeMax
	}
	if set("unready-after-intervals") {
		if o.unreadyAfter < 1 || o.unreadyAfter > 10_000 {
			return usageErrorf("--unready-after-intervals %d: want 1 to 10000", o.unreadyAfter)
		}
		cfg.UnreadyAfterIntervals = o.unreadyAfter
	}
	if set("buffer-points") && (o.bufferPoints < 1 || o.bufferPoints > 100_000_000) {
		return usageErrorf("--buffer-points %d: want 1 to 100000000", o.bufferPoints)
	}
	if set("webhook") {
		cfg.Webhooks = nil
		for i, w := range o.webhooks {
			format, u := notify.FormatJSON, w
			if f, rest, ok := strings.Cut(w, "="); ok && !strings.Contains(f, "/") {
				format, u = f, rest
			}
			hook := config.Webhook{Name: fmt.Sprintf("%s-%d", format, i), URL: u, Format: format}
			if format == notify.FormatJSON && getenv("PREWARM_WEBHOOK_TOKEN") != "" {
				hook.TokenEnv = "PREWARM_WEBHOOK_TOKEN"
			}
			cfg.Webhooks = append(cfg.Webhooks, hook)
		}
	}
	return nil
}
