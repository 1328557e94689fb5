package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/store"
)

// SpecPrefix starts a --store spec that names a Prometheus API.
const SpecPrefix = "prometheus:"

// EnvToken is the environment variable a bearer token may come from.
const EnvToken = "PREWARM_PROMETHEUS_TOKEN"

// specParams are the parameters a spec's URL may carry (see the package doc).
var specParams = []string{"resolution", "timeout", "max_points", "org_id", "token_file"}

// Open returns a Store for spec, "prometheus:http://HOST:9090" with the
// optional parameters of the package doc, its bearer token from
// $PREWARM_PROMETHEUS_TOKEN or token_file. It asks the server how its
// ranges end (see the package doc): an answer that is not the query API's
// (a 404, a refused token) is an error; a server that does not answer is
// not (it is logged, and the first Query reports store.ErrUnavailable).
func Open(ctx context.Context, spec string) (*Store, error) {
	cfg, err := ParseSpec(spec, os.Getenv)
	if err != nil {
		return nil, err
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := s.rangeBounds(ctx); err != nil {
		if !errors.Is(err, store.ErrUnavailable) {
			return nil, err
		}
		s.log.Warn("Prometheus is not reachable yet; queries will fail until it is", "url", s.base, "err", err)
	}
	return s, nil
}

// ParseSpec parses "prometheus:URL[?PARAMS]" into a Config; getenv reads
// $PREWARM_PROMETHEUS_TOKEN. Errors name the parameter at fault.
func ParseSpec(spec string, getenv func(string) string) (Config, error) {
	raw, ok := strings.CutPrefix(spec, SpecPrefix)
	if !ok {
		return Config{}, fmt.Errorf("--store %q: a Prometheus store is prometheus:http://HOST:9090", spec)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("--store %s: want prometheus:http://HOST:PORT (the Prometheus API's base URL)", spec)
	}
	if u.User != nil {
		return Config{}, fmt.Errorf("--store: credentials in the URL are not supported (they would show in logs); "+
			"give a bearer token in $%s or token_file=PATH", EnvToken)
	}
	params, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Config{}, fmt.Errorf("--store %s: %w", u.Redacted(), err)
	}
	u.RawQuery, u.ForceQuery = "", false
	cfg := Config{URL: u.String()}
	bad := func(key, want string) error {
		return fmt.Errorf("--store %s: %s=%s: want %s", cfg.URL, key, params.Get(key), want)
	}
	for key, vals := range params {
		if !slices.Contains(specParams, key) {
			return Config{}, fmt.Errorf("--store %s: unknown parameter %q (known: %s)", cfg.URL, key, strings.Join(specParams, ", "))
		}
		if len(vals) != 1 {
			return Config{}, fmt.Errorf("--store %s: parameter %q given %d times", cfg.URL, key, len(vals))
		}
	}
	if v := params.Get("resolution"); v != "" {
		if cfg.Resolution, err = time.ParseDuration(v); err != nil || cfg.Resolution <= 0 {
			return Config{}, bad("resolution", "a duration from 1ms to 1h, e.g. 15s")
		}
	}
	if v := params.Get("timeout"); v != "" {
		if cfg.Timeout, err = time.ParseDuration(v); err != nil || cfg.Timeout <= 0 {
			return Config{}, bad("timeout", "a duration from 1s to 10m, e.g. 30s")
		}
	}
	if v := params.Get("max_points"); v != "" {
		if cfg.MaxPoints, err = strconv.Atoi(v); err != nil || cfg.MaxPoints <= 0 {
			return Config{}, bad("max_points", fmt.Sprintf("an integer from 1 to %d", MaxPointsLimit))
		}
	}
	cfg.OrgID = params.Get("org_id")
	if file := params.Get("token_file"); file != "" {
		cfg.Token = func() (string, error) { return readToken(file) }
	} else if token := getenv(EnvToken); token != "" {
		cfg.Token = func() (string, error) { return token, nil }
	}
	if _, _, err := cfg.withDefaults(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// readToken reads a bearer token file (its first line, trimmed).
func readToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token_file: %w", err)
	}
	token, _, _ := strings.Cut(string(b), "\n")
	if token = strings.TrimSpace(token); token == "" {
		return "", fmt.Errorf("token_file %s is empty", file)
	}
	return token, nil
}

// The probe of how ranges end: at a multiple of 60 s, the subquery
// [60s:60s] holds the evaluations at t-60s and t when ranges are closed,
// only t when they are left-open.
const (
	probeQuery = "count_over_time(vector(1)[60s:60s])"
	probeAt    = 1767571200000 // 2026-01-05T00:00:00Z, in ms
)

// rangeBounds returns what the server's ranges include, probing it once.
func (s *Store) rangeBounds(ctx context.Context) (bounds, error) {
	s.mu.Lock()
	b := s.bounds
	s.mu.Unlock()
	if b != unknownBounds {
		return b, nil
	}
	r := request{promql: probeQuery, at: probeAt}
	pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	val, _, _, err := s.api.Query(pctx, probeQuery, msTime(probeAt), v1.WithTimeout(s.cfg.Timeout))
	if err != nil {
		return unknownBounds, s.wrap(pctx, r, err)
	}
	vec, ok := val.(model.Vector)
	switch {
	case ok && len(vec) == 1 && vec[0].Value == 2:
		b = closedBounds
	case ok && len(vec) == 1 && vec[0].Value == 1:
		b = leftOpenBounds
	default:
		return unknownBounds, fmt.Errorf("prometheus store %s: %s answered %v, want 1 or 2: is this a PromQL server?", s.base, probeQuery, val)
	}
	s.mu.Lock()
	s.bounds = b
	s.mu.Unlock()
	return b, nil
}
