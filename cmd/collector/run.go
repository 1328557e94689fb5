package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/collector/agent"
	"github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/store/open"
)

// run is the whole command, testable: it returns when ctx is done (or after
// one cycle with --once). Everything it writes to stdout and stderr, and
// the error it returns, passes through one redactor holding every
// configured secret.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	red := redact.New(os.Getenv(open.EnvInfluxToken), os.Getenv(config.EnvWebhookToken))
	defer func() { err = red.Error(err) }()
	stdout, stderr = red.Writer(stdout), red.Writer(stderr)

	var o options
	fs := newFlagSet(&o)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: collector [flags]\n\nCollects GPU and service metrics into prewarm's store. See docs/collector.md.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return &usageError{Err: err}
	}
	red.Add(o.config.Secrets()...)
	if o.version {
		fmt.Fprintln(stdout, "collector", buildinfo.Read())
		return nil
	}
	if fs.NArg() > 0 {
		return &usageError{Err: fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel.Level}))

	cfg, err := o.config.Load(fs, o.configFile, os.Getenv)
	if err != nil {
		return &usageError{Err: err}
	}
	red.Add(agent.Secrets(cfg)...)
	opts := agent.Options{Once: o.once, Logger: log, Redactor: red}
	if o.print {
		opts.Print = stdout
	}
	return agent.Run(ctx, cfg, opts)
}
