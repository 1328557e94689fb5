package collector

import (
	"context"
	"errors"

	"github.com/prewarm/prewarm/store"
)

// Source is one input of the collector, like a Telegraf input plugin.
type Source interface {
	// Name identifies the source in logs and in /metrics labels, e.g.
	// "nvml" or "dcgm:10.0.0.7:9400".
	Name() string
	// Gather reads the source once. Points with a zero Time are stamped with
	// the cycle's time. A Source may return points together with an error
	// (a partial read); errors wrapping ErrMalformed are counted as
	// malformed input rather than the source being down. Gather is never
	// called concurrently with itself.
	Gather(ctx context.Context) ([]store.Point, error)
}

// ErrMalformed marks input a source could not parse (a scrape that is not
// valid exposition format, a sample missing its labels): the source is up
// but its data is bad.
var ErrMalformed = errors.New("malformed input")

// ErrTooLarge marks a scrape whose page exceeded the configured size limit:
// nothing from it is used, the source counts as down, and the refusal is
// counted as rejected_samples_total{reason="too_large"}.
var ErrTooLarge = errors.New("scrape page too large")
