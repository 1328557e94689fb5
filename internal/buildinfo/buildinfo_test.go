package buildinfo

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestReadAndCollector(t *testing.T) {
	tests := []struct {
		name, ldflags, wantVersion string
	}{
		{"from the build information", "", ""},
		{"set by -ldflags -X", "v9.9.9", "v9.9.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			was := version
			version = tt.ldflags
			t.Cleanup(func() { version = was })
			i := Read()
			if i.GoVersion != runtime.Version() {
				t.Errorf("go version %q, want %q", i.GoVersion, runtime.Version())
			}
			if i.Version == "" || i.Revision == "" {
				t.Errorf("empty fields in %+v", i)
			}
			if tt.wantVersion != "" && i.Version != tt.wantVersion {
				t.Errorf("version %q, want %q", i.Version, tt.wantVersion)
			}
			if s := i.String(); !strings.HasPrefix(s, i.Version+" (revision "+i.Revision) {
				t.Errorf("String() = %q", s)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(Collector("forecaster"))
			want := `# HELP prewarm_build_info The forecaster's version, VCS revision and Go version (always 1).
# TYPE prewarm_build_info gauge
prewarm_build_info{goversion="` + i.GoVersion + `",revision="` + i.Revision + `",version="` + i.Version + `"} 1
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "prewarm_build_info"); err != nil {
				t.Error(err)
			}
		})
	}
}
