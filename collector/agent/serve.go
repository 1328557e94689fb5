package agent

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/remote"
)

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
