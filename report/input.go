package report

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store"
)

// BacktestCommand is the 'forecaster backtest' line that reproduces the
// report's backtest table: the flags of fs that were given and that keep
// names (the demand, fleet and spot flags; deprecated names left out),
// scored from the same time as a report of weeks on tr, the same
// policies (BacktestPolicies).
func BacktestCommand(fs *pflag.FlagSet, keep []string, tr backtest.Trace, weeks int) string {
	parts := []string{"forecaster", "backtest"}
	fs.Visit(func(f *pflag.Flag) {
		if !slices.Contains(keep, f.Name) || f.Deprecated != "" {
			return
		}
		switch {
		case f.Value.Type() == "bool" && f.Value.String() == "true":
			parts = append(parts, "--"+f.Name)
			return
		case f.Value.Type() == "bool":
			parts = append(parts, "--"+f.Name+"=false")
			return
		}
		parts = append(parts, "--"+f.Name, shellQuote(f.Value.String()))
	})
	if from := ScoreFrom(tr, weeks); !from.IsZero() {
		parts = append(parts, "--score-from", from.UTC().Format(time.RFC3339))
	}
	parts = append(parts, "--policies", strings.Join(BacktestPolicies, ","))
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadDemand reads pool's demand over the span before now from db (named
// storeName in messages), on the pool's forecast step, each step the mean
// (as serve's refits read it), the tag sets summed; the trace starts at
// the first step with data.
func ReadDemand(ctx context.Context, db store.Querier, storeName string, pool poolspec.Pool, span time.Duration, now time.Time) (backtest.Trace, error) {
	step := pool.Forecast.Step
	end := store.WindowStart(now, step)
	start := end.Add(-span / step * step)
	series, err := db.Query(ctx, pool.Demand.Query(start, end, step, store.Mean))
	if err != nil {
		return backtest.Trace{}, fmt.Errorf("reading %s from %s: %w", pool.Demand, storeName, err)
	}
	rps := store.SumOnGrid(series, start, step, int(end.Sub(start)/step))
	first := slices.IndexFunc(rps, func(v float64) bool { return !math.IsNaN(v) })
	if first < 0 {
		return backtest.Trace{}, fmt.Errorf("no %s in %s over the last %v: is the collector writing it (or run 'forecaster import')?",
			pool.Demand, storeName, span)
	}
	return backtest.Trace{Name: pool.Name, Start: start.Add(time.Duration(first) * step), Step: step, RPS: rps[first:]}, nil
}
