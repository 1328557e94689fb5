package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/collector/alert"
)

func TestGoodFiles(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "good.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Interval != 10*time.Second || cfg.Store.Influx.Bucket != "prewarm/autogen" || len(cfg.Webhooks) != 3 ||
		cfg.Scrape[0].Match["job"] != "api" || !cfg.NVML.Enabled || cfg.Instances["gpu-a100-07"] != "i-0a100def" ||
		cfg.Alerts.LatencyHigh != (alert.Rule{Threshold: 0.8, For: 3 * time.Minute, Enabled: true}) ||
		cfg.Alerts.QueueHigh != (alert.Rule{Threshold: 200, For: 2 * time.Minute, Enabled: true}) {
		t.Errorf("good.yml parsed as %+v", cfg)
	}
	min, err := Load(filepath.Join("testdata", "minimal.good.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// Unset values keep their defaults, also inside a partly set rule.
	if min.Interval != 10*time.Second || min.Listen != "127.0.0.1:9108" || min.Alerts.Idle.For != 45*time.Minute ||
		min.Alerts.Idle.Threshold != 5 || min.Alerts.UtilHigh.For != 5*time.Minute ||
		min.Alerts.QueueHigh != (alert.Rule{Threshold: 120, For: 2 * time.Minute, Enabled: true}) ||
		min.Alerts.LatencyHigh != (alert.Rule{Threshold: 2, For: 5 * time.Minute}) {
		t.Errorf("minimal.good.yml: %+v", min)
	}
}

func TestBadFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"unknown-field.bad.yml", []string{"unknown-field.bad.yml", "line 4", "field tag not found"}},
		{"bad-duration.bad.yml", []string{"line 5", "into time.Duration"}},
		{"bad-url.bad.yml", []string{"bad-url.bad.yml:3: dcgm[1].url", "not an http(s) URL"}},
		{"both-stores.bad.yml", []string{":2: store: choose embedded or influx"}},
		{"threshold.bad.yml", []string{"threshold.bad.yml:2: alerts.mem_high.threshold: 190 must be in (0, 100]"}},
		{"service-alerts.bad.yml", []string{
			":3: alerts.latency_high.threshold: -2 must be a positive number of seconds",
			":5: alerts.queue_high.for: -1m0s must not be negative",
			":6: alerts.util_high.threshold: 250 must be in (0, 100]"}},
		{"webhook.bad.yml", []string{":2: webhooks[0]", `format "slack"`}},
		{"scrape.bad.yml", []string{":2: scrape[0]: set at least one", `:4: scrape[1].name: "api" is used twice`, ":7: scrape[1].quantile: 99"}},
		{"interval.bad.yml", []string{":2: interval: 100ms is too short"}},
		{"tags.bad.yml", []string{
			`:2: tags._x: tag key "_x" starts with '_'`, `:2: tags.time: tag key "time" is reserved`,
			`:3: host: tag value "gpu\tnode" has control characters`, `:4: host_pools.gpu-a100-07: tag value "pool\\"`,
			`:7: nvml.tags.table: tag key "table" is reserved`, `:10: dcgm[0].tags.: empty tag key`,
			`:15: scrape[0].tags.result: tag key "result" is reserved`}},
		{"ranges.bad.yml", []string{
			":2: scrape_max_bytes: 100 is outside [1024, 1073741824]", ":3: unready_after_intervals: -1 is outside",
			":4: buffer.memory_points: -5 is outside", ":4: buffer.spool_max_bytes: 1024 is outside [1048576",
			":5: query_api.max_windows: -1", ":5: query_api.max_response_bytes: 10", ":5: query_api.max_concurrent: 1000 is outside [1, 256]"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", tc.file))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Every testdata file is covered by one of the two tests above.
func TestAllTestdataListed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yml"))
	if len(files) != 13 {
		t.Errorf("%d testdata files; update TestBadFiles/TestGoodFiles", len(files))
	}
}

func TestResolveSecrets(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("file-token\n"), 0o600)
	env := map[string]string{"INFLUX_TOKEN": "influx-secret", "PREWARM_RELEASE_TOKEN": "rel-secret",
		"WECOM_ROBOT_URL": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k", "DINGTALK_ROBOT_URL": "https://oapi.dingtalk.com/robot/send?access_token=t",
		"DINGTALK_SECRET": "SECxyz"}
	getenv := func(k string) string { return env[k] }

	cfg, err := Load(filepath.Join("testdata", "good.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ResolveSecrets(getenv); err != nil {
		t.Fatal(err)
	}
	if cfg.Store.Influx.Token != "influx-secret" || cfg.Webhooks[0].Token != "rel-secret" ||
		cfg.Webhooks[1].URL != env["WECOM_ROBOT_URL"] || cfg.Webhooks[2].Secret != "SECxyz" {
		t.Errorf("resolved: influx %q, webhooks %+v", cfg.Store.Influx.Token, cfg.Webhooks)
	}

	cfg.Webhooks[0].TokenEnv, cfg.Webhooks[0].TokenFile = "", tokenFile
	if err := cfg.ResolveSecrets(getenv); err != nil || cfg.Webhooks[0].Token != "file-token" {
		t.Errorf("token_file: %q, %v", cfg.Webhooks[0].Token, err)
	}

	delete(env, "PREWARM_RELEASE_TOKEN")
	cfg.Webhooks[0].TokenEnv, cfg.Webhooks[0].TokenFile = "PREWARM_RELEASE_TOKEN", ""
	err = cfg.ResolveSecrets(getenv)
	if err == nil || !strings.Contains(err.Error(), "PREWARM_RELEASE_TOKEN") || strings.Contains(err.Error(), "rel-secret") {
		t.Errorf("missing env: %v", err)
	}
}

// FuzzParse: arbitrary YAML never panics the loader.
// Run: go test ./collector/config -run=^$ -fuzz=FuzzParse -fuzztime=20s
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yml"))
	for _, file := range files {
		raw, _ := os.ReadFile(file)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := Parse("fuzz.yml", raw)
		if err == nil && cfg.Interval < time.Second {
			t.Fatalf("accepted interval %s", cfg.Interval)
		}
	})
}

