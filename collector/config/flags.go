package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/store/open"
)

// EnvWebhookToken is the environment variable holding the bearer token of
// the JSON webhooks --webhook names: a token never goes on a command line,
// where ps and shell histories show it.
const EnvWebhookToken = "PREWARM_WEBHOOK_TOKEN"

// Flags are the collector's command-line flags that set what its file
// sets: the sources, the store, the buffer, the listener and the webhooks.
// Register adds them; Apply lays the ones given over a Config, and Load
// builds the whole configuration: the file, then the flags. Keeping them
// next to the Config they fill keeps a flag and its YAML key to one range
// and one default.
type Flags struct {
	interval     time.Duration
	nvml         bool
	dcgmURLs     []string
	scrapes      []string
	store        open.Flags
	influxToken  string
	listen       string
	host         string
	instanceID   string
	spoolDir     string
	bufferPoints int
	webhooks     []string
	scrapeMax    int64
	unreadyAfter int
}

// Register adds the flags to fs. --store and --influx-url, --influx-org
// and --influx-bucket are the forecaster's (store/open.Flags), with its
// defaults, so that a collector and a forecaster given the same InfluxDB
// URL meet in the same bucket; --store takes only embedded:PATH here.
func (f *Flags) Register(fs *pflag.FlagSet) {
	d := Default()
	fs.DurationVar(&f.interval, "interval", d.Interval, "time between collection cycles, "+durationRangeOf("interval").span())
	fs.BoolVar(&f.nvml, "nvml", false, "read the local GPUs through NVML")
	fs.StringArrayVar(&f.dcgmURLs, "dcgm-url", nil, "dcgm-exporter /metrics URL to scrape (repeatable)")
	fs.StringArrayVar(&f.scrapes, "scrape", nil, "service endpoint NAME=URL, tagged service=NAME and pool=NAME: its "+DefaultRequestsCounter+
		" counter, and "+DefaultQueueGauge+" and "+DefaultLatencyHistogram+" when the page has them (repeatable)")
	// The store flags keep their place in --help: --influx-token, the
	// collector's own, right after --influx-url.
	store := pflag.NewFlagSet("store", pflag.ContinueOnError)
	f.store.Register(store, "", "embedded:PATH for the embedded store (default embedded:"+DefaultEmbedded+" when no InfluxDB is set)")
	fs.AddFlag(store.Lookup("store"))
	fs.AddFlag(store.Lookup("influx-url"))
	fs.StringVar(&f.influxToken, "influx-token", "", "InfluxDB token; prefer the "+open.EnvInfluxToken+" environment variable (flags show in ps)")
	fs.AddFlag(store.Lookup("influx-org"))
	fs.AddFlag(store.Lookup("influx-bucket"))
	fs.StringVar(&f.listen, "listen", d.Listen, `address serving /metrics, /healthz and the store query API /api/v1/query; "" disables it`)
	fs.StringVar(&f.host, "host", "", "host tag for points that lack one (default: the hostname)")
	fs.StringVar(&f.instanceID, "instance-id", "", "this host's cloud instance ID, sent in idle events")
	fs.StringVar(&f.spoolDir, "spool-dir", "", "directory spooling points beyond --buffer-points while the store is down (default: next to the embedded store, or ./prewarm-spool)")
	fs.IntVar(&f.bufferPoints, "buffer-points", 0, fmt.Sprintf("points held in memory while the store is down, %s (default %d)", rangeOf("buffer.memory_points").span(), buffer.DefaultMemoryPoints))
	fs.StringArrayVar(&f.webhooks, "webhook", nil, "[json|wecom|dingtalk=]URL receiving events (repeatable); a bearer token comes from "+EnvWebhookToken)
	fs.Int64Var(&f.scrapeMax, "scrape-max-bytes", promscrape.DefaultMaxBodyBytes, "largest page a dcgm or service scrape reads, in bytes ("+
		rangeOf("scrape_max_bytes").span()+"); a longer page fails the scrape")
	fs.IntVar(&f.unreadyAfter, "unready-after-intervals", collector.DefaultUnreadyAfter,
		"intervals points may wait without a write reaching the store before /readyz fails ("+rangeOf("unready_after_intervals").span()+")")
}

// Secrets are the credentials given on the command line (--influx-token),
// for the redactor as soon as the flags are parsed.
func (f *Flags) Secrets() []string { return []string{f.influxToken} }

// Load builds the configuration: the file at path (Default when path is
// ""), the flags of fs given over it (Apply), validated, with its secrets
// read through getenv (ResolveSecrets) and --influx-token over the file's
// token. A value out of its range names the flag, or the file, line and
// YAML key; a combination the checks refuse after the flags are applied
// (an --influx-token without --influx-url) names the YAML key it set.
func (f *Flags) Load(fs *pflag.FlagSet, path string, getenv func(string) string) (*Config, error) {
	cfg := Default()
	if path != "" {
		loaded, err := Load(path)
		if err != nil {
			return nil, err
		}
		cfg = *loaded
	}
	if err := f.Apply(fs, &cfg, getenv); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.ResolveSecrets(getenv); err != nil {
		return nil, err
	}
	if fs.Changed("influx-token") {
		cfg.Store.Influx.Token = f.influxToken // Apply selected InfluxDB
	}
	return &cfg, nil
}

