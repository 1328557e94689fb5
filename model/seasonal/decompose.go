package seasonal

import (
	"errors"
	"fmt"
	"math"
)

// Decomposition splits a series into trend, seasonal and remainder:
// x = T + S + R (additive) or x = T·S·R (multiplicative).
type Decomposition struct {
	// Period is the cycle length the seasonal part repeats with.
	Period int
	// Multiplicative is true when x = T·S·R.
	Multiplicative bool
	// Trend, Seasonal and Remainder have the length of the input. Classical
	// leaves Trend and Remainder NaN for the first and last Period/2 steps,
	// where the centred moving average is undefined (as R's decompose does).
	Trend, Seasonal, Remainder []float64
	// Figure holds the seasonal index of each position in the cycle,
	// Figure[i] applying to steps t with t mod Period == i. Additive indices
	// sum to 0, multiplicative ones average 1.
	Figure []float64
}

// ErrTooShort reports a series shorter than two full periods, which no
// decomposition can separate into trend and season.
var ErrTooShort = errors.New("series shorter than two periods")

// Classical is R's stats::decompose: the trend is the centred moving average
// of length Period (a 2×m average for even m), the seasonal index of each
// position is the mean of the detrended values (x−T or x/T) at that
// position, normalised to sum 0 (additive) or average 1 (multiplicative).
// Missing values are skipped in the averages. Multiplicative decomposition
// needs strictly positive data.
func Classical(x []float64, period int, multiplicative bool) (Decomposition, error) {
	if period < 2 {
		return Decomposition{}, fmt.Errorf("period %d: must be at least 2", period)
	}
	if len(x) < 2*period {
		return Decomposition{}, fmt.Errorf("%w: %d observations, period %d", ErrTooShort, len(x), period)
	}
	if multiplicative {
		for t, v := range x {
			if v <= 0 {
				return Decomposition{}, fmt.Errorf("multiplicative decomposition needs positive data; x[%d] = %v", t, v)
			}
		}
	}
	trend := centredMA(x, period)
	detrended := make([]float64, len(x))
	for t := range x {
		if multiplicative {
			detrended[t] = x[t] / trend[t]
		} else {
			detrended[t] = x[t] - trend[t]
		}
	}
	figure := positionMeans(detrended, period)
	normaliseFigure(figure, multiplicative)
	d := Decomposition{Period: period, Multiplicative: multiplicative, Trend: trend, Figure: figure,
		Seasonal: make([]float64, len(x)), Remainder: make([]float64, len(x))}
	for t := range x {
		d.Seasonal[t] = figure[t%period]
		if multiplicative {
			d.Remainder[t] = x[t] / (trend[t] * d.Seasonal[t])
		} else {
			d.Remainder[t] = x[t] - trend[t] - d.Seasonal[t]
		}
	}
	return d, nil
}

// centredMA is R's filter(x, c(0.5, rep(1, m−1), 0.5)/m) for even m and
// rep(1/m, m) for odd m, with NaN where the window leaves the series or
// holds a missing value.
func centredMA(x []float64, m int) []float64 {
	w := make([]float64, 0, m+1)
	if m%2 == 0 {
		w = append(w, 0.5/float64(m))
		for i := 1; i < m; i++ {
			w = append(w, 1/float64(m))
		}
		w = append(w, 0.5/float64(m))
	} else {
		for i := 0; i < m; i++ {
			w = append(w, 1/float64(m))
		}
	}
	half := len(w) / 2
	out := make([]float64, len(x))
	for t := range x {
		if t < half || t+half >= len(x) {
			out[t] = math.NaN()
			continue
		}
		s := 0.0
		for j, wj := range w {
			s += wj * x[t-half+j]
		}
		out[t] = s
	}
	return out
}

// positionMeans returns the mean of the finite values at each position of
// the cycle.
func positionMeans(x []float64, period int) []float64 {
	sum := make([]float64, period)
	n := make([]float64, period)
	for t, v := range x {
		if finite(v) {
			sum[t%period] += v
			n[t%period]++
		}
	}
	for i := range sum {
		if n[i] > 0 {
			sum[i] /= n[i]
		} else {
			sum[i] = math.NaN()
		}
	}
	return sum
}

// normaliseFigure makes additive indices sum to 0 and multiplicative ones
// average 1; positions never observed get the neutral index.
func normaliseFigure(fig []float64, multiplicative bool) {
	neutral := 0.0
	if multiplicative {
		neutral = 1
	}
	s, n := 0.0, 0.0
	for _, v := range fig {
		if finite(v) {
			s += v
			n++
		}
	}
	if n == 0 {
		for i := range fig {
			fig[i] = neutral
		}
		return
	}
	avg := s / n
	for i, v := range fig {
		switch {
		case !finite(v):
			fig[i] = neutral
		case multiplicative:
			fig[i] = v / avg
		default:
			fig[i] = v - avg
		}
	}
}

// SeasonalityTest is the M4 competition's test for seasonality at lag m (its
// "Benchmarks and Evaluation.R"): the series is seasonal when it has at
// least 3m observations and the autocorrelation at lag m exceeds the 90%
// one-sided limit
//
//	|r_m| > 1.645/√n · √(1 + 2·Σ_{k<m} r_k²).
func SeasonalityTest(x []float64, m int) bool {
	if m < 2 || len(x) < 3*m {
		return false
	}
	r := ACF(x, m)
	if len(r) <= m {
		return false
	}
	s := 1.0
	for k := 1; k < m; k++ {
		s += 2 * r[k] * r[k]
	}
	limit := 1.645 / math.Sqrt(float64(len(x))) * math.Sqrt(s)
	return math.Abs(r[m]) > limit
}
