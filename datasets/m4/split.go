package m4

import "fmt"

// Split names the future a method is scored on.
type Split string

const (
	// SplitOfficial scores the competition's test values: the 48 hours
	// after each training series.
	SplitOfficial Split = "official"
	// SplitHoldout cuts the last HourlyHorizon points off each training
	// series and scores those: nothing that has seen the official test
	// (neither a method nor a design choice made by looking at its
	// scores) can have seen them. Scores on this split are relative to
	// Naive2 on the same window, not to the published Naive2 figures.
	SplitHoldout Split = "holdout"
)

// ParseSplit reads a split name: "official" or "holdout".
func ParseSplit(s string) (Split, error) {
	switch Split(s) {
	case SplitOfficial, SplitHoldout:
		return Split(s), nil
	}
	return "", fmt.Errorf("unknown split %q: want %s or %s", s, SplitOfficial, SplitHoldout)
}

// Apply returns the series of split: the official ones as they are, or
// the holdout (see Holdout) with the horizon h.
func (s Split) Apply(series []Series, h int) ([]Series, error) {
	switch s {
	case SplitOfficial, "":
		return series, nil
	case SplitHoldout:
		return Holdout(series, h)
	}
	return nil, fmt.Errorf("unknown split %q", string(s))
}

// Holdout returns new series whose Test is the last h values of each
// training series and whose Train is the rest; the official test values
// are dropped. A series with fewer than 2h training values is an error
// naming it.
func Holdout(series []Series, h int) ([]Series, error) {
	if h < 1 {
		return nil, fmt.Errorf("holdout: horizon %d must be at least 1", h)
	}
	out := make([]Series, len(series))
	for i, s := range series {
		n := len(s.Train)
		if n < 2*h {
			return nil, fmt.Errorf("holdout: series %s has %d training values, fewer than twice the horizon %d", s.ID, n, h)
		}
		out[i] = Series{ID: s.ID, Train: s.Train[: n-h : n-h], Test: s.Train[n-h:]}
	}
	return out, nil
}
