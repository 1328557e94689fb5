package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/open"
)

// Config is the whole file. Zero fields take Default's values.
type Config struct {
	// Interval between collection cycles.
	Interval time.Duration `yaml:"interval"`
	// Listen is the address of /metrics; empty disables it.
	Listen string `yaml:"listen"`
	// Host tags every point lacking a host tag; empty means os.Hostname().
	Host string `yaml:"host"`
	// Tags are added to every point (e.g. pool, dc).
	Tags map[string]string `yaml:"tags"`
	// HostPools maps hosts to pools for points without a pool tag.
	HostPools map[string]string `yaml:"host_pools"`
	// InstanceID is this host's cloud instance, for idle events; Instances
	// maps other hosts (scraped dcgm-exporters) to theirs.
	InstanceID string            `yaml:"instance_id"`
	Instances  map[string]string `yaml:"instances"`

	// ScrapeMaxBytes bounds one scraped page (dcgm and scrape); a longer
	// page fails its scrape. Zero means promscrape.DefaultMaxBodyBytes.
	ScrapeMaxBytes int64 `yaml:"scrape_max_bytes"`
	// UnreadyAfterIntervals is how many intervals points may wait without
	// any write reaching the store before /readyz fails; zero means
	// collector.DefaultUnreadyAfter.
	UnreadyAfterIntervals int `yaml:"unready_after_intervals"`

	Store    Store       `yaml:"store"`
	Buffer   Buffer      `yaml:"buffer"`
	QueryAPI QueryAPI    `yaml:"query_api"`
	NVML     NVML        `yaml:"nvml"`
	DCGM     []DCGM      `yaml:"dcgm"`
	Scrape   []Scrape    `yaml:"scrape"`
	Alerts   alert.Rules `yaml:"alerts"`
	Webhooks []Webhook   `yaml:"webhooks"`
}

// Store selects where points go: Embedded (a file) or Influx, not both.
type Store struct {
	Embedded  string        `yaml:"embedded"`
	Retention time.Duration `yaml:"retention"`
	Influx    *Influx       `yaml:"influx"`
}

// Influx is an InfluxDB 2.x bucket or 1.8 database/retention-policy.
type Influx struct {
	URL       string        `yaml:"url"`
	Org       string        `yaml:"org"`
	Bucket    string        `yaml:"bucket"`
	TokenEnv  string        `yaml:"token_env"`
	TokenFile string        `yaml:"token_file"`
	BatchSize int           `yaml:"batch_size"`
	Timeout   time.Duration `yaml:"timeout"`
	// Token is filled by ResolveSecrets (default env INFLUX_TOKEN).
	Token string `yaml:"-"`
}

// ClientConfig is the configuration of the InfluxDB client that writes to
// in, logging to log: the one place the file's settings become the
// client's, so that a setting added to both cannot be left out.
func (in Influx) ClientConfig(log *slog.Logger) influx.Config {
	return influx.Config{URL: in.URL, Token: in.Token, Org: in.Org, Bucket: in.Bucket,
		BatchSize: in.BatchSize, Timeout: in.Timeout, Logger: log}
}

// Buffer bounds what is held while the store is down.
type Buffer struct {
	MemoryPoints  int    `yaml:"memory_points"`
	SpoolDir      string `yaml:"spool_dir"`
	SpoolMaxBytes int64  `yaml:"spool_max_bytes"`
}

// QueryAPI bounds the read-only store API on listen (store/remote's
// Limits); zero fields take its defaults.
type QueryAPI struct {
	MaxPoints        int `yaml:"max_points"`
	MaxWindows       int `yaml:"max_windows"`
	MaxResponseBytes int `yaml:"max_response_bytes"`
	MaxConcurrent    int `yaml:"max_concurrent"`
}

// NVML enables the local-GPU source.
type NVML struct {
	Enabled bool              `yaml:"enabled"`
	Tags    map[string]string `yaml:"tags"`
}

// DCGM is one dcgm-exporter to scrape.
type DCGM struct {
	URL  string            `yaml:"url"`
	Tags map[string]string `yaml:"tags"`
}

// Scrape is one service endpoint; see collector/service.
type Scrape struct {
	Name             string            `yaml:"name"`
	URL              string            `yaml:"url"`
	RequestsCounter  string            `yaml:"requests_counter"`
	QueueGauge       string            `yaml:"queue_gauge"`
	LatencyHistogram string            `yaml:"latency_histogram"`
	Quantile         float64           `yaml:"quantile"`
	Match            map[string]string `yaml:"match"`
	Tags             map[string]string `yaml:"tags"`
	// OptionalSignals is set for a service named by --scrape NAME=URL,
	// whose metric names are the defaults: the queue gauge and the
	// latency histogram are read when the page has them.
	OptionalSignals bool `yaml:"-"`
}

