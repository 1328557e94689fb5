package open

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestFlagsChooseTheStore(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		token    string
		wantSpec string
		wantURL  string
		wantName string
	}{
		{"the default spec", nil, "", "embedded:x.db", "", "embedded:x.db"},
		{"a spec given", []string{"--store", "http://127.0.0.1:9100"}, "", "http://127.0.0.1:9100", "", "http://127.0.0.1:9100"},
		{"InfluxDB with its token from the environment", []string{"--influx-url", "http://u:pw@127.0.0.1:8086", "--influx-bucket", "b"},
			"secret", "embedded:x.db", "http://u:pw@127.0.0.1:8086", "InfluxDB http://u:xxxxx@127.0.0.1:8086 bucket b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			var f Flags
			f.Register(fs, "embedded:x.db", "the store")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			opts := f.Options(func(k string) string {
				if k == EnvInfluxToken {
					return tt.token
				}
				return ""
			})
			if f.Spec != tt.wantSpec || opts.Influx.URL != tt.wantURL || opts.Influx.Token != tt.token {
				t.Errorf("spec %q url %q token %q; want %q %q %q", f.Spec, opts.Influx.URL, opts.Influx.Token, tt.wantSpec, tt.wantURL, tt.token)
			}
			if got := f.Name(); got != tt.wantName || strings.Contains(got, "pw") {
				t.Errorf("Name() = %q, want %q (no password)", got, tt.wantName)
			}
		})
	}
}

func TestFlagsRegisterEveryName(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var f Flags
	f.Register(fs, "", "")
	for _, name := range FlagNames() {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s not registered", name)
		}
	}
}
