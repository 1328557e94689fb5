package datasets

import (
	"fmt"
	"slices"
	"time"
)

// Bounds on a value that a demand trace can hold, past which a row is
// taken for a unit or typing error (1e300, 99999 among tens) and refused,
// naming its line, unless CSVOptions.AllowOutliers keeps it. They apply to
// the values as read, rates or counts per row.
const (
	// MaxValue is the largest value accepted: 1e12 requests/s (or per
	// row) is beyond any fleet.
	MaxValue = 1e12
	// MaxMedianRatio: a value more than this many times the median of the
	// file's positive values is refused. The recorded traces in
	// ../shared/datasets peak at 15× their median (the Azure token
	// columns at 146×).
	MaxMedianRatio = 1000
	// minMedianRows is how many positive values the median needs before
	// MaxMedianRatio applies.
	minMedianRows = 20
)

// outlierHint ends the problem of a row refused for its value.
const outlierHint = " (a unit or typing error? --allow-outliers keeps it, --skip-bad drops it)"

// Outlier is a value beyond the bounds above that AllowOutliers kept.
type Outlier struct {
	Line  int
	Value float64
	// Problem says which bound it crossed.
	Problem string
}

// outlierProblem says why v is absurd for a file whose positive values
// have the given median (0: too few to judge), or "".
func outlierProblem(v, median float64) string {
	switch {
	case v > MaxValue:
		return fmt.Sprintf("value %g is above %g, the largest value prewarm accepts", v, float64(MaxValue))
	case median > 0 && v > MaxMedianRatio*median:
		return fmt.Sprintf("value %g is %.0f× the median %g of the file's values (more than %d×)", v, v/median, median, MaxMedianRatio)
	}
	return ""
}

// positiveMedian is the median of the samples' positive values, 0 when
// there are fewer than minMedianRows.
func positiveMedian(samples []sample) float64 {
	var pos []float64
	for _, sm := range samples {
		if sm.v > 0 {
			pos = append(pos, sm.v)
		}
	}
	if len(pos) < minMedianRows {
		return 0
	}
	slices.Sort(pos)
	n := len(pos)
	if n%2 == 1 {
		return pos[n/2]
	}
	return (pos[n/2-1] + pos[n/2]) / 2
}

// screenOutliers refuses (as bad rows of column) or, with allow, keeps and
// lists the samples whose values are absurd; it returns the samples kept
// and the times of those refused, which still count for the step.
func screenOutliers(samples []sample, column string, allow bool, rr *rowReader) (kept []sample, refusedTimes []time.Time) {
	median := positiveMedian(samples)
	kept = samples[:0:0]
	for _, sm := range samples {
		problem := outlierProblem(sm.v, median)
		switch {
		case problem == "":
			kept = append(kept, sm)
		case allow:
			rr.rep.Outliers = append(rr.rep.Outliers, Outlier{Line: sm.line, Value: sm.v, Problem: problem})
			kept = append(kept, sm)
		default:
			rr.bad(sm.line, column, problem+outlierHint)
			refusedTimes = append(refusedTimes, sm.t)
		}
	}
	if len(refusedTimes) > 0 {
		slices.SortStableFunc(rr.rep.Bad, func(a, b RowError) int { return a.Line - b.Line })
	}
	return kept, refusedTimes
}
