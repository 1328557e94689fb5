package fit

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// MaxHorizon bounds a forecast's steps (about two years of per-minute
// steps), so that a typo cannot make the forecasters allocate gigabytes.
const MaxHorizon = 1_000_000

// WriteCSV writes the points with the header timestamp,forecast,lower,upper,
// each number with ten significant digits.
func (o Output) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"timestamp", "forecast", "lower", "upper"})
	for _, p := range o.Points {
		cw.Write([]string{p.Timestamp, formatFloat(p.Forecast), formatFloat(p.Lower), formatFloat(p.Upper)})
	}
	cw.Flush()
	return cw.Error()
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

// Point is one forecast step as 'forecaster fit' prints it.
type Point struct {
	Timestamp string  `json:"timestamp"`
	Forecast  float64 `json:"forecast"`
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
}

// Output is a forecast as 'forecaster fit' prints it (its JSON form).
type Output struct {
	Input    string  `json:"input"`
	Method   string  `json:"method"`
	Fallback string  `json:"fallback,omitempty"`
	Periods  []int   `json:"periods"`
	Level    float64 `json:"level"` // percent
	Points   []Point `json:"points"`
}

// NewOutput is r, forecast from the series of input with its interval at
// levelPercent, as printed: step j of the forecast stamped stamp(j).
func NewOutput(input string, levelPercent float64, r Result, stamp func(j int) string) Output {
	out := Output{Input: input, Method: r.Method, Fallback: r.Fallback, Periods: r.Periods, Level: levelPercent}
	for j := range r.Mean {
		out.Points = append(out.Points, Point{Timestamp: stamp(j), Forecast: r.Mean[j], Lower: r.Lower[j], Upper: r.Upper[j]})
	}
	return out
}

// Errors of ParsePeriods.
var (
	ErrPeriodList  = errors.New("want auto, none, or periods ≥ 2 such as 24,168")
	ErrPeriodOrder = errors.New("list the periods shortest first, each once")
)

// ParsePeriods reads a list of seasonal periods: "auto" or "" (detect:
// nil), "none" (empty), or a comma list of periods ≥ 2 in increasing
// order, as Series.Periods takes them.
func ParsePeriods(s string) ([]int, error) {
	switch strings.TrimSpace(s) {
	case "auto", "":
		return nil, nil
	case "none":
		return []int{}, nil
	}
	var periods []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 2 {
			return nil, ErrPeriodList
		}
		if len(periods) > 0 && p <= periods[len(periods)-1] {
			return nil, ErrPeriodOrder
		}
		periods = append(periods, p)
	}
	return periods, nil
}
