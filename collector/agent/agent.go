package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/redact"
)

// UsageError is a mistake in the configuration, on the command line or
// in the file (a source, webhook or alert rule that cannot be built,
// InfluxDB settings the client refuses), as opposed to a failure of the
// world the collector runs in. The collector exits with status 2 for it.
type UsageError struct{ Err error }

// Error is Err's message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *UsageError) Unwrap() error { return e.Err }

// Options are what the process adds to the configuration.
type Options struct {
	// Once runs one cycle, writes what it accepted, and returns (--once):
	// no listener, no spool unless the configuration names one, and no
	// store unless it names one (the points are only printed).
	Once bool
	// Print, when set, receives each cycle's points as lines (--print).
	Print io.Writer
	// Logger receives the log (required).
	Logger *slog.Logger
	// Redactor holds every secret of the configuration (Secrets): the
	// webhooks, the query API and /readyz pass what they send through it.
	Redactor *redact.Redactor
}

// Run runs the collector that cfg describes until ctx is done, or for one
// cycle with opts.Once, then flushes what it accepted and closes the
// store. cfg has been validated and its secrets resolved (config.Load or
// config.Flags.Load); a configuration that cannot be built is a
// *UsageError.
func Run(ctx context.Context, cfg *config.Config, opts Options) error {
	log, red := opts.Logger, opts.Redactor
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
	// The sources (NVML holds the driver) are closed here until the
	// collector runs, which closes them when it stops.
	running := false
	defer func() {
		if !running {
			collector.CloseSources(inputs)
		}
	}()

	dispatcher, err := notify.NewDispatcher(log, webhooks(cfg, red), notify.DispatcherOptions{Registerer: reg})
	if err != nil {
		return &UsageError{Err: err}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dispatcher.Close(cctx)
	}()
	engine, err := alert.NewEngine(cfg.Alerts, alert.Options{Instances: cfg.Instances, InstanceID: cfg.InstanceID,
		Sinks: []alert.Sink{dispatcher}, Registerer: reg})
	if err != nil {
		return &UsageError{Err: err}
	}
	observers := []collector.Observer{engine}
	if opts.Print != nil {
		observers = append(observers, collector.LinePrinter(opts.Print))
	}

	st, storeDesc, err := openStore(ctx, cfg, opts.Once && cfg.Store.Embedded == "", log)
	if err != nil {
		return err
	}
	defer st.Close()
	bufOpts := bufferOptions(cfg, opts.Once)
	buf, err := buffer.New(bufOpts)
	if err != nil {
		return err
	}

	c, err := collector.New(collector.Config{
		Inputs: inputs, Store: st, Buffer: buf, Interval: cfg.Interval,
		Tags: collector.WithHost(cfg.Tags, hostTag(cfg.Host)), HostPools: cfg.HostPools,
		Observers: observers, Metrics: metrics, Logger: log, UnreadyAfter: cfg.UnreadyAfterIntervals,
	})
	if err != nil {
		buf.Close()
		return err
	}

	if opts.Once {
		res := c.Cycle(ctx)
		err := c.Flush(ctx)
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
		"store", storeDesc, "spool", bufOpts.SpoolDir, "metrics", cfg.Listen, "webhooks", len(cfg.Webhooks))
	running = true
	return c.Run(ctx)
}

// hostTag is the host tag of points that lack one: host, or the machine's
// hostname when host is "" (the host key's default).
func hostTag(host string) string {
	if host == "" {
		host, _ = os.Hostname()
	}
	return host
}
