package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/prewarm/prewarm/internal/authguard"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/service/ui"
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
	// Notice is a line the status page shows under its title (the demo
	// says its clock is simulated); "" shows none.
	Notice string
}

// Handler serves the service's HTTP API:
//
//	GET  /                                the status page (service/ui)
//	GET  /metrics                         Prometheus metrics
//	GET  /healthz                         200 while the process serves (liveness)
//	GET  /readyz                          200 while decisions succeed (readiness), a standby's too
//	GET  /api/v1/info                     version, interval, clock
//	GET  /api/v1/pools                    every pool's status (PoolStatus), JSON
//	GET  /api/v1/pools/NAME               one pool's status
//	GET  /api/v1/pools/NAME/forecast      the forecast in force: mean, lower, upper per step; the last day
//	GET  /api/v1/pools/NAME/schedule      the trusted plan from now on, and both levels' plans
//	GET  /api/v1/pools/NAME/history       the last day's decisions, sampled (?since=RFC3339)
//	GET  /api/v1/pools/NAME/decisions     the decision history, newest first (?limit=50&before=SEQ)
//	POST /api/v1/pools/NAME/mode          {"mode": "active"}: set the pool's mode (bearer token)
//	POST /api/v1/release                  the release hook, when configured
func (s *Service) Handler(o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", ui.Handler())
	if o.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /healthz", serveAlive)
	mux.HandleFunc("GET /readyz", s.serveReady)
	mux.HandleFunc("GET /api/v1/info", s.infoHandler(o.Notice))
	mux.HandleFunc("GET /api/v1/pools", s.servePools)
	mux.HandleFunc("GET /api/v1/pools/{name}", poolView(s, s.PoolStatus))
	mux.HandleFunc("GET /api/v1/pools/{name}/forecast", poolView(s, s.Forecast))
	mux.HandleFunc("GET /api/v1/pools/{name}/schedule", poolView(s, s.Schedule))
	mux.HandleFunc("GET /api/v1/pools/{name}/history", s.serveHistory)
	mux.HandleFunc("GET /api/v1/pools/{name}/decisions", s.serveDecisions)
	mux.Handle("POST /api/v1/pools/{name}/mode", s.modeHandler(o.APIToken))
	if o.Release != nil {
		mux.Handle("POST /api/v1/release", o.Release)
	}
	// GET only: another method on a known path stays the mux's 405.
	mux.HandleFunc("GET /", s.serveNotFound)
	return mux
}

// serveNotFound answers a path nothing serves: JSON under /api/ (an error
// naming the request and where the API starts), else a small page that
// links back to the status page, rather than Go's plain-text 404.
func (s *Service) serveNotFound(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		s.writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s (the API is under /api/v1/pools)", r.Method, r.URL.Path))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, notFoundPage, html.EscapeString(r.URL.Path))
}

// notFoundPage is the 404 page; %s is the path asked for, escaped.
const notFoundPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found · prewarm</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:48px;color:#1d2330}code{background:#eef0f3;padding:1px 4px}</style></head>
<body><h1>Not found</h1><p>Nothing is served at <code>%s</code>.</p>
<p><a href="/">The status page</a> · <a href="/api/v1/pools">/api/v1/pools</a> · <a href="/metrics">/metrics</a></p></body></html>
`

// serveAlive is the liveness probe: the process runs and serves HTTP. It
// does not look at the decisions, so a store or cloud outage, which a
// restart cannot fix, does not get the service restarted (that is
// /readyz's to report).
func serveAlive(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// readiness is the body of GET /readyz.
type readiness struct {
	Ready bool `json:"ready"`
	// LastSuccess is the latest decision of any pool that succeeded.
	LastSuccess time.Time `json:"last_success,omitzero"`
	// Failing are the pools whose last decision failed, with the error.
	Failing map[string]string `json:"failing,omitempty"`
	// Standby are the pools another replica owns (election on): this one
	// decides them and follows the owner's decisions, applying nothing.
	Standby []string `json:"standby,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}

// serveReady is the readiness probe: 200 while some pool's decision
// succeeded within the last 3 intervals, 503 before the first and when
// none has since (the store or every back-end is failing).
//
// With election on, a standby's decision succeeds as an owner's does
// (the store read, the plan computed) and also needs the state shared
// with the other replicas read: so a replica that owns nothing is ready
// while it follows the owners, since it serves the page, the API and
// (KEDA) the owner's plan and is a valid failover target, and unready
// while it cannot read what they decide.
func (s *Service) serveReady(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	var r readiness
	for _, p := range s.pools {
		if p.status.Outcome == OutcomeStandby {
			r.Standby = append(r.Standby, p.spec.Name)
		}
		if p.status.Error != "" {
			if r.Failing == nil {
				r.Failing = map[string]string{}
			}
			r.Failing[p.spec.Name] = p.status.Error
		}
		if p.status.LastSuccess.After(r.LastSuccess) {
			r.LastSuccess = p.status.LastSuccess
		}
	}
	interval := s.file.Interval
	s.mu.Unlock()
	switch {
	case r.LastSuccess.IsZero():
		r.Reason = "no pool has decided successfully yet"
	case s.deps.Now().Sub(r.LastSuccess) > 3*interval:
		r.Reason = fmt.Sprintf("no successful decision in the last 3 intervals (%v)", 3*interval)
	default:
		r.Ready = true
	}
	code := http.StatusOK
	if !r.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, r)
}

