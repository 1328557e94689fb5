package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/collector/dcgm"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/collector/nvml"
	"github.com/prewarm/prewarm/collector/service"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/open"
	"github.com/prewarm/prewarm/store/remote"
)

// run is the whole command, testable: it returns when ctx is done (or after
// one cycle with --once). Everything it writes to stdout and stderr, and
// the error it returns, passes through one redactor holding every
// configured secret.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	red := redact.New(os.Getenv("INFLUX_TOKEN"), os.Getenv("PREWARM_WEBHOOK_TOKEN"))
	defer func() { err = red.Error(err) }()
	stdout, stderr = red.Writer(stdout), red.Writer(stderr)

	var o options
	fs := newFlagSet(&o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: collector [flags]\n\nCollects GPU and service metrics into prewarm's store. See docs/collector.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return &usageError{err: err}
	}
	red.Add(o.influxToken)
	if o.version {
		fmt.Fprintln(stdout, "collector", buildinfo.Read())
		return nil
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel.Level}))

	cfg, err := loadConfig(fs, &o, red)
	if err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector("collector"))
	metrics, err := collector.NewMetrics(reg)
	if err != nil {
		return err
	}
	inputs, err := buildInputs(cfg)
	if err != nil {
		return err
	}

	dispatcher, err := notify.NewDispatcher(log, webhooks(cfg, red), notify.DispatcherOptions{Registerer: reg})
	if err != nil {
		return &usageError{err: err}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dispatcher.Close(cctx)
	}()
	engine, err := alert.NewEngine(cfg.Alerts, alert.Options{Instances: cfg.Instances, InstanceID: cfg.InstanceID,
		Sinks: []alert.Sink{dispatcher}, Registerer: reg})
	if err != nil {
		return &usageError{err: err}
	}
	observers := []collector.Observer{engine}
	if o.print {
		observers = append(observers, collector.LinePrinter(stdout))
	}

	st, storeDesc, err := openStore(ctx, cfg, o.once && !fs.Changed("store") && cfg.Store.Influx == nil, log)
	if err != nil {
		return err
	}
	defer st.Close()
	buf, err := buffer.New(bufferOptions(cfg, o.once))
	if err != nil {
		return err
	}

	c, err := collector.New(collector.Config{
		Inputs: inputs, Store: st, Buffer: buf, Interval: cfg.Interval,
		Tags: collector.WithHost(cfg.Tags, cfg.Host), HostPools: cfg.HostPools,
		Observers: observers, Metrics: metrics, Logger: log, UnreadyAfter: cfg.UnreadyAfterIntervals,
	})
	if err != nil {
		return err
	}

	if o.once {
		res := c.Cycle(ctx)
		err := c.Flush(ctx)
		collector.CloseSources(inputs)
		log.Info("one cycle done", "accepted", res.Accepted, "rejected", res.Rejected, "store", storeDesc)
		return errors.Join(err, buf.Close())
	}

	srv, err := serve(cfg, reg, st, c, red, log)
	if err != nil {
		buf.Close()
		return err
	}
	if srv != nil {
		defer srv.Close()
	}
	log.Info("collector started", "version", buildinfo.Read().String(), "interval", cfg.Interval, "sources", collector.SourceNames(inputs),
		"store", storeDesc, "spool", bufferOptions(cfg, o.once).SpoolDir, "metrics", cfg.Listen, "webhooks", len(cfg.Webhooks))
	return c.Run(ctx)
}

// loadConfig reads the config file, applies the flags, validates and
// resolves the secrets, adding each to red before anything can print it.
// Every error is a usage error (exit status 2).
func loadConfig(fs *pflag.FlagSet, o *options, red *redact.Redactor) (*config.Config, error) {
	cfg := config.Default()
	if o.configFile != "" {
		loaded, err := config.Load(o.configFile)
		if err != nil {
			return nil, &usageError{err: err}
		}
		cfg = *loaded
	}
	if err := o.apply(fs, &cfg, os.Getenv); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	if err := cfg.ResolveSecrets(os.Getenv); err != nil {
		return nil, &usageError{err: err}
	}
	if fs.Changed("influx-token") {
		cfg.Store.Influx.Token = o.influxToken
	}
	red.Add(secrets(&cfg)...)
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	return &cfg, nil
}

