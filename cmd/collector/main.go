// Command collector reads GPU telemetry (NVML, dcgm-exporter) and service
// metrics (any Prometheus endpoint) and writes them to prewarm's store,
// buffering through store outages, raising alerts and idle events, and
// serving its own /metrics. See docs/collector.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/prewarm/prewarm/internal/cli"
)

func main() {
	args, debug := cli.StripDebug(os.Args[1:], os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Guard(func() error { return run(ctx, args, os.Stdout, os.Stderr) })
	stop()
	if err == nil {
		return
	}
	if code, internal := cli.Report(os.Stderr, "collector", err, debug); internal {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "collector:", err)
	var uerr *usageError
	if errors.As(err, &uerr) {
		os.Exit(cli.ExitUsage)
	}
	os.Exit(cli.ExitFailure)
}