// Each source's sample.yml (collector/*/sample.yml) is a valid config.
func TestSourceSamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "*", "sample.yml"))
	if len(files) < 3 {
		t.Fatalf("found %d sample.yml files, want nvml, dcgm and service", len(files))
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestEmbeddedRetentionDefault(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want time.Duration
	}{
		{"default", "store: {embedded: x.db}\n", DefaultRetention},
		{"set", "store: {embedded: x.db, retention: 720h}\n", 720 * time.Hour},
		{"zero keeps forever", "store: {embedded: x.db, retention: 0s}\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("t.yml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Store.Retention != tt.want {
				t.Errorf("retention = %v, want %v", cfg.Store.Retention, tt.want)
			}
		})
	}
}

// An alert rule is on unless enabled: false says otherwise; the older key
// disabled is still read, with the opposite meaning, but not beside it.
func TestAlertRuleEnabled(t *testing.T) {
	const head = "dcgm:\n  - url: http://127.0.0.1:9400/metrics\nalerts:\n"
	for _, tc := range []struct {
		name, yaml string
		want       bool
		wantErr    string
	}{
		{"unset", head + "  idle: {threshold: 3}\n", true, ""},
		{"enabled false", head + "  idle: {enabled: false}\n", false, ""},
		{"older disabled", head + "  idle: {disabled: true}\n", false, ""},
		{"older disabled false", head + "  idle: {disabled: false}\n", true, ""},
		{"both", head + "  idle: {enabled: true, disabled: true}\n", false, "give enabled or the older disabled, not both"},
		{"unknown key", head + "  idle: {enable: true}\n", false, "line 4: field enable not found in a rule (known: threshold, for, enabled)"},
		{"not a boolean", head + "  idle: {enabled: maybe}\n", false, "maybe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("t.yml", []byte(tc.yaml))
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr == "" && cfg.Alerts.Idle.Enabled != tc.want:
				t.Errorf("alerts.idle enabled = %v, want %v", cfg.Alerts.Idle.Enabled, tc.want)
			case tc.wantErr == "" && tc.name == "unset" && cfg.Alerts.Idle.Threshold != 3:
				t.Errorf("alerts.idle threshold = %v, want 3 over the defaults", cfg.Alerts.Idle.Threshold)
			}
		})
	}
}
