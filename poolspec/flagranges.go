package poolspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// CheckRangeTable refuses the first setting of a range table that is out
// of its range and set by a flag (FleetKeys, then extra: flag to YAML
// key), as a FlagError naming the flag; settings no flag sets are the
// planner's to check.
func CheckRangeTable(table func(planner.RangeChecker), extra map[string]string) error {
	r := &flagRanges{flags: map[string]string{}}
	for _, m := range []map[string]string{FleetKeys(), extra} {
		for flag, key := range m {
			if _, dup := r.flags[key]; !dup && !deprecatedFlags[flag] {
				r.flags[key] = flag
			}
		}
	}
	table(r)
	return r.err
}

// deprecatedFlags are the old names of flags, never named in messages.
var deprecatedFlags = map[string]bool{"slo-quantile": true}

// flagRanges is a planner.RangeChecker that keeps the first setting out
// of its range as a FlagError naming its flag.
type flagRanges struct {
	flags map[string]string // YAML key → flag
	err   error
}

func (r *flagRanges) Int(x planner.Range[int]) {
	r.check(x.Key, x.Contains(), fmt.Sprint(x.Value), fmt.Sprintf("[%d, %s]", x.Lo, r.bound(x.HiKey, fmt.Sprint(x.Hi))))
}

func (r *flagRanges) Duration(x planner.Range[time.Duration]) {
	r.check(x.Key, x.Contains(), x.Value.String(), fmt.Sprintf("[%v, %s]", x.Lo, r.bound(x.HiKey, x.Hi.String())))
}

func (r *flagRanges) Float(x planner.Range[float64]) {
	r.check(x.Key, x.Contains(), fmt.Sprint(x.Value), x.Want())
}

// bound renders a range's end: the flag it comes from with its value.
func (r *flagRanges) bound(key, value string) string {
	if flag, ok := r.flags[key]; ok && key != "" {
		return "--" + flag + " " + value
	}
	return value
}

func (r *flagRanges) check(key string, in bool, value, want string) {
	flag, ok := r.flags[key]
	if r.err == nil && ok && !in {
		r.err = Flagf("--%s %s: must be in %s", flag, value, want)
	}
}

// CheckInt refuses v outside [lo, hi], naming flag.
func CheckInt(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return Flagf("%s %d: must be in [%d, %d]", flag, v, lo, hi)
	}
	return nil
}

// CheckFloat refuses v outside [lo, hi] (or NaN); zeroUnset lets 0 stand
// for "not given".
func CheckFloat(flag string, v, lo, hi float64, zeroUnset bool) error {
	if zeroUnset && v == 0 {
		return nil
	}
	if !(v >= lo && v <= hi) {
		return Flagf("%s %v: must be in [%g, %g]", flag, v, lo, hi)
	}
	return nil
}

// CheckUnit refuses v outside (0, 1) or, with closedAbove, (0, 1];
// zeroOK admits 0.
func CheckUnit(flag string, v float64, zeroOK, closedAbove bool) error {
	ok := v > 0 && (v < 1 || closedAbove && v == 1)
	if ok || zeroOK && v == 0 {
		return nil
	}
	if closedAbove {
		return Flagf("%s %v: must be in (0, 1]", flag, v)
	}
	return Flagf("%s %v: must be in (0, 1)", flag, v)
}

// CheckStep refuses a duration outside [lo, hi]; zeroUnset lets 0 stand
// for "not given" (the default).
func CheckStep(flag string, v, lo, hi time.Duration, zeroUnset bool) error {
	if zeroUnset && v == 0 {
		return nil
	}
	if v < lo || v > hi {
		return Flagf("%s %v: must be in [%v, %v]", flag, v, lo, hi)
	}
	return nil
}

// HelpRange is the range of the setting at key (a pool's YAML key) as a
// flag's help states it, "0 to 1d" or "[0.5, 1)", read from the range
// table (a planner.Config's CheckRanges, say), so that a flag's help and
// its check cannot disagree. A bound that is another setting's value is
// named by its flag (FleetKeys): "0 to --max". It panics on a key the
// table does not hold: a programming error, caught by the help tests.
func HelpRange(table func(planner.RangeChecker), key string) string {
	h := &helpRanges{key: key}
	table(h)
	if h.out == "" {
		panic("poolspec: no range for " + key)
	}
	return h.out
}

// helpRanges is a planner.RangeChecker that renders one key's range.
type helpRanges struct{ key, out string }

func (h *helpRanges) Int(x planner.Range[int]) {
	h.set(x.Key, fmt.Sprint(x.Lo), fmt.Sprint(x.Hi), x.HiKey, false, false, false)
}

func (h *helpRanges) Duration(x planner.Range[time.Duration]) {
	h.set(x.Key, HelpSpan(x.Lo), HelpSpan(x.Hi), x.HiKey, false, false, false)
}

func (h *helpRanges) Float(x planner.Range[float64]) {
	h.set(x.Key, HelpNumber(x.Lo), HelpNumber(x.Hi), x.HiKey, x.Hi <= 1, x.LoOpen, x.HiOpen)
}

// HelpNumber writes a bound as help texts do: 0.5, 1e6, 1e-9.
func HelpNumber(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	return strings.NewReplacer("e+0", "e", "e-0", "e-", "e+", "e").Replace(s)
}

func (h *helpRanges) set(key, lo, hi, hiKey string, interval, loOpen, hiOpen bool) {
	if key != h.key || h.out != "" {
		return
	}
	if hiKey != "" {
		hi = hiKey
		for flag, k := range FleetKeys() {
			if k == hiKey && !deprecatedFlags[flag] {
				hi = "--" + flag
			}
		}
	}
	if !interval {
		h.out = lo + " to " + hi
		return
	}
	l, r := "[", "]"
	if loOpen {
		l = "("
	}
	if hiOpen {
		r = ")"
	}
	h.out = l + lo + ", " + hi + r
}

// HelpSpan writes a duration bound as help texts do: 0, 1m, 1h, 24h,
// 7d (a day as 24h, longer spans in days).
func HelpSpan(d time.Duration) string {
	switch d {
	case 0:
		return "0"
	case 24 * time.Hour:
		return "24h"
	}
	return FormatSpan(d)
}
