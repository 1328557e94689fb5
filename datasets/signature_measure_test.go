package datasets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/store"
)

// Signature is the burstiness of a demand series as a scaling policy meets
// it: how far the busiest row of each step rises above the step's mean,
// how rough and how short-lived the deviations within a step are, the
// daily swing and the weight of the extreme rows. Two series with the same
// daily cycle but different signatures cost a forecast-ahead scaler very
// different amounts: spikes shorter than a boot at random times can be
// neither pre-warmed nor caught reactively, bursts on a schedule can be
// pre-warmed and long ones caught. MeasureSignature computes it; the
// tests check the seeded generator's SpikySynthetic mode against it.
type Signature struct {
	// Step is the aggregation step the within-step figures are measured
	// over (30 minutes for a scaler that plans in half hours).
	Step time.Duration
	// Steps is how many whole steps with a positive mean were measured,
	// Rows how many finite rows they hold.
	Steps, Rows int

	// PeakRatioMean, PeakRatioMedian and PeakRatioP90 summarise, over the
	// measured steps, the ratio of a step's busiest row to the step's
	// mean: what capacity sized to the step's mean would have to stretch
	// to. Median and P90 are order statistics of the sorted ratios at
	// index int(q·(n−1)).
	PeakRatioMean, PeakRatioMedian, PeakRatioP90 float64
	// CV is the pooled within-step relative deviation: sqrt of the mean of
	// r² over every measured row, with r = row / its step's mean − 1.
	CV float64
	// Lag1 is the lag-1 autocorrelation of r within steps: Σ r_i·r_{i−1}
	// over consecutive finite rows of the same step divided by Σ r_i² over
	// all measured rows. Near 1, deviations last many rows (bursts a
	// reactive scaler can catch); near 0, they are isolated spikes, or a
	// few nearly empty steps, whose one busy row dominates Σ r², outweigh
	// the rest.
	Lag1 float64
	// DayNight is the largest over the smallest of the mean values per UTC
	// hour of day (0-23) over the whole series: the daily swing that
	// pre-warming follows. Hours without a finite row are left out; +Inf
	// when the quietest hour's mean is 0.
	DayNight float64
	// PeakToMean is the largest row over the mean of all finite rows.
	PeakToMean float64
	// ShareAboveP99 is Σ max(0, x − p99) / Σ x over all finite rows, a
	// fraction (0.0016 = 0.16%), with p99 the sorted rows' value at index
	// int(0.99·(n−1)): the share of demand in the extreme rows' excess.
	ShareAboveP99 float64
}

// String prints every figure of the signature on one line.
func (sig Signature) String() string {
	return fmt.Sprintf("step %v, %d steps, %d rows: busiest/step mean %.3g mean, %.3g median, %.3g p90; "+
		"within-step CV %.3g, lag-1 %.3g; day/night %.3g; peak/mean %.3g; above p99 %.3g%%",
		sig.Step, sig.Steps, sig.Rows, sig.PeakRatioMean, sig.PeakRatioMedian, sig.PeakRatioP90,
		sig.CV, sig.Lag1, sig.DayNight, sig.PeakToMean, 100*sig.ShareAboveP99)
}

// MeasureSignature measures the signature of s with within-step figures
// over steps of width step on the store's grid (multiples of step from the
// Unix epoch; a step cut by the series' start or end is left out, as is one
// whose mean is not positive). NaN rows are skipped everywhere. It returns
// an error for a step that is not positive or finer than the series' step,
// and for a series with no whole step with a positive mean.
func MeasureSignature(s Series, step time.Duration) (Signature, error) {
	if step <= 0 || s.Step <= 0 {
		return Signature{}, fmt.Errorf("signature of %s: steps %v and %v must be positive", s.Name, step, s.Step)
	}
	if step < s.Step {
		return Signature{}, fmt.Errorf("signature of %s: step %v is finer than the series' step %v", s.Name, step, s.Step)
	}
	spans := wholeSteps(s, step)
	if len(spans) == 0 {
		return Signature{}, fmt.Errorf("signature of %s: %d rows of %v are too short for one whole %v step",
			s.Name, s.Len(), s.Step, step)
	}
	sig := Signature{Step: step}
	if err := sig.measureSteps(s.Values, spans); err != nil {
		return Signature{}, fmt.Errorf("signature of %s: %w", s.Name, err)
	}
	sig.measureRows(s)
	return sig, nil
}