// Webhook is one event receiver; see collector/notify.
type Webhook struct {
	Name       string   `yaml:"name"`
	URL        string   `yaml:"url"`
	URLEnv     string   `yaml:"url_env"`
	Format     string   `yaml:"format"`
	TokenEnv   string   `yaml:"token_env"`
	TokenFile  string   `yaml:"token_file"`
	SecretEnv  string   `yaml:"secret_env"`
	SecretFile string   `yaml:"secret_file"`
	Kinds      []string `yaml:"kinds"`
	// Token and Secret are filled by ResolveSecrets.
	Token  string `yaml:"-"`
	Secret string `yaml:"-"`
}

// Default service metric names, used by --scrape NAME=URL.
const (
	DefaultRequestsCounter  = "http_requests_total"
	DefaultQueueGauge       = "queue_length"
	DefaultLatencyHistogram = "http_request_duration_seconds"
)

// DefaultEmbedded is the embedded store's file when neither the file nor
// the flags name a store.
const DefaultEmbedded = "prewarm-collector.db"

// DefaultRetention is how long the embedded store keeps points unless
// store.retention says otherwise: embedded.DefaultRetention, the
// forecaster's too.
const DefaultRetention = embedded.DefaultRetention

// Default returns the configuration used for everything the file and the
// flags leave out.
func Default() Config {
	return Config{
		Interval: 10 * time.Second,
		Listen:   "127.0.0.1:9108",
		Store:    Store{Retention: DefaultRetention},
		Alerts:   alert.DefaultRules(),
	}
}

// Load reads and validates a file over Default.
func Load(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, raw)
}

// Parse reads and validates YAML; name labels errors (the file's path).
func Parse(name string, raw []byte) (*Config, error) {
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var root yaml.Node
	_ = yaml.Unmarshal(raw, &root)
	if errs := cfg.validate(); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = fmt.Sprintf("%s:%d: %s: %s", name, lineOf(&root, e.path), pathString(e.path), e.msg)
		}
		return nil, errors.New(strings.Join(msgs, "\n"))
	}
	return &cfg, nil
}

// fieldError is a validation problem at a path like {"dcgm", 1, "url"}.
type fieldError struct {
	path []any
	msg  string
}

