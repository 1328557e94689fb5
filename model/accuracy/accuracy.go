package accuracy

import (
	"errors"
	"fmt"
	"math"
)

// Naive2 scores on the whole M4 Hourly set, the denominators of its OWA.
const (
	Naive2HourlySMAPE = 18.383
	Naive2HourlyMASE  = 2.395
)

// ErrLength reports slices of different lengths or empty ones.
var ErrLength = errors.New("actual and forecast lengths differ or are zero")

// ErrNotFinite reports a NaN or infinite value where a score needs a
// number: in the actuals, a forecast or a bound, or a degenerate scale.
var ErrNotFinite = errors.New("value is not finite")

// SMAPE is the symmetric mean absolute percentage error in percent:
//
//	sMAPE = 1/h · Σ 200·|y−ŷ| / (|y|+|ŷ|)
//
// A step where both y and ŷ are 0 counts as 0 error.
func SMAPE(actual, forecast []float64) (float64, error) {
	if len(actual) != len(forecast) || len(actual) == 0 {
		return math.NaN(), ErrLength
	}
	s := 0.0
	for i, y := range actual {
		den := math.Abs(y) + math.Abs(forecast[i])
		if den > 0 {
			s += 200 * math.Abs(y-forecast[i]) / den
		}
	}
	return s / float64(len(actual)), nil
}

// Scale is MASE's denominator: the in-sample mean absolute seasonal
// difference, mean |y_t − y_{t−m}| (m = 24 for M4 Hourly; use 1 for
// non-seasonal data). The M4 code counts the n−m differences from
// t = m+1 to n (1-based). A scale that is zero (an in-sample series that
// repeats exactly with period m) or not finite is an error: MASE and MSIS
// are undefined for such a series.
func Scale(insample []float64, m int) (float64, error) {
	if m < 1 || len(insample) <= m {
		return math.NaN(), fmt.Errorf("scale: %d in-sample values, need more than the period %d", len(insample), m)
	}
	s := 0.0
	for t := m; t < len(insample); t++ {
		s += math.Abs(insample[t] - insample[t-m])
	}
	scale := s / float64(len(insample)-m)
	if !(scale > 0) || math.IsInf(scale, 0) {
		return math.NaN(), fmt.Errorf("scale: mean absolute seasonal difference at lag %d is %v: %w (MASE undefined)", m, scale, ErrNotFinite)
	}
	return scale, nil
}

// MASE is the mean absolute scaled error: mean |y−ŷ| over the horizon
// divided by Scale(insample, m).
func MASE(insample, actual, forecast []float64, m int) (float64, error) {
	if len(actual) != len(forecast) || len(actual) == 0 {
		return math.NaN(), ErrLength
	}
	scale, err := Scale(insample, m)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i, y := range actual {
		s += math.Abs(y - forecast[i])
	}
	return s / float64(len(actual)) / scale, nil
}

// MSIS is the mean scaled interval score of a central (1−alpha) interval
// (alpha = 0.05 for the 95% interval M4 scored):
//
//	MSIS = 1/h · Σ [(U−L) + 2/α·(L−y)·1{y<L} + 2/α·(y−U)·1{y>U}] / Scale
func MSIS(insample, actual, lower, upper []float64, m int, alpha float64) (float64, error) {
	if len(actual) != len(lower) || len(actual) != len(upper) || len(actual) == 0 {
		return math.NaN(), ErrLength
	}
	if !(alpha > 0 && alpha < 1) {
		return math.NaN(), fmt.Errorf("alpha %v: must be in (0, 1)", alpha)
	}
	scale, err := Scale(insample, m)
	if err != nil {
		return math.NaN(), err
	}
	s := 0.0
	for i, y := range actual {
		l, u := lower[i], upper[i]
		s += u - l
		if y < l {
			s += 2 / alpha * (l - y)
		}
		if y > u {
			s += 2 / alpha * (y - u)
		}
	}
	return s / float64(len(actual)) / scale, nil
}

// Coverage is the fraction of actual values inside [lower, upper].
func Coverage(actual, lower, upper []float64) (float64, error) {
	if len(actual) != len(lower) || len(actual) != len(upper) || len(actual) == 0 {
		return math.NaN(), ErrLength
	}
	in := 0
	for i, y := range actual {
		if y >= lower[i] && y <= upper[i] {
			in++
		}
	}
	return float64(in) / float64(len(actual)), nil
}

// OWA is the overall weighted average of M4: the mean of a method's sMAPE
// and MASE, each relative to Naive2's on the same set,
//
//	OWA = ½·(sMAPE/sMAPE_Naive2 + MASE/MASE_Naive2).
//
// For M4 Hourly pass Naive2HourlySMAPE and Naive2HourlyMASE.
func OWA(smape, mase, naive2SMAPE, naive2MASE float64) float64 {
	return 0.5 * (smape/naive2SMAPE + mase/naive2MASE)
}

// Scores are one forecast's scores on one series (or, from
// Summary.Mean, their averages over a data set).
type Scores struct {
	// SMAPE is in percent (0–200); MASE and MSIS are unitless multiples
	// of the in-sample scale; Coverage is a fraction in [0, 1].
	SMAPE, MASE, MSIS, Coverage float64
}

// Score computes all per-series scores of a forecast with a central
// interval at level (MSIS uses alpha = 1−level), the scale taken at
// seasonal lag m. A NaN or infinite value in actual, mean, lower or upper
// is an error naming the slice and step, so one bad forecast cannot turn a
// data set's average into NaN.
func Score(insample, actual, mean, lower, upper []float64, m int, level float64) (Scores, error) {
	var s Scores
	var err error
	for _, part := range []struct {
		name string
		v    []float64
	}{{"actual", actual}, {"forecast", mean}, {"lower bound", lower}, {"upper bound", upper}} {
		if i := firstNonFinite(part.v); i >= 0 {
			return s, fmt.Errorf("%s at step %d is %v: %w", part.name, i+1, part.v[i], ErrNotFinite)
		}
	}
	if s.SMAPE, err = SMAPE(actual, mean); err != nil {
		return s, fmt.Errorf("sMAPE: %w", err)
	}
	if s.MASE, err = MASE(insample, actual, mean, m); err != nil {
		return s, fmt.Errorf("MASE: %w", err)
	}
	if s.MSIS, err = MSIS(insample, actual, lower, upper, m, 1-level); err != nil {
		return s, fmt.Errorf("MSIS: %w", err)
	}
	if s.Coverage, err = Coverage(actual, lower, upper); err != nil {
		return s, fmt.Errorf("coverage: %w", err)
	}
	return s, nil
}

// firstNonFinite returns the index of the first NaN or ±Inf in v, or −1.
func firstNonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

// Summary accumulates per-series scores into a data set's averages.
type Summary struct {
	n                           int
	smape, mase, msis, coverage float64
}

// Add includes one series' scores.
func (s *Summary) Add(sc Scores) {
	s.n++
	s.smape += sc.SMAPE
	s.mase += sc.MASE
	s.msis += sc.MSIS
	s.coverage += sc.Coverage
}

// Mean returns the average scores over the series added (NaN if none).
func (s *Summary) Mean() Scores {
	if s.n == 0 {
		nan := math.NaN()
		return Scores{nan, nan, nan, nan}
	}
	n := float64(s.n)
	return Scores{SMAPE: s.smape / n, MASE: s.mase / n, MSIS: s.msis / n, Coverage: s.coverage / n}
}