// rowSpan is the rows [from, to) of one step.
type rowSpan struct{ from, to int }

// wholeSteps returns the row ranges of the steps of width step on the
// store's grid that lie entirely within s, each row in the step its start
// time falls in.
func wholeSteps(s Series, step time.Duration) []rowSpan {
	grid := store.WindowStart(s.Start, step)
	window := func(i int) time.Duration { return s.Time(i).Sub(grid) / step }
	var spans []rowSpan
	for i := 0; i < s.Len(); {
		k, from := window(i), i
		for i < s.Len() && window(i) == k {
			i++
		}
		lo := grid.Add(k * step)
		if !lo.Before(s.Start) && !lo.Add(step).After(s.End()) {
			spans = append(spans, rowSpan{from, i})
		}
	}
	return spans
}

// measureSteps sets the within-step figures from the steps' rows.
func (sig *Signature) measureSteps(values []float64, spans []rowSpan) error {
	var ratios []float64
	var sumR2, sumLag float64
	for _, sp := range spans {
		mean, peak, rows := finiteMeanMax(values[sp.from:sp.to])
		if rows == 0 || !(mean > 0) {
			continue
		}
		ratios = append(ratios, peak/mean)
		sig.Rows += rows
		prev := math.NaN()
		for _, v := range values[sp.from:sp.to] {
			r := v/mean - 1 // NaN for a missing row
			if !math.IsNaN(r) {
				sumR2 += r * r
				if !math.IsNaN(prev) {
					sumLag += r * prev
				}
			}
			prev = r
		}
	}
	if len(ratios) == 0 {
		return errors.New("no whole step has a positive mean")
	}
	sig.Steps = len(ratios)
	slices.Sort(ratios)
	sig.PeakRatioMean, _, _ = finiteMeanMax(ratios)
	sig.PeakRatioMedian, sig.PeakRatioP90 = orderStat(ratios, 0.5), orderStat(ratios, 0.9)
	sig.CV = math.Sqrt(sumR2 / float64(sig.Rows))
	if sumR2 > 0 {
		sig.Lag1 = sumLag / sumR2
	}
	return nil
}

// measureRows sets the whole-series figures: the daily swing, peak/mean
// and the share above the 99th percentile.
func (sig *Signature) measureRows(s Series) {
	sig.DayNight = dayNightRatio(s)
	mean, peak, _ := finiteMeanMax(s.Values)
	sig.PeakToMean = peak / mean
	finite := make([]float64, 0, s.Len())
	for _, v := range s.Values {
		if !math.IsNaN(v) {
			finite = append(finite, v)
		}
	}
	slices.Sort(finite)
	p99 := orderStat(finite, 0.99)
	var above, total float64
	for _, v := range finite {
		above += max(0, v-p99)
		total += v
	}
	sig.ShareAboveP99 = above / total
}

// dayNightRatio is the largest over the smallest mean value per UTC hour of
// day, over the hours that hold a finite row.
func dayNightRatio(s Series) float64 {
	var sums [24]float64
	var counts [24]int
	for i, v := range s.Values {
		if !math.IsNaN(v) {
			h := s.Time(i).UTC().Hour()
			sums[h] += v
			counts[h]++
		}
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	for h := range sums {
		if counts[h] > 0 {
			m := sums[h] / float64(counts[h])
			hi, lo = max(hi, m), min(lo, m)
		}
	}
	return hi / lo
}

// finiteMeanMax returns the mean and the largest of the finite values and
// how many there are; the mean and the largest are NaN when there are
// none.
func finiteMeanMax(values []float64) (mean, peak float64, n int) {
	sum := 0.0
	peak = math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) {
			sum += v
			peak = max(peak, v)
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	return sum / float64(n), peak, n
}

// orderStat returns sorted[int(q·(n−1))] of an ascending, non-empty slice.
func orderStat(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}
