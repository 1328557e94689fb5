package open

import (
	"testing"

	"github.com/prewarm/prewarm/store/influx"
)

func TestName(t *testing.T) {
	tests := []struct {
		name, spec string
		ic         influx.Config
		want       string
	}{
		{"an embedded spec as given", "embedded:prewarm.db", influx.Config{}, "embedded:prewarm.db"},
		{"InfluxDB by URL and bucket", "embedded:x", influx.Config{URL: "http://127.0.0.1:8086", Bucket: "b"}, "InfluxDB http://127.0.0.1:8086 bucket b"},
		{"without the URL's password", "", influx.Config{URL: "http://u:secret@127.0.0.1:8086", Bucket: "b"}, "InfluxDB http://u:xxxxx@127.0.0.1:8086 bucket b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Name(tt.spec, tt.ic); got != tt.want {
				t.Errorf("Name = %q, want %q", got, tt.want)
			}
		})
	}
}
