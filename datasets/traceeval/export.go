package traceeval

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// windowHeader is the header of the file WriteWindows writes and
// testdata/r_reference.R reads.
var windowHeader = []string{"series", "origin", "time", "step_seconds", "half", "period", "periods", "train_sum", "train", "test"}

// WriteWindows writes the windows as CSV, one row per window: its series,
// origin, start time (RFC 3339), step in seconds, half, seasonal naive
// period, clock periods (space-separated), the sum of its history (a
// checksum R echoes back), and the history and test values
// (space-separated, shortest round-trip decimal form, NA for a test step
// the trace lacks). testdata/r_reference.R forecasts exactly these.
func WriteWindows(w io.Writer, windows []Window) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(windowHeader); err != nil {
		return err
	}
	for _, win := range windows {
		periods := make([]string, len(win.Periods))
		for i, p := range win.Periods {
			periods[i] = strconv.Itoa(p)
		}
		rec := []string{win.Series, strconv.Itoa(win.Origin), win.Time.UTC().Format("2006-01-02T15:04:05Z"),
			strconv.FormatFloat(win.Step.Seconds(), 'g', -1, 64), strconv.Itoa(win.Half), strconv.Itoa(win.Period),
			strings.Join(periods, " "), strconv.FormatFloat(TrainSum(win), 'g', 17, 64),
			joinValues(win.Train), joinValues(win.Test)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write windows: %w", err)
	}
	return nil
}

// TrainSum is the checksum of a window's history: the sum of its values.
func TrainSum(w Window) float64 {
	s := 0.0
	for _, v := range w.Train {
		s += v
	}
	return s
}

func joinValues(v []float64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		if math.IsNaN(x) {
			b.WriteString("NA")
			continue
		}
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
	return b.String()
}
