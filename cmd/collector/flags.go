package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/collector/agent"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/internal/cli"
)

// usageError marks a mistake on the command line or in the config file
// (exit status 2).
type usageError = agent.UsageError

// options are the command-line flags: the process's own, and the ones
// that set what the config file sets (config.Flags).
type options struct {
	configFile string
	config     config.Flags
	once       bool
	print      bool
	logLevel   cli.LogLevelFlag
	version    bool
}

func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("collector", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&o.configFile, "config", "", "YAML configuration file; flags override it")
	o.config.Register(fs)
	fs.BoolVar(&o.once, "once", false, "run one collection cycle and exit")
	fs.BoolVar(&o.print, "print", false, "print each cycle's points to stdout (line-protocol-like)")
	fs.Var(&o.logLevel, "log-level", "least severe log lines written to stderr: "+strings.Join(cli.LogLevels, ", "))
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	return fs
}