// Info is GET /api/v1/info.
type Info struct {
	buildinfo.Info
	// Interval is the decision tick; Now the service's clock (simulated in
	// the demo), StartedAt when it started.
	Interval  Duration  `json:"interval"`
	Now       time.Time `json:"now"`
	StartedAt time.Time `json:"started_at"`
	Notice    string    `json:"notice,omitempty"`
}

func (s *Service) infoHandler(notice string) http.HandlerFunc {
	started := s.deps.Now()
	build := buildinfo.Read()
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, Info{Info: build, Interval: Duration(s.Interval()), Now: s.deps.Now(), StartedAt: started, Notice: notice})
	}
}

func (s *Service) servePools(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Now   time.Time    `json:"now"`
		Pools []PoolStatus `json:"pools"`
	}{s.deps.Now(), s.Status()})
}

// poolView serves what get returns for the pool NAME of the path, 404
// for a pool the configuration does not have.
func poolView[T any](s *Service, get func(name string) (T, bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := get(r.PathValue("name"))
		if !ok {
			s.writeError(w, http.StatusNotFound, fmt.Errorf("%w %q", ErrUnknownPool, r.PathValue("name")))
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

// HistoryView is GET /api/v1/pools/NAME/history.
type HistoryView struct {
	Pool string `json:"pool"`
	// Bucket is the time one sample covers: its last decision, with the
	// highest demand of the bucket.
	Bucket  Duration `json:"bucket"`
	Samples []Sample `json:"samples"`
}

func (s *Service) serveHistory(w http.ResponseWriter, r *http.Request) {
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf("since=%q: want an RFC 3339 time such as 2026-10-05T08:00:00Z", v))
			return
		}
		since = t
	}
	poolView(s, func(name string) (HistoryView, bool) { return s.History(name, since) })(w, r)
}

func (s *Service) serveDecisions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, before := 50, uint64(0)
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > state.MaxPage {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf("limit=%q: want a count in [1, %d]", v, state.MaxPage))
			return
		}
		limit = n
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf("before=%q: want the seq of a decision (a previous page's next)", v))
			return
		}
		before = n
	}
	page, err := s.Decisions(r.PathValue("name"), before, limit)
	switch {
	case errors.Is(err, ErrUnknownPool):
		s.writeError(w, http.StatusNotFound, err)
	case errors.Is(err, errBadPage):
		s.writeError(w, http.StatusBadRequest, err)
	case err != nil:
		s.writeError(w, http.StatusInternalServerError, err)
	default:
		writeJSON(w, http.StatusOK, page)
	}
}

// maxModeBodyBytes bounds the body of POST /api/v1/pools/NAME/mode.
const maxModeBodyBytes = 4096

// modeRequest is the body of POST /api/v1/pools/NAME/mode.
type modeRequest struct {
	Mode poolspec.Mode `json:"mode"`
}

// modeHandler serves POST /api/v1/pools/NAME/mode behind the bearer token,
// its failures limited and logged as the release hook's are
// (internal/authguard); without a token every change is refused.
func (s *Service) modeHandler(token string) http.Handler {
	guard, err := authguard.New(authguard.Options{Token: token, Endpoint: "mode", Logger: s.log, Now: s.deps.Now})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			s.writeError(w, http.StatusForbidden, fmt.Errorf("mode changes are disabled: start serve with %s or --api-token-file", EnvAPIToken))
			return
		}
		if refused := guard.Check(r); refused != nil {
			refused.Write(w)
			s.writeError(w, refused.Status, errors.New(refused.Message))
			return
		}
		var req modeRequest
		if err := decodeBody(r.Body, maxModeBodyBytes, &req); err != nil {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf(`want a JSON body {"mode": "forecast-only|active|paused"}: %w`, err))
			return
		}
		if !req.Mode.Valid() {
			s.writeError(w, http.StatusBadRequest, fmt.Errorf("mode %q: want one of %v", req.Mode, poolspec.Modes()))
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

// decodeBody decodes body, at most limit bytes holding one JSON object,
// into v. Strictly: a field v does not have, a key given twice in one
// object (which a lax decoder settles by taking the last) and anything
// after the object are errors, so a request cannot say two things and
// have the server pick one.
func decodeBody(body io.Reader, limit int64, v any) error {
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	switch {
	case err != nil:
		return fmt.Errorf("reading the body: %w", err)
	case int64(len(data)) > limit:
		return fmt.Errorf("body over %d bytes", limit)
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("empty body")
	}
	if err := noDuplicateKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON object at byte %d", dec.InputOffset())
	}
	return nil
}

// noDuplicateKeys reports the first object key given twice in one object
// of the JSON in data; it reads no further than the first value.
func noDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys    map[string]bool // nil for an array
		wantKey bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return nil
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			f := &stack[n-1]
			if f.wantKey {
				k, _ := tok.(string)
				if f.keys[k] {
					return fmt.Errorf("key %q given twice", k)
				}
				f.keys[k], f.wantKey = true, false
				continue
			}
			f.wantKey = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		default:
			if len(stack) == 0 {
				return nil // a scalar: Decode says it is not an object
			}
		}
	}
}
