package poolspec

import (
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// SpanFlag is a duration flag (pflag.Value) that also reads Prometheus'
// units (7d, 2w) and refuses values outside [lo, hi], naming them: the
// horizon, warm-up and history of 'report' and 'plan'.
type SpanFlag struct {
	v      *time.Duration
	lo, hi time.Duration
}

// NewSpanFlag sets *v to def and returns the flag that sets it within
// [lo, hi].
func NewSpanFlag(v *time.Duration, def, lo, hi time.Duration) *SpanFlag {
	*v = def
	return &SpanFlag{v: v, lo: lo, hi: hi}
}

// Set reads s, refusing a value out of range.
func (f *SpanFlag) Set(s string) error {
	d, err := parseSpan(s)
	if err != nil {
		return err
	}
	if d < f.lo || d > f.hi {
		return fmt.Errorf("%s is out of range: must be between %s and %s", s, FormatSpan(f.lo), FormatSpan(f.hi))
	}
	*f.v = d
	return nil
}

// String writes the value as FormatSpan does.
func (f *SpanFlag) String() string { return FormatSpan(*f.v) }

// Type names the flag's kind in --help.
func (f *SpanFlag) Type() string { return "duration" }

// parseSpan reads 90m, 1h30m, 36h, 7d, 2w.
func parseSpan(s string) (time.Duration, error) {
	if d, err := model.ParseDuration(s); err == nil {
		return time.Duration(d), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 90m, 36h, 7d or 2w")
	}
	return d, nil
}

// FormatSpan writes d in whole days when it is some (7d, 28d), else in
// Prometheus' notation (1h, 90m, 36h); 0 and negative ones as Go does.
func FormatSpan(d time.Duration) string {
	switch {
	case d <= 0 || d%time.Millisecond != 0:
		return d.String()
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return model.Duration(d).String()
}
