package m4

import (
	"errors"
	"os"
	"path/filepath"
)

// Prepare readies loaded M4 Hourly series for scoring: the first limit of
// them (0: all), with split applied at the Hourly horizon, and, on the
// official split, the official results in dir (HourlyResults) when the
// folder has them (nil when not).
func Prepare(series []Series, dir string, split Split, limit int) ([]Series, []Result, error) {
	if limit > 0 && limit < len(series) {
		series = series[:limit]
	}
	series, err := split.Apply(series, HourlyHorizon)
	if err != nil {
		return nil, nil, err
	}
	if split != SplitOfficial {
		return series, nil, nil
	}
	official, err := LoadResults(filepath.Join(dir, HourlyResults))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	return series, official, nil
}
