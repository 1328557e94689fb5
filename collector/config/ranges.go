package config

import (
	"fmt"
	"github.com/prometheus/common/model"
	"strings"
	"time"
)

// intRange is the values one numeric setting accepts: min to max,
// inclusive. key is the setting's YAML key, dotted below the top level
// (buffer.memory_points); bytes marks a size, whose bounds messages also
// word in KiB, MiB, GiB or TiB.
type intRange struct {
	key      string
	min, max int64
	bytes    bool
}

// ranges is the one table of the numeric settings' ranges, in the order
// Validate reports them. Validate checks the file's values against it,
// naming the YAML key, where 0 means the setting's default; Flags.Apply
// checks the flags' values, naming the flag, where 0 is out of range like
// any other value outside it.
func ranges() []intRange {
	return []intRange{
		{key: "buffer.memory_points", min: 1, max: 100_000_000},
		{key: "buffer.spool_max_bytes", min: 1 << 20, max: 1 << 40, bytes: true},
		{key: "scrape_max_bytes", min: 1 << 10, max: 1 << 30, bytes: true},
		{key: "unready_after_intervals", min: 1, max: 10_000},
		{key: "query_api.max_points", min: 1, max: 100_000_000},
		{key: "query_api.max_windows", min: 1, max: 100_000_000},
		{key: "query_api.max_response_bytes", min: 1 << 10, max: 4 << 30, bytes: true},
		{key: "query_api.max_concurrent", min: 1, max: 256},
		{key: "store.influx.batch_size", min: 1, max: 1_000_000},
	}
}

// rangeOf is the range of the setting at key in the table (ranges); every
// caller names a key the table holds, which the tests check.
func rangeOf(key string) intRange {
	for _, r := range ranges() {
		if r.key == key {
			return r
		}
	}
	panic("config: no range for " + key)
}

// number is the value of the numeric setting at key in c, and false for a
// setting c does not have (store.influx.batch_size without InfluxDB).
func (c *Config) number(key string) (int64, bool) {
	switch key {
	case "buffer.memory_points":
		return int64(c.Buffer.MemoryPoints), true
	case "buffer.spool_max_bytes":
		return c.Buffer.SpoolMaxBytes, true
	case "scrape_max_bytes":
		return c.ScrapeMaxBytes, true
	case "unready_after_intervals":
		return int64(c.UnreadyAfterIntervals), true
	case "query_api.max_points":
		return int64(c.QueryAPI.MaxPoints), true
	case "query_api.max_windows":
		return int64(c.QueryAPI.MaxWindows), true
	case "query_api.max_response_bytes":
		return int64(c.QueryAPI.MaxResponseBytes), true
	case "query_api.max_concurrent":
		return int64(c.QueryAPI.MaxConcurrent), true
	case "store.influx.batch_size":
		if c.Store.Influx == nil {
			return 0, false
		}
		return int64(c.Store.Influx.BatchSize), true
	}
	panic("config: no setting " + key)
}

func (r intRange) contains(v int64) bool { return v >= r.min && v <= r.max }

// path is the key as Validate's field path.
func (r intRange) path() []any { return keyPath(r.key) }

// keyPath is a dotted key (buffer.memory_points) as Validate's field
// path.
func keyPath(key string) []any {
	var p []any
	for _, k := range strings.Split(key, ".") {
		p = append(p, k)
	}
	return p
}

// want is the range as a flag's error states it: "1 to 10000", or for a
// size "1024 (1 KiB) to 1073741824 (1 GiB)".
func (r intRange) want() string {
	if !r.bytes {
		return fmt.Sprintf("%d to %d", r.min, r.max)
	}
	return fmt.Sprintf("%d (%s) to %d (%s)", r.min, size(r.min), r.max, size(r.max))
}

// span is the range as a flag's help states it: "1 to 10000", or for a
// size "1 KiB to 1 GiB".
func (r intRange) span() string {
	if !r.bytes {
		return r.want()
	}
	return size(r.min) + " to " + size(r.max)
}

// size words n bytes in the largest binary unit that divides it.
func size(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for u+1 < len(units) && n != 0 && n%1024 == 0 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}

// durationRange is the values one duration setting accepts, min to max
// inclusive; zeroDefault lets 0 stand for the setting's default (or, for
// store.retention, for keeping every point).
type durationRange struct {
	key         string
	min, max    time.Duration
	zeroDefault bool
}

// durationRanges is the table of the duration settings' ranges, which
// Validate checks and the flags' help states.
func durationRanges() []durationRange {
	return []durationRange{
		{key: "interval", min: time.Second, max: time.Hour},
		{key: "store.retention", min: time.Hour, max: 10 * 366 * 24 * time.Hour, zeroDefault: true},
		{key: "store.influx.timeout", min: time.Second, max: 10 * time.Minute, zeroDefault: true},
	}
}

// durationRangeOf is the range of the duration setting at key.
func durationRangeOf(key string) durationRange {
	for _, r := range durationRanges() {
		if r.key == key {
			return r
		}
	}
	panic("config: no range for " + key)
}

// duration is the value of the duration setting at key in c, and false
// for a setting c does not have (store.influx.timeout without InfluxDB).
func (c *Config) duration(key string) (time.Duration, bool) {
	switch key {
	case "interval":
		return c.Interval, true
	case "store.retention":
		return c.Store.Retention, true
	case "store.influx.timeout":
		if c.Store.Influx == nil {
			return 0, false
		}
		return c.Store.Influx.Timeout, true
	}
	panic("config: no setting " + key)
}

// problem says what is wrong with v, "" when it is in range.
func (r durationRange) problem(v time.Duration) string {
	switch {
	case v == 0 && r.zeroDefault:
		return ""
	case v < r.min:
		return fmt.Sprintf("%s is too short (at least %s)", v, r.min)
	case v > r.max:
		return fmt.Sprintf("%s is too long (at most %s)", v, r.max)
	}
	return ""
}

// path is the key as Validate's field path.
func (r durationRange) path() []any { return keyPath(r.key) }

// span is the range as a flag's help states it: "1s to 1h".
func (r durationRange) span() string {
	return model.Duration(r.min).String() + " to " + model.Duration(r.max).String()
}
