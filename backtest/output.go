package backtest

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"time"
)

// CapacityCSVHeader is the header of WriteCapacityCSV's output.
var CapacityCSVHeader = []string{"timestamp", "demand_rps", "ready", "desired", "billed"}

// WriteCapacityCSV writes one row per trace step of a policy's run:
// timestamp (RFC 3339), demand_rps (empty for a step with no data), and the
// time-averaged ready, desired and billed instance counts over the step.
// Billed counts booting and draining instances too, so Σ billed × step is
// the run's GPU-hours.
func WriteCapacityCSV(w io.Writer, r Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CapacityCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range r.Capacity {
		demand := ""
		if !math.IsNaN(p.DemandRPS) {
			demand = f(p.DemandRPS)
		}
		rec := []string{p.At.Format(time.RFC3339), demand, f(round6(p.Ready)), f(round6(p.Desired)), f(round6(p.Billed))}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
