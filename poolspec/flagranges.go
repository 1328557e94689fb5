package poolspec

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// CheckRangeTable refuses the first setting of a range table that is out
// of its range and set by a flag (FleetKeys, then extra: flag to YAML
// key), as a FlagError naming the flag; settings no flag sets are the
// planner's to check.
func CheckRangeTable(table func(planner.RangeChecker), extra map[string]string) error {
	r := &flagRanges{flags: map[string]string{}}
	for _, m := range []map[string]string{FleetKeys, extra} {
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
