package chart

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// overshoot is how far past its range, as a share of the span, a Scale
// still draws a value before clamping it (a band's tail above the top
// tick stays just inside the chart).
const overshoot = 0.02

// Scale maps the data interval [Min, Max] linearly onto the pixels From
// (for Min) to To (for Max); To may be below From, as for a y axis.
type Scale struct {
	Min, Max float64
	From, To float64
}

// At is v's pixel, clamped to 2% of the span beyond either end. Over an
// empty or constant range every finite value maps to From; NaN stays NaN
// (a gap for Path).
func (s Scale) At(v float64) float64 {
	span := s.Max - s.Min
	if math.IsNaN(v) {
		return v
	}
	if !(span > 0) || math.IsInf(span, 0) {
		return s.From
	}
	v = math.Max(s.Min-overshoot*span, math.Min(v, s.Max+overshoot*span))
	return s.From + (s.To-s.From)*(v-s.Min)/span
}

// TimeScale maps [Start, End] linearly onto the pixels From to To.
type TimeScale struct {
	Start, End time.Time
	From, To   float64
}

// At is t's pixel; over an empty or reversed range, From.
func (s TimeScale) At(t time.Time) float64 {
	span := s.End.Sub(s.Start).Seconds()
	if span <= 0 {
		return s.From
	}
	return s.From + (s.To-s.From)*t.Sub(s.Start).Seconds()/span
}

// Tick is one labelled position on an axis, in data units.
type Tick struct {
	Value float64
	Label string
}

// NiceStep is a 1, 2 or 5 × 10^k step giving about n intervals up to top
// (1 for a top that is not a positive finite number).
func NiceStep(top float64, n int) float64 {
	if !(top > 0) || math.IsInf(top, 0) || n < 1 {
		return 1
	}
	raw := top / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// NiceMax rounds top up to a whole number of NiceStep(top, n) steps and
// returns it with the step; a top that is not a positive finite number
// gives a range of 1 in steps of 0.2, so an empty chart still has an axis.
func NiceMax(top float64, n int) (upper, step float64) {
	if !(top > 0) || math.IsInf(top, 0) {
		return 1, 0.2
	}
	step = NiceStep(top, n)
	return math.Ceil(top/step-1e-9) * step, step
}

// LinearTicks are the multiples of step from lo to hi, labelled by format;
// none for a step that is not a positive finite number or a range not
// finite, and at most 100.
func LinearTicks(lo, hi, step float64, format func(float64) string) []Tick {
	if !(step > 0) || math.IsInf(step, 0) || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	var out []Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9 && len(out) < 100; i++ {
		v := i * step
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, Tick{Value: v, Label: format(v)})
	}
	return out
}

// Compact formats an axis value briefly: 0, 0.25, 2.5, 40, 1200, 12k,
// 1.2M.
func Compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZero(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case a >= 1e4:
		return trimZero(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	case a >= 10 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return trimZero(strconv.FormatFloat(v, 'f', 2, 64))
	}
}

// StepFormat formats values on a grid of step with just the decimals the
// step needs (0.25 → two, 5 → none).
func StepFormat(step float64) func(float64) string {
	decimals := 0
	for s := step; decimals < 6 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
		decimals++
	}
	return func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
}

// trimZero drops a decimal number's trailing zeros and point.
func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
