package service

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the service's HTTP API:
//
//	GET  /metrics          Prometheus metrics from gatherer
//	GET  /healthz          200 while some pool's decision succeeded within 3 intervals
//	GET  /api/v1/pools     every pool's state, reason and plan (JSON)
//	POST /api/v1/release   the release hook, when release is not nil
func (s *Service) Handler(gatherer prometheus.Gatherer, release http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("GET /api/v1/pools", s.servePools)
	if release != nil {
		mux.Handle("POST /api/v1/release", release)
	}
	return mux
}

func (s *Service) serveHealth(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	last := s.lastOK
	s.mu.Unlock()
	if last.IsZero() || s.deps.Now().Sub(last) > 3*s.cfg.Interval {
		http.Error(w, "no successful decision in the last 3 intervals", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

func (s *Service) servePools(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(struct {
		Now   time.Time    `json:"now"`
		Pools []PoolStatus `json:"pools"`
	}{s.deps.Now(), s.Status()})
}
