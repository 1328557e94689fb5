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

	"github.com/prewarm/prewarm/internal/buildinfo"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("collector", buildinfo.Read())
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "collector:", err)
	var uerr *usageError
	if errors.As(err, &uerr) {
		os.Exit(2)
	}
	os.Exit(1)
}
