// Command collector reads GPU telemetry (NVML, dcgm-exporter) and service
// metrics (any Prometheus endpoint) and writes them to prewarm's store.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "collector: not implemented yet")
	os.Exit(1)
}
