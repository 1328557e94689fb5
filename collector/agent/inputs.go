package agent

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/collector/dcgm"
	"github.com/prewarm/prewarm/collector/notify"
	"github.com/prewarm/prewarm/collector/nvml"
	"github.com/prewarm/prewarm/collector/service"
	"github.com/prewarm/prewarm/redact"
)

// Secrets lists every credential cfg holds, for the redactor before
// anything can print them: the InfluxDB token (and the password of a 1.8
// user:password), each webhook's token, signing secret and URL
// credentials, and the passwords of any URL.
func Secrets(cfg *config.Config) []string {
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

// buildInputs builds the sources cfg names; a source that cannot be
// built, or none at all, is a *UsageError.
func buildInputs(cfg *config.Config) ([]collector.Input, error) {
	var inputs []collector.Input
	if cfg.NVML.Enabled {
		inputs = append(inputs, collector.Input{Source: nvml.New(gonvml.New()), Tags: cfg.NVML.Tags})
	}
	client := &http.Client{Timeout: cfg.Interval}
	for _, d := range cfg.DCGM {
		src, err := dcgm.New(d.URL, client, cfg.ScrapeMaxBytes)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: d.Tags})
	}
	for _, s := range cfg.Scrape {
		src, err := service.New(service.Config{Name: s.Name, URL: s.URL, RequestsCounter: s.RequestsCounter,
			QueueGauge: s.QueueGauge, LatencyHistogram: s.LatencyHistogram, Quantile: s.Quantile, Match: s.Match, Client: client,
			OptionalSignals: s.OptionalSignals, MaxBodyBytes: cfg.ScrapeMaxBytes})
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		inputs = append(inputs, collector.Input{Source: src, Tags: s.Tags})
	}
	if len(inputs) == 0 {
		return nil, &UsageError{Err: errors.New("no sources: use --nvml, --dcgm-url, --scrape or a config file")}
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