// secrets lists every credential cfg holds: the InfluxDB token (and the
// password of a 1.8 user:password), each webhook's token, signing secret
// and URL credentials, and the passwords of any URL.
func secrets(cfg *config.Config) []string {
	var out []string
	urls := []string{}
	if in := cfg.Store.Influx; in != nil {
		out = append(out, in.Token)
		if _, password, ok := strings.Cut(in.Token, ":"); ok {
			out = append(out, password)
		}
		urls = append(urls, in.URL)
	}
	for _, w := range webhooks(cfg, nil) {
		out = append(out, w.Secrets()...)
	}
	for _, d := range cfg.DCGM {
		urls = append(urls, d.URL)
	}
	for _, s := range cfg.Scrape {
		urls = append(urls, s.URL)
	}
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil {
			if p, ok := u.User.Password(); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

func buildInputs(cfg *config.Config) ([]collector.Input, error) {
	var inputs []collector.Input
	if cfg.NVML.Enabled {
		inputs = append(inputs, collector.Input{Source: nvml.New(gonvml.New()), Tags: cfg.NVML.Tags})
	}
	client := &http.Client{Timeout: cfg.Interval}
	for _, d := range cfg.DCGM {
		src, err := dcgm.New(d.URL, client, cfg.ScrapeMaxBytes)
		if err != nil {
			return nil, &usageError{err: err}
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: d.Tags})
	}
	for _, s := range cfg.Scrape {
		src, err := service.New(service.Config{Name: s.Name, URL: s.URL, RequestsCounter: s.RequestsCounter,
			QueueGauge: s.QueueGauge, LatencyHistogram: s.LatencyHistogram, Quantile: s.Quantile, Match: s.Match, Client: client,
			OptionalSignals: s.OptionalSignals, MaxBodyBytes: cfg.ScrapeMaxBytes})
		if err != nil {
			return nil, &usageError{err: err}
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: s.Tags})
	}
	if len(inputs) == 0 {
		return nil, usageErrorf("no sources: use --nvml, --dcgm-url, --scrape or a config file")
	}
	return inputs, nil
}

// webhooks builds the configured webhooks; red, the collector's redactor,
// keeps every secret out of their payloads and errors.
func webhooks(cfg *config.Config, red *redact.Redactor) []*notify.Webhook {
	var out []*notify.Webhook
	for _, w := range cfg.Webhooks {
		out = append(out, &notify.Webhook{Name: w.Name, URL: w.URL, Format: w.Format, Token: w.Token, Secret: w.Secret,
			Kinds: w.Kinds, Redactor: red})
	}
	return out
}

// openStore opens the configured store. printOnly (--once without a store
// named) writes nowhere.
func openStore(ctx context.Context, cfg *config.Config, printOnly bool, log *slog.Logger) (store.Store, string, error) {
	opts := open.Options{Embedded: embedded.Options{Retention: cfg.Store.Retention, Logger: log}}
	if in := cfg.Store.Influx; in != nil {
		opts.Influx = influx.Config{URL: in.URL, Token: in.Token, Org: in.Org, Bucket: in.Bucket,
			BatchSize: in.BatchSize, Timeout: in.Timeout, Logger: log}
		s, err := open.Store(ctx, "", opts)
		if err != nil {
			return nil, "", &usageError{err: err} // InfluxDB's store only checks the settings
		}
		return s, "influx " + in.URL + " bucket " + in.Bucket, nil
	}
	if printOnly {
		return discard{}, "none (--once)", nil
	}
	path := cfg.Store.Embedded
	if path == "" {
		path = defaultEmbeddedPath
	}
	s, err := open.EmbeddedFile(path).Open(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	return s, "embedded " + path, nil
}

// discard is the store of --once runs that only print.
type discard struct{}

func (discard) Write(context.Context, []store.Point) error { return nil }
func (discard) Query(context.Context, store.Query) ([]store.Series, error) {
	return nil, errors.New("no store")
}
func (discard) Close() error { return nil }

func bufferOptions(cfg *config.Config, once bool) buffer.Options {
	opts := buffer.Options{MemoryPoints: cfg.Buffer.MemoryPoints, SpoolDir: cfg.Buffer.SpoolDir, SpoolMaxBytes: cfg.Buffer.SpoolMaxBytes}
	if opts.SpoolDir == "" && !once {
		if cfg.Store.Embedded != "" {
			opts.SpoolDir = cfg.Store.Embedded + ".spool"
		} else {
			opts.SpoolDir = filepath.Join(".", "prewarm-spool")
		}
	}
	return opts
}

// serve serves /metrics, /healthz (liveness: the process answers),
// /readyz (points reach the store) and the read-only query API over st
// (remote.Path, for the forecaster) on cfg.Listen ("" disables it).
func serve(cfg *config.Config, reg *prometheus.Registry, st store.Querier, c *collector.Collector, red *redact.Redactor,
	log *slog.Logger) (*http.Server, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	limits := remote.Limits{MaxPoints: cfg.QueryAPI.MaxPoints, MaxWindows: cfg.QueryAPI.MaxWindows,
		MaxResponseBytes: cfg.QueryAPI.MaxResponseBytes, MaxConcurrent: cfg.QueryAPI.MaxConcurrent}
	mux.Handle(remote.Path, remote.NewHandler(st, remote.HandlerOptions{Limits: limits, Redactor: red}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, why := c.Ready(time.Now())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %s\n", red.String(why))
			return
		}
		fmt.Fprintf(w, "ready: %s\n", red.String(why))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return srv, nil
}
