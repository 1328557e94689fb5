package holtwinters

import (
	"math"
	"slices"

	"github.com/prewarm/prewarm/model/stats"
)

// initCycles is how many cycles of the longest period the heuristic
// initialisation looks at.
const initCycles = 4

// initialParams returns starting values for a fit of spec to y: initial
// states by classical decomposition of the first few cycles of the longest
// period, and conventional starting smoothing parameters. y must hold at
// least two cycles of the longest period (checked by the caller).
//
// The decomposition: the means of the first k ≤ 4 cycles give a straight
// line (least squares against the cycle number); the level l₀ is the line
// one step before the first observation and the trend b₀ its slope per
// step (0 without a trend). The series, detrended by the line (difference
// for additive, ratio for multiplicative seasonality), is averaged by
// phase of the shortest period to give its indices, those are removed, and
// the remainder averaged by phase of the next period, and so on. Indices
// are normalised to sum to 0 (additive) or average 1 (multiplicative).
func initialParams(y []float64, s Spec) Params {
	ps := s.periods()
	m := s.maxPeriod()
	p := Params{Alpha: 0.2, Beta: 0.1, Phi: 0.98, Gamma: make([]float64, len(ps))}
	for i := range p.Gamma {
		p.Gamma[i] = 0.05
	}
	switch s.Trend {
	case NoTrend:
		p.Beta, p.Phi = 0, 0
	case AdditiveTrend:
		p.Phi = 1
	}

	k := min(len(y)/m, initCycles)
	if !s.seasonal() {
		k = min(len(y), 10)
		m = 1
	}
	if k < 1 {
		k, m = len(y), 1
	}
	means := make([]float64, k)
	for j := range k {
		means[j] = nanMean(y[j*m : (j+1)*m])
	}
	line := stats.FitLine(nil, means) // per cycle, at cycle 0
	slope, icept := line.Slope, line.Intercept
	if math.IsNaN(icept) {
		icept = nanMean(y)
	}
	slope /= float64(m)
	// The mean of cycle 0 sits at time (m−1)/2; the level before the first
	// observation is one step before time 0.
	start := icept - slope*float64(m+1)/2
	p.Level0 = start
	if s.Trend != NoTrend {
		p.Trend0 = slope
	} else {
		p.Level0 = icept
	}
	if !s.seasonal() {
		return p
	}

	n := k * m
	x := make([]float64, n)
	mult := s.Seasonality == Multiplicative
	mean := nanMean(y[:n])
	for t := range n {
		line := start + slope*float64(t+1)
		if mult {
			if line <= 0 {
				line = mean
			}
			x[t] = y[t] / line
		} else {
			x[t] = y[t] - line
		}
	}
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return ps[a] - ps[b] })
	p.Seasonal0 = make([][]float64, len(ps))
	for _, i := range order {
		p.Seasonal0[i] = phaseMeans(x, ps[i], mult)
		idx := p.Seasonal0[i]
		for t := range x {
			if mult {
				x[t] /= idx[t%ps[i]]
			} else {
				x[t] -= idx[t%ps[i]]
			}
		}
	}
	return p
}

// phaseMeans averages x by phase t mod m, ignoring NaN, and normalises the
// result to sum 0 (additive) or mean 1 (multiplicative). A phase with no
// data gets the neutral index.
func phaseMeans(x []float64, m int, mult bool) []float64 {
	sum := make([]float64, m)
	cnt := make([]int, m)
	for t, v := range x {
		if !math.IsNaN(v) {
			sum[t%m] += v
			cnt[t%m]++
		}
	}
	neutral := 0.0
	if mult {
		neutral = 1
	}
	var tot float64
	var got int
	for j := range sum {
		if cnt[j] > 0 {
			sum[j] /= float64(cnt[j])
			tot += sum[j]
			got++
		} else {
			sum[j] = math.NaN()
		}
	}
	avg := neutral
	if got > 0 {
		avg = tot / float64(got)
	}
	for j := range sum {
		switch {
		case math.IsNaN(sum[j]):
			sum[j] = neutral
		case mult && avg > 0:
			sum[j] /= avg
		case mult:
			sum[j] = neutral
		default:
			sum[j] -= avg
		}
		if mult && !(sum[j] > 0) {
			sum[j] = 1e-3
		}
	}
	return sum
}

// nanMean is the mean of the finite values of v, NaN if there are none.
func nanMean(v []float64) float64 {
	var s float64
	var n int
	for _, w := range v {
		if !math.IsNaN(w) {
			s += w
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}
