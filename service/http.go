package service

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/prewarm/prewarm/spec"
)

// EnvAPIToken is the environment variable holding the bearer token of the
// service's write API (POST /api/v1/pools/NAME/mode).
const EnvAPIToken = "PREWARM_API_TOKEN"

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Gatherer serves /metrics.
	Gatherer prometheus.Gatherer
	// Release serves POST /api/v1/release; nil: not served.
	Release http.Handler
	// APIToken is the bearer token POST /api/v1/pools/NAME/mode requires.
	// Empty: mode changes are refused (403), as changing a mode can start
	// scaling a real fleet. It is not the release hook's token: that one
	// is handed to training jobs and collectors, which may stop one
	// instance but must not switch a pool to active.
	APIToken string
}

// Handler serves the service's HTTP API:
//
//	GET  /metrics                    Prometheus metrics
//	GET  /healthz                    200 while some pool's decision succeeded within 3 intervals
//	GET  /api/v1/pools               every pool's status (PoolStatus), JSON
//	GET  /api/v1/pools/NAME          one pool's status
//	POST /api/v1/pools/NAME/mode     {"mode": "active"}: set the pool's mode (bearer token)
//	POST /api/v1/release             the release hook, when configured
func (s *Service) Handler(o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	if o.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("GET /api/v1/pools", s.servePools)
	mux.HandleFunc("GET /api/v1/pools/{name}", s.servePool)
	mux.Handle("POST /api/v1/pools/{name}/mode", s.modeHandler(o.APIToken))
	if o.Release != nil {
		mux.Handle("POST /api/v1/release", o.Release)
	}
	return mux
}

func (s *Service) serveHealth(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	var last time.Time
	for _, p := range s.pools {
		if p.status.Error == "" && p.status.At.After(last) {
			last = p.status.At
		}
	}
	interval := s.file.Interval
	s.mu.Unlock()
	if last.IsZero() || s.deps.Now().Sub(last) > 3*interval {
		http.Error(w, "no successful decision in the last 3 intervals", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

func (s *Service) servePools(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Now   time.Time    `json:"now"`
		Pools []PoolStatus `json:"pools"`
	}{s.deps.Now(), s.Status()})
}

func (s *Service) servePool(w http.ResponseWriter, r *http.Request) {
	st, ok := s.PoolStatus(r.PathValue("name"))
	if !ok {
		s.writeError(w, http.StatusNotFound, fmt.Errorf("%w %q", ErrUnknownPool, r.PathValue("name")))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// modeRequest is the body of POST /api/v1/pools/NAME/mode.
type modeRequest struct {
	Mode spec.Mode `json:"mode"`
}

func (s *Service) modeHandler(token string) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" {
			s.writeError(w, http.StatusForbidden, fmt.Errorf("mode changes are disabled: start serve with %s or --api-token-file", EnvAPIToken))
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if h := sha256.Sum256([]byte(got)); !ok || subtle.ConstantTimeCompare(h[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="prewarm"`)
			s.writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token"))
			return
		}
		var req modeRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf(`want a JSON body {"mode": "forecast-only|active|paused"}: %w`, err))
			return
		}
		if !req.Mode.Valid() {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf("mode %q: want one of %v", req.Mode, spec.Modes))
			return
		}
		st, err := s.SetMode(r.PathValue("name"), req.Mode, "api "+r.RemoteAddr)
		switch {
		case errors.Is(err, ErrUnknownPool):
			s.writeError(w, http.StatusNotFound, err)
		case err != nil:
			s.writeError(w, http.StatusInternalServerError, err)
		default:
			writeJSON(w, http.StatusOK, st)
		}
	})
}

// writeError answers {"error": "..."} with the secrets masked.
func (s *Service) writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, struct {
		Error string `json:"error"`
	}{s.deps.Redactor.String(err.Error())})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
