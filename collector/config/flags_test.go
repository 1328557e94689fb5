package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/store/influx"
)

// parseFlags registers Flags on a fresh flag set and parses args.
func parseFlags(t *testing.T, args ...string) (*Flags, *pflag.FlagSet) {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SortFlags = false
	var f Flags
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f, fs
}

func TestFlagsApply(t *testing.T) {
	fileInflux := func() Config {
		c := Default()
		c.Store.Influx = &Influx{URL: "http://file:8086", Org: "acme", Bucket: "metrics"}
		return c
	}
	fileLists := func() Config {
		c := Default()
		c.DCGM = []DCGM{{URL: "http://file/metrics"}}
		c.Webhooks = []Webhook{{Name: "file", URL: "http://file/hook"}}
		return c
	}
	tests := []struct {
		name    string
		args    []string
		base    func() Config
		env     map[string]string
		check   func(*Config) bool
		wantErr string
	}{
		{name: "no flags leave the file as it is", base: fileInflux,
			check: func(c *Config) bool { return reflect.DeepEqual(*c, fileInflux()) }},
		{name: "--influx-url alone writes where the forecaster reads", args: []string{"--influx-url", "http://db:8086"},
			check: func(c *Config) bool {
				return *c.Store.Influx == Influx{URL: "http://db:8086", Org: "-", Bucket: "prewarm/autogen"} && c.Store.Embedded == ""
			}},
		{name: "--influx-url over the file's InfluxDB keeps its org and bucket", args: []string{"--influx-url", "http://db:8086"}, base: fileInflux,
			check: func(c *Config) bool {
				return *c.Store.Influx == Influx{URL: "http://db:8086", Org: "acme", Bucket: "metrics"}
			}},
		{name: "--influx-bucket and --influx-org over the file's", args: []string{"--influx-bucket", "db/rp", "--influx-org", "o"}, base: fileInflux,
			check: func(c *Config) bool {
				return *c.Store.Influx == Influx{URL: "http://file:8086", Org: "o", Bucket: "db/rp"}
			}},
		{name: "--store embedded:PATH replaces the file's InfluxDB", args: []string{"--store", "embedded:/tmp/c.db"}, base: fileInflux,
			check: func(c *Config) bool { return c.Store.Embedded == "/tmp/c.db" && c.Store.Influx == nil }},
		{name: "a read-only --store is refused", args: []string{"--store", "http://127.0.0.1:9108"},
			wantErr: `--store "http://127.0.0.1:9108": want embedded:PATH (for InfluxDB use --influx-url)`},
		{name: "--store and --influx-url", args: []string{"--store", "embedded:a.db", "--influx-url", "http://db:8086"},
			wantErr: "--store and --influx-* both given: choose one store"},
		{name: "--scrape NAME=URL is its own pool with the default names", args: []string{"--scrape", "api=http://svc/metrics"},
			check: func(c *Config) bool {
				return reflect.DeepEqual(c.Scrape, []Scrape{{Name: "api", URL: "http://svc/metrics", RequestsCounter: DefaultRequestsCounter,
					QueueGauge: DefaultQueueGauge, LatencyHistogram: DefaultLatencyHistogram, OptionalSignals: true,
					Tags: map[string]string{"pool": "api"}}})
			}},
		{name: "--scrape without a name", args: []string{"--scrape", "=http://svc/metrics"}, wantErr: `--scrape "=http://svc/metrics": want NAME=URL`},
		{name: "--scrape without a URL", args: []string{"--scrape", "api"}, wantErr: `--scrape "api": want NAME=URL`},
		{name: "list flags replace the file's lists", base: fileLists,
			args: []string{"--dcgm-url", "http://a/metrics", "--dcgm-url", "http://b/metrics", "--webhook", "dingtalk=http://robot/send"},
			check: func(c *Config) bool {
				return reflect.DeepEqual(c.DCGM, []DCGM{{URL: "http://a/metrics"}, {URL: "http://b/metrics"}}) &&
					reflect.DeepEqual(c.Webhooks, []Webhook{{Name: "dingtalk-0", URL: "http://robot/send", Format: "dingtalk"}})
			}},
		{name: "a JSON --webhook takes the bearer token's variable when it is set",
			args: []string{"--webhook", "http://hook/a?x=1", "--webhook", "json=http://hook/b", "--webhook", "wecom=http://robot/c"},
			env:  map[string]string{EnvWebhookToken: "t"},
			check: func(c *Config) bool {
				return reflect.DeepEqual(c.Webhooks, []Webhook{
					{Name: "json-0", URL: "http://hook/a?x=1", Format: "json", TokenEnv: EnvWebhookToken},
					{Name: "json-1", URL: "http://hook/b", Format: "json", TokenEnv: EnvWebhookToken},
					{Name: "wecom-2", URL: "http://robot/c", Format: "wecom"}})
			}},
		{name: "a --webhook URL with = in its query is no format", args: []string{"--webhook", "http://hook/a?x=1"},
			check: func(c *Config) bool {
				return reflect.DeepEqual(c.Webhooks, []Webhook{{Name: "json-0", URL: "http://hook/a?x=1", Format: "json"}})
			}},
		{name: "scalars", args: []string{"--interval", "30s", "--nvml", "--listen", "", "--host", "h", "--instance-id", "i-1",
			"--spool-dir", "/s", "--buffer-points", "5", "--scrape-max-bytes", "2048", "--unready-after-intervals", "7"},
			check: func(c *Config) bool {
				return c.Interval == 30*time.Second && c.NVML.Enabled && c.Listen == "" && c.Host == "h" && c.InstanceID == "i-1" &&
					c.Buffer.SpoolDir == "/s" && c.Buffer.MemoryPoints == 5 && c.ScrapeMaxBytes == 2048 && c.UnreadyAfterIntervals == 7
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fs := parseFlags(t, tt.args...)
			cfg := Default()
			if tt.base != nil {
				cfg = tt.base()
			}
			err := f.Apply(fs, &cfg, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(&cfg) {
				t.Errorf("config after %v: %+v (influx %+v)", tt.args, cfg, cfg.Store.Influx)
			}
		})
	}
}

func TestFlagsLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yml")
	if err := os.WriteFile(file, []byte("interval: 20s\nstore:\n  influx: {url: 'http://db:8086', bucket: b, token_env: TOK}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOK": "from-env", "INFLUX_TOKEN": "default-env"}
	tests := []struct {
		name      string
		file      string
		args      []string
		wantToken string
		wantErr   string
	}{
		{name: "the file's token", file: file, wantToken: "from-env"},
		{name: "--influx-token over the file's", file: file, args: []string{"--influx-token", "from-flag"}, wantToken: "from-flag"},
		{name: "INFLUX_TOKEN without a file", args: []string{"--influx-url", "http://db:8086"}, wantToken: "default-env"},
		{name: "an unreadable file", file: filepath.Join(dir, "none.yml"), wantErr: "none.yml"},
		{name: "an invalid combination names the YAML key", args: []string{"--influx-url", "http://db:8086", "--influx-bucket", ""},
			wantErr: "store.influx.bucket: is required"},
		{name: "a flag out of range names the flag", args: []string{"--buffer-points", "0"}, wantErr: "--buffer-points 0: want 1 to 100000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, fs := parseFlags(t, tt.args...)
			cfg, err := f.Load(fs, tt.file, func(k string) string { return env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Store.Influx == nil || cfg.Store.Influx.Token != tt.wantToken {
				t.Errorf("influx = %+v, want token %q", cfg.Store.Influx, tt.wantToken)
			}
			if tt.file != "" && cfg.Interval != 20*time.Second {
				t.Errorf("interval %s, want the file's 20s", cfg.Interval)
			}
		})
	}
}

func TestFlagsSecrets(t *testing.T) {
	f, _ := parseFlags(t, "--influx-token", "s3cret")
	if got := f.Secrets(); !reflect.DeepEqual(got, []string{"s3cret"}) {
		t.Errorf("Secrets() = %q", got)
	}
}

// The collector's store flags are the forecaster's (store/open.Flags),
// with --influx-token, its own, after --influx-url.
func TestFlagsStoreFlags(t *testing.T) {
	_, fs := parseFlags(t)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "store" || strings.HasPrefix(f.Name, "influx-") {
			names = append(names, f.Name+"="+f.DefValue)
		}
	})
	want := []string{"store=", "influx-url=", "influx-token=", "influx-org=-", "influx-bucket=prewarm/autogen"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("store flags %q, want %q", names, want)
	}
}

// ClientConfig carries every setting the file has for the client.
func TestInfluxClientConfig(t *testing.T) {
	in := Influx{URL: "http://db:8086", Org: "o", Bucket: "b", TokenEnv: "E", TokenFile: "F", BatchSize: 7, Timeout: 3 * time.Second, Token: "t"}
	got := in.ClientConfig(nil)
	want := influx.Config{URL: "http://db:8086", Token: "t", Org: "o", Bucket: "b", BatchSize: 7, Timeout: 3 * time.Second}
	if got != want {
		t.Errorf("ClientConfig() = %+v, want %+v", got, want)
	}
}
