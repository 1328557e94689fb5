package open

import (
	"net/url"

	"github.com/prewarm/prewarm/store/influx"
)

// Name names the store that Store(ctx, spec, Options{Influx: ic}) opens,
// for a command's last line, without credentials: the InfluxDB URL
// (redacted) and bucket when ic.URL is set, else spec as given.
func Name(spec string, ic influx.Config) string {
	if ic.URL == "" {
		return spec
	}
	name := ic.URL
	if u, err := url.Parse(ic.URL); err == nil {
		name = u.Redacted()
	}
	return "InfluxDB " + name + " bucket " + ic.Bucket
}
