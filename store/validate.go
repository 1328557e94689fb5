package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrInvalidPoint wraps errors for points no Store accepts: a non-finite
// value, an empty measurement, a reserved or malformed tag key, a zero time.
// Retrying such a batch will not help; fix or drop the offending point.
var ErrInvalidPoint = errors.New("invalid point")

// ErrInvalidQuery wraps errors for queries no Store can answer: no
// measurement, an empty range, an unknown aggregate.
var ErrInvalidQuery = errors.New("invalid query")

// minTime and maxTime bound the times a Store keeps: the range of int64
// nanoseconds since the Unix epoch, which is what InfluxDB stores too.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// Validate reports why p cannot be stored, or nil. The rules are the
// intersection of what every Store (and InfluxDB's line protocol and Flux)
// can represent:
//   - Measurement is non-empty;
//   - tag keys are non-empty, do not start with "_" and are not "time",
//     "result" or "table" (Flux's own columns); a tag with an empty value is
//     the same as no tag;
//   - measurement, tag keys and values are valid UTF-8 without control
//     characters and do not end in a backslash (line protocol cannot
//     escape one there);
//   - Value is finite (not NaN or ±Inf);
//   - Time is set and within int64 nanoseconds of the Unix epoch.
func (p Point) Validate() error {
	if p.Measurement == "" {
		return fmt.Errorf("%w: empty measurement", ErrInvalidPoint)
	}
	if unrepresentable(p.Measurement) {
		return fmt.Errorf("%w: measurement %q has control characters, a trailing backslash or invalid UTF-8", ErrInvalidPoint, p.Measurement)
	}
	for k, v := range p.Tags {
		if err := validTagKey(k); err != nil {
			return fmt.Errorf("%w: measurement %q: %w", ErrInvalidPoint, p.Measurement, err)
		}
		if unrepresentable(v) {
			return fmt.Errorf("%w: measurement %q: tag %q value %q has control characters, a trailing backslash or invalid UTF-8", ErrInvalidPoint, p.Measurement, k, v)
		}
	}
	if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
		return fmt.Errorf("%w: %s%s at %s: value %v is not finite", ErrInvalidPoint,
			p.Measurement, CanonicalTags(p.Tags), p.Time.UTC().Format(time.RFC3339Nano), p.Value)
	}
	if p.Time.IsZero() {
		return fmt.Errorf("%w: %s%s: time is not set", ErrInvalidPoint, p.Measurement, CanonicalTags(p.Tags))
	}
	if p.Time.Before(minTime) || p.Time.After(maxTime) {
		return fmt.Errorf("%w: %s%s: time %s is outside the years 1678-2262", ErrInvalidPoint,
			p.Measurement, CanonicalTags(p.Tags), p.Time.UTC().Format(time.RFC3339))
	}
	return nil
}

// ValidatePoints checks every point of a batch and reports the first bad
// one by index, so that a Store can refuse the batch whole before writing
// any of it.
func ValidatePoints(points []Point) error {
	for i, p := range points {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("point %d of %d: %w", i, len(points), err)
		}
	}
	return nil
}

// ValidateTagKey reports why no Store can hold a tag named k, or nil: the
// key rules of Point.Validate. Configuration that adds tags checks its keys
// with it at start, instead of every point being refused later.
func ValidateTagKey(k string) error { return validTagKey(k) }

// ValidateTagValue reports why no Store can hold the tag value v, or nil:
// the value rules of Point.Validate (an empty value is no tag, and valid).
func ValidateTagValue(v string) error {
	if unrepresentable(v) {
		return fmt.Errorf("tag value %q has control characters, a trailing backslash or invalid UTF-8", v)
	}
	return nil
}

func validTagKey(k string) error {
	switch {
	case k == "":
		return errors.New("empty tag key")
	case strings.HasPrefix(k, "_"):
		return fmt.Errorf("tag key %q starts with '_', which InfluxDB reserves", k)
	case k == "time" || k == "result" || k == "table":
		return fmt.Errorf("tag key %q is reserved by InfluxDB", k)
	case unrepresentable(k):
		return fmt.Errorf("tag key %q has control characters, a trailing backslash or invalid UTF-8", k)
	}
	return nil
}

// unrepresentable reports whether s has characters InfluxDB's line protocol
// cannot carry (control characters; a trailing backslash, which would escape
// the separator after it) or is not valid UTF-8 (which would make
// CanonicalTags ambiguous).
func unrepresentable(s string) bool {
	if strings.HasSuffix(s, `\`) {
		return true
	}
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Validate reports why q cannot be answered, or nil: it needs a
// measurement, Start before End, a non-negative Step and, when Step is
// set, one of the known aggregates. Match values must be non-empty (an
// empty tag value means "no tag" and cannot be matched).
func (q Query) Validate() error {
	if q.Measurement == "" {
		return fmt.Errorf("%w: empty measurement", ErrInvalidQuery)
	}
	if !q.Start.Before(q.End) {
		return fmt.Errorf("%w: start %s is not before end %s", ErrInvalidQuery,
			q.Start.UTC().Format(time.RFC3339Nano), q.End.UTC().Format(time.RFC3339Nano))
	}
	if q.Step < 0 {
		return fmt.Errorf("%w: negative step %s", ErrInvalidQuery, q.Step)
	}
	if q.Step > 0 && !q.Aggregate.Valid() {
		return fmt.Errorf("%w: unknown aggregate %q (want mean, sum, max, min, last or count)", ErrInvalidQuery, q.Aggregate)
	}
	for k, v := range q.Match {
		if err := validTagKey(k); err != nil {
			return fmt.Errorf("%w: match: %w", ErrInvalidQuery, err)
		}
		if v == "" {
			return fmt.Errorf("%w: match: tag %q has an empty value", ErrInvalidQuery, k)
		}
	}
	return nil
}

// Valid reports whether a is one of the aggregates every Store supports.
func (a Aggregate) Valid() bool {
	switch a {
	case Mean, Sum, Max, Min, Last, Count:
		return true
	}
	return false
}

// NormalizeTags returns tags without the keys whose value is empty (InfluxDB
// drops them on write, so every Store does), or nil when none remain.
func NormalizeTags(tags map[string]string) map[string]string {
	n := 0
	for _, v := range tags {
		if v != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n == len(tags) {
		return tags
	}
	out := make(map[string]string, n)
	for k, v := range tags {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// CanonicalTags returns the canonical string of a tag set: a JSON object
// with keys sorted and empty values dropped, e.g. {"gpu":"0","pool":"a"},
// byte for byte what encoding/json makes of the normalized map. Two tag sets
// are the same series exactly when their canonical strings are equal, and
// Query results are sorted by it.
func CanonicalTags(tags map[string]string) string {
	keys := make([]string, 0, len(tags))
	size := 2
	for k, v := range tags {
		if v != "" {
			keys = append(keys, k)
			size += len(k) + len(v) + 6
		}
	}
	slices.Sort(keys)
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, tags[k])
	}
	b = append(b, '}')
	return string(b)
}

// appendJSONString appends s as encoding/json writes it: plain ASCII
// without characters JSON or HTML escape is copied as is (the common case,
// and fast); anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
