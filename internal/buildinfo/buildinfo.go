// Package buildinfo says which prewarm a binary is: its version, the VCS
// revision it was built from and the Go toolchain, read from the build
// information the Go toolchain embeds (runtime/debug.ReadBuildInfo). Both
// binaries print it for --version and export it as
// prewarm_build_info{version,revision,goversion} = 1, so a dashboard can
// tell which build is running where.
//
// A release build may set the version explicitly:
//
//	go build -ldflags "-X github.com/prewarm/prewarm/internal/buildinfo.version=v1.2.0" ./cmd/forecaster
//
// Otherwise it is the module version the toolchain stamped (a pseudo-version
// such as v0.0.0-20261201101500-0123456789ab+dirty when built from a git
// checkout, "(devel)" when it could not tell).
package buildinfo

import (
	"fmt"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// version is set with -ldflags -X for release builds; "" reads the build
// information.
var version = ""

// Info is what a binary knows about its own build.
type Info struct {
	// Version is the release (or pseudo-) version, "(devel)" when unknown.
	Version string `json:"version"`
	// Revision is the VCS commit, with "-dirty" when the tree had local
	// changes; "unknown" when the binary was built outside a checkout.
	Revision string `json:"revision"`
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string `json:"go_version"`
}

// Read returns the running binary's build information.
func Read() Info {
	info := Info{Version: "(devel)", Revision: "unknown", GoVersion: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		info.GoVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			info.Version = v
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && info.Revision != "unknown" {
			info.Revision += "-dirty"
		}
	}
	if version != "" {
		info.Version = version
	}
	return info
}

// String is the line --version prints: "NAME VERSION (revision REV, GOVERSION)".
func (i Info) String() string {
	return fmt.Sprintf("%s (revision %s, %s)", i.Version, i.Revision, i.GoVersion)
}

// Collector returns the gauge prewarm_build_info{version,revision,goversion},
// always 1, for a binary named binary ("forecaster", "collector") in its help.
func Collector(binary string) prometheus.Collector {
	i := Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "prewarm", Name: "build_info",
		Help:        fmt.Sprintf("The %s's version, VCS revision and Go version (always 1).", binary),
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion}})
	g.Set(1)
	return g
}
