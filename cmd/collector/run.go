package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/remote"
)

// run is the whole command, testable: it returns when ctx is done (or after
// one cycle with --once).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments %q", fs.Args())
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}

	cfg := config.Default()
	if o.configFile != "" {
		loaded, err := config.Load(o.configFile)
		if err != nil {
			return err
		}
		cfg = *loaded
	}
	if err := o.apply(fs, &cfg, os.Getenv); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	if err := cfg.ResolveSecrets(os.Getenv); err != nil {
		return err
	}
	if fs.Changed("influx-token") {
		cfg.Store.Influx.Token = o.influxToken
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector("collector"))
	metrics, err := collector.NewMetrics(reg)
	if err != nil {
		return err
	}
	inputs, err := buildInputs(&cfg)
	if err != nil {
		return err
	}

	dispatcher, err := notify.NewDispatcher(log, webhooks(&cfg), notify.DispatcherOptions{Registerer: reg})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dispatcher.Close(cctx)
	}()
	engine, err := alert.NewEngine(cfg.Alerts, alert.Options{Instances: cfg.Instances, InstanceID: cfg.InstanceID,
		Sinks: []alert.Sink{dispatcher}, Registerer: reg})
	if err != nil {
		return err
	}
	observers := []collector.Observer{engine}
	if o.print {
		observers = append(observers, printer(stdout))
	}

	st, storeDesc, err := openStore(ctx, &cfg, o.once && !fs.Changed("store") && cfg.Store.Influx == nil, log)
	if err != nil {
		return err
	}
	defer st.Close()
	buf, err := buffer.New(bufferOptions(&cfg, o.once))
	if err != nil {
		return err
	}

	c, err := collector.New(collector.Config{
		Inputs: inputs, Store: st, Buffer: buf, Interval: cfg.Interval,
		Tags: withHost(cfg.Tags, cfg.Host), HostPools: cfg.HostPools,
		Observers: observers, Metrics: metrics, Logger: log,
	})
	if err != nil {
		return err
	}

	if o.once {
		res := c.Cycle(ctx)
		err := c.Flush(ctx)
		closeSources(inputs)
		log.Info("one cycle done", "accepted", res.Accepted, "rejected", res.Rejected, "store", storeDesc)
		return errors.Join(err, buf.Close())
	}

	srv, err := serveMetrics(cfg.Listen, reg, st, log)
	if err != nil {
		buf.Close()
		return err
	}
	if srv != nil {
		defer srv.Close()
	}
	log.Info("collector started", "interval", cfg.Interval, "sources", sourceNames(inputs), "store", storeDesc,
		"metrics", cfg.Listen, "webhooks", len(cfg.Webhooks))
	return c.Run(ctx)
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErrorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func buildInputs(cfg *config.Config) ([]collector.Input, error) {
	var inputs []collector.Input
	if cfg.NVML.Enabled {
		inputs = append(inputs, collector.Input{Source: nvml.New(gonvml.New()), Tags: cfg.NVML.Tags})
	}
	client := &http.Client{Timeout: cfg.Interval}
	for _, d := range cfg.DCGM {
		src, err := dcgm.New(d.URL, client)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: d.Tags})
	}
	for _, s := range cfg.Scrape {
		src, err := service.New(service.Config{Name: s.Name, URL: s.URL, RequestsCounter: s.RequestsCounter,
			QueueGauge: s.QueueGauge, LatencyHistogram: s.LatencyHistogram, Quantile: s.Quantile, Match: s.Match, Client: client})
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: s.Tags})
	}
	if len(inputs) == 0 {
		return nil, usageErrorf("no sources: use --nvml, --dcgm-url, --scrape or a config file")
	}
	return inputs, nil
}

func webhooks(cfg *config.Config) []*notify.Webhook {
	var out []*notify.Webhook
	for _, w := range cfg.Webhooks {
		out = append(out, &notify.Webhook{Name: w.Name, URL: w.URL, Format: w.Format, Token: w.Token, Secret: w.Secret, Kinds: w.Kinds})
	}
	return out
}

// openStore opens the configured store. printOnly (--once without a store
// named) writes nowhere.
func openStore(ctx context.Context, cfg *config.Config, printOnly bool, log *slog.Logger) (store.Store, string, error) {
	if in := cfg.Store.Influx; in != nil {
		s, err := influx.New(ctx, influx.Config{URL: in.URL, Token: in.Token, Org: in.Org, Bucket: in.Bucket,
			BatchSize: in.BatchSize, Timeout: in.Timeout, Logger: log})
		if err != nil {
			return nil, "", err
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
	s, err := embedded.Open(path, embedded.Options{Retention: cfg.Store.Retention, Logger: log})
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

func withHost(tags map[string]string, host string) map[string]string {
	out := maps.Clone(tags)
	if out == nil {
		out = map[string]string{}
	}
	if host != "" {
		out[collector.TagHost] = host
	}
	return out
}

func sourceNames(inputs []collector.Input) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Source.Name()
	}
	return strings.Join(names, ",")
}

func closeSources(inputs []collector.Input) {
	for _, in := range inputs {
		if c, ok := in.Source.(io.Closer); ok {
			c.Close()
		}
	}
}

// serveMetrics serves /metrics, /healthz and the read-only query API over
// st (remote.Path, for the forecaster) on addr ("" disables it).
func serveMetrics(addr string, reg *prometheus.Registry, st store.Querier, log *slog.Logger) (*http.Server, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.Handle(remote.Path, remote.Handler(st))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return srv, nil
}

// printer writes each cycle's points as line-protocol-like lines.
func printer(w io.Writer) collector.Observer {
	var mu sync.Mutex
	return collector.ObserverFunc(func(at time.Time, points []store.Point) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range points {
			var b strings.Builder
			b.WriteString(p.Measurement)
			for _, k := range slices.Sorted(maps.Keys(p.Tags)) {
				fmt.Fprintf(&b, ",%s=%s", k, strings.ReplaceAll(p.Tags[k], " ", `\ `))
			}
			fmt.Fprintf(&b, " value=%g %d\n", p.Value, p.Time.UnixNano())
			io.WriteString(w, b.String())
		}
	})
}
