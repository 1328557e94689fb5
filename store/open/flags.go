package open

import (
	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/store/influx"
)

// EnvInfluxToken is the environment variable holding InfluxDB's token; a
// token never goes on a command line, where ps and shell histories show it.
const EnvInfluxToken = "INFLUX_TOKEN"

// Flags are the command line that chooses a store: --store SPEC, or the
// --influx-* flags, which select InfluxDB whatever --store says. serve,
// import, plan and report read them alike.
type Flags struct {
	// Spec is --store (see Parse).
	Spec string
	// Influx are --influx-url, --influx-org and --influx-bucket; the token
	// comes from EnvInfluxToken (Options).
	Influx influx.Config
}

// Register adds --store with the default spec and usage given, and the
// --influx-* flags.
func (f *Flags) Register(fs *pflag.FlagSet, spec, usage string) {
	fs.StringVar(&f.Spec, "store", spec, usage)
	fs.StringVar(&f.Influx.URL, "influx-url", "", "InfluxDB URL (2.x, or 1.8+ with Flux enabled); selects the InfluxDB store")
	fs.StringVar(&f.Influx.Org, "influx-org", influx.DefaultOrg, "InfluxDB organisation (1.8: -)")
	fs.StringVar(&f.Influx.Bucket, "influx-bucket", influx.DefaultBucket, "InfluxDB bucket (1.8: database/retention-policy)")
}

// Options are the options that open the store the flags name, with
// InfluxDB's token read through getenv.
func (f Flags) Options(getenv func(string) string) Options {
	ic := f.Influx
	ic.Token = getenv(EnvInfluxToken)
	return Options{Influx: ic}
}

// Name names the store the flags open, without credentials (see Name).
func (f Flags) Name() string { return Name(f.Spec, f.Influx) }

// FlagNames are the flags Register adds.
func FlagNames() []string { return []string{"store", "influx-url", "influx-org", "influx-bucket"} }
