package volcengine

import (
	"maps"

	"github.com/prewarm/prewarm/actuator"
)

// ReleaseSettings are the command-line settings of a one-off release
// ('forecaster release'): they win over the pools' options and the
// environment.
type ReleaseSettings struct {
	// Credentials is the credentials file named on the command line; a
	// pool without its own credentials_file reads it.
	Credentials string
	// Region and Endpoint, when set, override everything else.
	Region, Endpoint string
}

// ReleaseConfig is the connection of a one-off release: base (the
// environment over the --credentials file, LoadConfig), replaced by the
// first volcengine pool's when pools has one (its region, endpoint and
// credentials file, the settings applied before the pool is checked, as a
// Region may be what the pool lacks), then the settings' Region and
// Endpoint. The result is validated.
func ReleaseConfig(base Config, pools []actuator.PoolConfig, set ReleaseSettings, getenv func(string) string) (Config, error) {
	cfg := base
	for _, p := range pools {
		if p.Backend != Name {
			continue
		}
		if p.Options[OptCredentialsFile] == "" && set.Credentials != "" {
			p.Options = withOption(p.Options, OptCredentialsFile, set.Credentials)
		}
		if set.Region != "" {
			p.Options = withOption(p.Options, OptRegion, set.Region)
		}
		if set.Endpoint != "" {
			p.Options = withOption(p.Options, OptEndpoint, set.Endpoint)
		}
		var err error
		if cfg, err = ConfigForPool(p, getenv); err != nil {
			return cfg, err
		}
		break
	}
	if set.Region != "" {
		cfg.Region = set.Region
	}
	if set.Endpoint != "" {
		cfg.Endpoint = set.Endpoint
	}
	return cfg, cfg.Validate()
}

// withOption returns a copy of opts with key set.
func withOption(opts map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(opts)+1)
	maps.Copy(out, opts)
	out[key] = value
	return out
}
