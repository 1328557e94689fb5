package datasets

import (
	"math"
	"time"
)

// shape summarises the daily and weekly rhythm of an hourly series, to
// compare the synthetic generator with a recorded trace.
type shape struct {
	acfDay, acfWeek  float64 // autocorrelation at lags of one day and one week
	troughToPeak     float64 // lowest over highest hour of the mean daily profile
	weekendToWeekday float64 // mean weekend day over mean weekday
	peakToMean       float64 // highest hourly value over the mean
}

func hourlyShape(s Series) shape {
	var sh shape
	sh.acfDay = autocorrelation(s.Values, int(24*time.Hour/s.Step))
	sh.acfWeek = autocorrelation(s.Values, int(7*24*time.Hour/s.Step))
	var byHour [24]struct{ sum, n float64 }
	var weekend, weekday struct{ sum, n float64 }
	peak, total, n := 0.0, 0.0, 0.0
	for i, v := range s.Values {
		if math.IsNaN(v) {
			continue
		}
		t := s.Time(i)
		byHour[t.Hour()].sum += v
		byHour[t.Hour()].n++
		if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
			weekend.sum += v
			weekend.n++
		} else {
			weekday.sum += v
			weekday.n++
		}
		peak = math.Max(peak, v)
		total += v
		n++
	}
	lo, hi := math.Inf(1), 0.0
	for _, h := range byHour {
		m := h.sum / h.n
		lo, hi = math.Min(lo, m), math.Max(hi, m)
	}
	sh.troughToPeak = lo / hi
	sh.weekendToWeekday = (weekend.sum / weekend.n) / (weekday.sum / weekday.n)
	sh.peakToMean = peak / (total / n)
	return sh
}

// autocorrelation at the given lag, skipping pairs with a NaN.
func autocorrelation(xs []float64, lag int) float64 {
	mean, n := 0.0, 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			mean += x
			n++
		}
	}
	mean /= n
	num, den := 0.0, 0.0
	for i, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		den += (x - mean) * (x - mean)
		if i+lag < len(xs) && !math.IsNaN(xs[i+lag]) {
			num += (x - mean) * (xs[i+lag] - mean)
		}
	}
	return num / den
}
