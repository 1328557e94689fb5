package auto

import (
	"math"
	"slices"

	"github.com/prewarm/prewarm/model/stats"
)

// Spike handling. A burst (a flash crowd, a retry storm, a logging
// glitch) in yesterday's history would otherwise come back in today's
// forecast: seasonal naive and the one-day shapes repeat it, and
// Holt-Winters' seasonal states absorb part of it. despike replaces such
// bursts before the candidates are fitted; validation still scores the
// candidates, and the interval is still calibrated, on the history as
// recorded.
const (
	// spikeThreshold is how many robust standard deviations (1.4826 ×
	// the median absolute deviation) a step must be from the median of
	// the same time of day one and two days either side to count as a
	// spike.
	spikeThreshold = 6
	// spikeRunFraction of the day is the longest run of such steps that
	// counts as a burst; a longer one is a change of level or shape,
	// which the candidates must follow.
	spikeRunFraction = 1.0 / 12
)

// despike returns x with bursts replaced by the median of the same time
// of day on the neighbouring days (up to two either side), and how many
// steps it replaced. A step is part of a burst when it is more than
// spikeThreshold robust deviations from that median (the deviations of
// its time of day, when they are larger than those of the whole series:
// an irregular peak hour is not a burst), and, with a week,
// as far from the median of the same time of the week one and two weeks
// either side (in the larger of the two robust deviations, so that a
// weekly event is not a burst), in a run of at most
// day·spikeRunFraction such steps (at least one). The last run+1 steps
// are left alone: at the end of the history a burst cannot be told from
// the start of a surge. Without a day (day < 2) or with fewer than three
// days, x is returned as is.
func despike(x []float64, day, week int) ([]float64, int) {
	n := len(x)
	if day < 2 || n < 3*day {
		return x, 0
	}
	ref, dev := neighbourMedians(x, day)
	sigma := robustSigma(dev)
	if !(sigma > 0) {
		return x, 0
	}
	// A time of day whose value varies a lot from day to day (an
	// irregular peak hour) needs a larger deviation.
	phaseSigma := make([]float64, day)
	col := make([]float64, 0, n/day+1)
	for ph := range phaseSigma {
		col = col[:0]
		for t := ph; t < n; t += day {
			col = append(col, dev[t])
		}
		phaseSigma[ph] = math.Max(sigma, robustSigma(col))
	}
	flagged := make([]bool, n)
	for t, d := range dev {
		flagged[t] = d > spikeThreshold*phaseSigma[t%day]
	}
	if week > day && n >= 2*week {
		_, wdev := neighbourMedians(x, week)
		ws := math.Max(robustSigma(wdev), sigma)
		for t, d := range wdev {
			flagged[t] = flagged[t] && d > spikeThreshold*math.Max(ws, phaseSigma[t%day])
		}
	}
	maxRun := max(1, int(float64(day)*spikeRunFraction))
	var out []float64
	replaced := 0
	for t := 0; t < n-maxRun-1; {
		if !flagged[t] {
			t++
			continue
		}
		end := t
		for end < n && flagged[end] {
			end++
		}
		if end-t <= maxRun && end < n-maxRun-1 {
			if out == nil {
				out = slices.Clone(x)
			}
			for u := t; u < end; u++ {
				out[u] = ref[u]
			}
			replaced += end - t
		}
		t = end
	}
	if out == nil {
		return x, 0
	}
	return out, replaced
}

// neighbourMedians returns, for each step t, the median ref[t] of x at
// t ± p and t ± 2p (those inside x) and the deviation |x[t] − ref[t]|.
func neighbourMedians(x []float64, p int) (ref, dev []float64) {
	n := len(x)
	ref = make([]float64, n)
	dev = make([]float64, n)
	var nb [4]float64
	for t := range x {
		k := 0
		for _, d := range []int{-2 * p, -p, p, 2 * p} {
			if u := t + d; u >= 0 && u < n {
				nb[k] = x[u]
				k++
			}
		}
		s := nb[:k]
		slices.Sort(s)
		ref[t] = stats.Quantile(s, 0.5)
		dev[t] = math.Abs(x[t] - ref[t])
	}
	return ref, dev
}

// robustSigma is 1.4826 times the median of the deviations dev: the
// standard deviation they would have if normal, unmoved by the spikes.
func robustSigma(dev []float64) float64 {
	sorted := slices.Clone(dev)
	slices.Sort(sorted)
	return 1.4826 * stats.Quantile(sorted, 0.5)
}