// Validate checks a Config built in code or by flags (Parse already did).
func (c *Config) Validate() error {
	var msgs []string
	for _, e := range c.validate() {
		msgs = append(msgs, pathString(e.path)+": "+e.msg)
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

func (c *Config) validate() []fieldError {
	var errs []fieldError
	add := func(msg string, path ...any) { errs = append(errs, fieldError{path, msg}) }
	for _, r := range durationRanges() {
		if v, ok := c.duration(r.key); ok {
			if msg := r.problem(v); msg != "" {
				add(msg, r.path()...)
			}
		}
	}
	if c.Store.Embedded != "" && c.Store.Influx != nil {
		add("choose embedded or influx, not both", "store")
	}
	if in := c.Store.Influx; in != nil {
		if !isHTTPURL(in.URL) {
			add(fmt.Sprintf("%q is not an http(s) URL", in.URL), "store", "influx", "url")
		}
		if in.Bucket == "" {
			add("is required (2.x bucket, or database/retention-policy for 1.8)", "store", "influx", "bucket")
		}
	}
	for _, r := range ranges() {
		if v, ok := c.number(r.key); ok && v != 0 && !r.contains(v) {
			add(fmt.Sprintf("%d is outside [%d, %d] (0: the default)", v, r.min, r.max), r.path()...)
		}
	}
	errs = append(errs, c.validateTags()...)
	for i, d := range c.DCGM {
		if !isHTTPURL(d.URL) {
			add(fmt.Sprintf("%q is not an http(s) URL", d.URL), "dcgm", i, "url")
		}
	}
	names := map[string]bool{}
	for i, s := range c.Scrape {
		switch {
		case s.Name == "":
			add("is required", "scrape", i, "name")
		case names[s.Name]:
			add(fmt.Sprintf("%q is used twice", s.Name), "scrape", i, "name")
		}
		names[s.Name] = true
		if !isHTTPURL(s.URL) {
			add(fmt.Sprintf("%q is not an http(s) URL", s.URL), "scrape", i, "url")
		}
		if s.RequestsCounter == "" && s.QueueGauge == "" && s.LatencyHistogram == "" {
			add("set at least one of requests_counter, queue_gauge, latency_histogram", "scrape", i)
		}
		if s.Quantile != 0 && !(s.Quantile > 0 && s.Quantile < 1) {
			add(fmt.Sprintf("%v is not in (0, 1)", s.Quantile), "scrape", i, "quantile")
		}
	}
	for _, p := range c.Alerts.Problems() {
		path := []any{"alerts"}
		for _, f := range strings.Split(p.Field, ".") {
			path = append(path, f)
		}
		add(p.Msg, path...)
	}
	for i, w := range c.Webhooks {
		if (w.URL == "") == (w.URLEnv == "") {
			add("set exactly one of url and url_env", "webhooks", i)
		} else if w.URL != "" && !isHTTPURL(w.URL) {
			add("is not an http(s) URL", "webhooks", i, "url")
		}
		hook := notify.Webhook{Name: w.Name, URL: "http://placeholder/", Format: w.Format, Kinds: w.Kinds}
		if err := hook.Validate(); err != nil {
			add(err.Error(), "webhooks", i)
		}
		if w.TokenEnv != "" && w.TokenFile != "" {
			add("set token_env or token_file, not both", "webhooks", i)
		}
	}
	return errs
}

// validateTags checks every tag the file adds to points (tags, nvml,
// dcgm[i] and scrape[i] tags, host and host_pools, which become the host
// and pool tags) against the rules every store applies, so that a reserved
// key (_x, time, table, result) or a value with a control character is an
// error at start, not every point refused later.
func (c *Config) validateTags() []fieldError {
	var errs []fieldError
	check := func(tags map[string]string, path ...any) {
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			p := append(slices.Clone(path), k)
			if err := store.ValidateTagKey(k); err != nil {
				errs = append(errs, fieldError{p, err.Error()})
			} else if err := store.ValidateTagValue(tags[k]); err != nil {
				errs = append(errs, fieldError{p, err.Error()})
			}
		}
	}
	check(c.Tags, "tags")
	check(c.NVML.Tags, "nvml", "tags")
	for i, d := range c.DCGM {
		check(d.Tags, "dcgm", i, "tags")
	}
	for i, s := range c.Scrape {
		check(s.Tags, "scrape", i, "tags")
		if err := store.ValidateTagValue(s.Name); err != nil {
			errs = append(errs, fieldError{[]any{"scrape", i, "name"}, err.Error() + " (the name is the service tag)"})
		}
	}
	if err := store.ValidateTagValue(c.Host); err != nil {
		errs = append(errs, fieldError{[]any{"host"}, err.Error()})
	}
	for _, h := range slices.Sorted(maps.Keys(c.HostPools)) {
		if err := store.ValidateTagValue(c.HostPools[h]); err != nil {
			errs = append(errs, fieldError{[]any{"host_pools", h}, err.Error()})
		}
	}
	return errs
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ResolveSecrets reads tokens, robot secrets and env-held URLs named by the
// config, using getenv for the environment (os.Getenv in production). The
// InfluxDB token comes from token_env, token_file, or INFLUX_TOKEN. Errors
// name the variable or file, never the value.
func (c *Config) ResolveSecrets(getenv func(string) string) error {
	if in := c.Store.Influx; in != nil {
		tok, err := secret(getenv, in.TokenEnv, in.TokenFile)
		if err != nil {
			return fmt.Errorf("store.influx: %w", err)
		}
		if tok == "" && in.TokenEnv == "" && in.TokenFile == "" {
			tok = getenv(open.EnvInfluxToken)
		}
		in.Token = tok
	}
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		var err error
		if w.URLEnv != "" {
			if w.URL = getenv(w.URLEnv); w.URL == "" {
				return fmt.Errorf("webhooks[%d]: environment variable %s (url_env) is empty", i, w.URLEnv)
			}
		}
		if w.Token, err = secret(getenv, w.TokenEnv, w.TokenFile); err != nil {
			return fmt.Errorf("webhooks[%d]: %w", i, err)
		}
		if w.Secret, err = secret(getenv, w.SecretEnv, w.SecretFile); err != nil {
			return fmt.Errorf("webhooks[%d]: %w", i, err)
		}
	}
	return nil
}

func secret(getenv func(string) string, env, file string) (string, error) {
	switch {
	case env != "":
		v := getenv(env)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty", env)
		}
		return v, nil
	case file != "":
		raw, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("reading secret file: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	return "", nil
}

// lineOf finds the line of the node at path (map keys and list indexes),
// or of its closest existing ancestor.
func lineOf(root *yaml.Node, path []any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch key := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == key {
						line = n.Content[i].Line
						next = n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && key < len(n.Content) {
				next = n.Content[key]
				line = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch v := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, v)
		}
	}
	return b.String()
}