// Apply overrides cfg with the flags of fs that were given; list flags
// replace the file's list. --scrape NAME=URL is a service with the
// default metric names in its own pool; --webhook [FORMAT=]URL a receiver
// (JSON by default, with EnvWebhookToken's bearer token when getenv has
// one). Any --influx-* flag selects InfluxDB: over the file's settings
// when it has them, else over the flags' defaults.
func (f *Flags) Apply(fs *pflag.FlagSet, cfg *Config, getenv func(string) string) error {
	set := fs.Changed
	if set("interval") {
		cfg.Interval = f.interval
	}
	if set("nvml") {
		cfg.NVML.Enabled = f.nvml
	}
	if set("dcgm-url") {
		cfg.DCGM = nil
		for _, u := range f.dcgmURLs {
			cfg.DCGM = append(cfg.DCGM, DCGM{URL: u})
		}
	}
	if set("scrape") {
		cfg.Scrape = nil
		for _, s := range f.scrapes {
			name, u, ok := strings.Cut(s, "=")
			if !ok || name == "" || u == "" {
				return fmt.Errorf("--scrape %q: want NAME=URL", s)
			}
			// A service named on the command line is its own pool, so the
			// forecaster's default demand query (pool=NAME) finds it; the
			// config file can group several services into one pool.
			cfg.Scrape = append(cfg.Scrape, Scrape{Name: name, URL: u, RequestsCounter: DefaultRequestsCounter,
				QueueGauge: DefaultQueueGauge, LatencyHistogram: DefaultLatencyHistogram,
				OptionalSignals: true, Tags: map[string]string{"pool": name}})
		}
	}
	if err := f.applyStore(fs, cfg); err != nil {
		return err
	}
	if set("listen") {
		cfg.Listen = f.listen
	}
	if set("host") {
		cfg.Host = f.host
	}
	if set("instance-id") {
		cfg.InstanceID = f.instanceID
	}
	if set("spool-dir") {
		cfg.Buffer.SpoolDir = f.spoolDir
	}
	if set("buffer-points") {
		if err := checkFlag("buffer-points", "buffer.memory_points", int64(f.bufferPoints)); err != nil {
			return err
		}
		cfg.Buffer.MemoryPoints = f.bufferPoints
	}
	if set("scrape-max-bytes") {
		if err := checkFlag("scrape-max-bytes", "scrape_max_bytes", f.scrapeMax); err != nil {
			return err
		}
		cfg.ScrapeMaxBytes = f.scrapeMax
	}
	if set("unready-after-intervals") {
		if err := checkFlag("unready-after-intervals", "unready_after_intervals", int64(f.unreadyAfter)); err != nil {
			return err
		}
		cfg.UnreadyAfterIntervals = f.unreadyAfter
	}
	if set("webhook") {
		cfg.Webhooks = nil
		for i, w := range f.webhooks {
			format, u := notify.FormatJSON, w
			if ft, rest, ok := strings.Cut(w, "="); ok && !strings.Contains(ft, "/") {
				format, u = ft, rest
			}
			hook := Webhook{Name: fmt.Sprintf("%s-%d", format, i), URL: u, Format: format}
			if format == notify.FormatJSON && getenv(EnvWebhookToken) != "" {
				hook.TokenEnv = EnvWebhookToken
			}
			cfg.Webhooks = append(cfg.Webhooks, hook)
		}
	}
	return nil
}

// applyStore applies --store (embedded:PATH only: the collector writes, and
// the other specs are read-only) or the --influx-* flags, not both.
func (f *Flags) applyStore(fs *pflag.FlagSet, cfg *Config) error {
	set := fs.Changed
	if set("store") {
		spec, err := open.Parse(f.store.Spec)
		if err != nil || !spec.Writable() {
			return fmt.Errorf("--store %q: want embedded:PATH (for InfluxDB use --influx-url)", f.store.Spec)
		}
		cfg.Store.Embedded, cfg.Store.Influx = spec.Target, nil
	}
	if !set("influx-url") && !set("influx-bucket") && !set("influx-org") && !set("influx-token") {
		return nil
	}
	if set("store") {
		return fmt.Errorf("--store and --influx-* both given: choose one store")
	}
	in := cfg.Store.Influx
	if in == nil {
		in = &Influx{Org: f.store.Influx.Org, Bucket: f.store.Influx.Bucket}
	}
	cfg.Store.Embedded = ""
	if set("influx-url") {
		in.URL = f.store.Influx.URL
	}
	if set("influx-bucket") {
		in.Bucket = f.store.Influx.Bucket
	}
	if set("influx-org") {
		in.Org = f.store.Influx.Org
	}
	cfg.Store.Influx = in
	return nil
}

// checkFlag checks --name's value v against the range of the setting at
// key (ranges), naming the flag.
func checkFlag(name, key string, v int64) error {
	if r := rangeOf(key); !r.contains(v) {
		return fmt.Errorf("--%s %d: want %s", name, v, r.want())
	}
	return nil
}
