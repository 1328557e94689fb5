package seasonal

import (
	"fmt"
	"math"
	"sort"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/stats"
)

// Profile forecasts each future step from the observations at the same
// position of the cycle over the last Cycles cycles: with Period 168 on
// hourly data, "the same hour of the week". It ignores anything older than
// its window and is hard to throw off, which makes it a good baseline and a
// fallback for demand that repeats.
//
// Plain, the forecast is the mean (or, when Robust, the median) of those
// observations. With Relative, each past cycle is first divided by its own
// mean (or, when the window holds a value ≤ 0, has its mean subtracted), so
// the profile is a shape, and the shape is put back at the level of the
// most recent cycle; Damping > 0 then also extends the change between the
// last two cycles' means as a damped trend (level + b·(φ + φ² + … + φ^k)).
//
// Its interval comes from its own errors on recent history: the last few
// cycles are forecast from the history before them, and the empirical
// quantile of the absolute errors, grown by √(cycles ahead), is put either
// side of the point forecast.
type Profile struct {
	// Period is the cycle length, e.g. 24 for the hour of the day.
	Period int
	// Cycles is how many recent cycles to use; 0 means all.
	Cycles int
	// Robust uses the median instead of the mean.
	Robust bool
	// Relative profiles the shape of each cycle around its mean and puts
	// it back at the latest cycle's level.
	Relative bool
	// Damping in (0, 1) adds a damped trend to a Relative profile.
	Damping float64
}

// Forecast implements model.Forecaster.
func (p Profile) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	if err := checkArgs(history, horizon, level); err != nil {
		return model.Forecast{}, err
	}
	m := p.Period
	x := FillGaps(history, m)
	n := len(x)
	if m < 2 || n < m {
		f := naiveForecast(x, horizon, level)
		f.Fallback = fmt.Sprintf("naive: %d observations, profile needs a full period of %d", n, m)
		return f, nil
	}
	mean := p.Point(x, horizon)
	// Scaled absolute errors of one-cycle forecasts from recent origins.
	var scaled []float64
	for k := 1; k <= 4 && n-k*m >= m; k++ {
		train := x[:n-k*m]
		f := p.Point(train, m)
		for j, v := range f {
			scaled = append(scaled, math.Abs(x[n-k*m+j]-v))
		}
	}
	var q float64
	if len(scaled) >= 20 {
		sort.Float64s(scaled)
		q = stats.Quantile(scaled, level)
	} else {
		q = zScore(level) * lagRMS(x, m)
	}
	lower := make([]float64, horizon)
	upper := make([]float64, horizon)
	for j := range mean {
		w := q * math.Sqrt(float64(j/m+1))
		lower[j], upper[j] = mean[j]-w, mean[j]+w
	}
	return model.Forecast{Method: p.name(min(p.cycles(n), n/m)), Mean: mean, Lower: lower, Upper: upper, Level: level}, nil
}

func (p Profile) cycles(n int) int {
	c := p.Cycles
	if c <= 0 || c > n/p.Period {
		c = n / p.Period
	}
	return c
}

func (p Profile) name(cycles int) string {
	if !p.Relative && cycles == 1 {
		return fmt.Sprintf("snaive(%d)", p.Period)
	}
	s := "profile"
	if p.Relative {
		s = "shape"
	}
	if p.Robust {
		s += "-median"
	}
	s = fmt.Sprintf("%s(%d×%d)", s, p.Period, cycles)
	if p.Damping > 0 {
		s += fmt.Sprintf("+damped(%.2g)", p.Damping)
	}
	return s
}

// Point returns the point forecasts for horizon steps after the gap-free
// history x; it is Forecast without the interval, for callers that score
// many variants quickly. With less than one period of history it repeats
// the last value.
func (p Profile) Point(x []float64, horizon int) []float64 {
	m := p.Period
	n := len(x)
	out := make([]float64, horizon)
	if n == 0 {
		return out
	}
	if m < 1 || n < m {
		for j := range out {
			out[j] = x[n-1]
		}
		return out
	}
	cycles := p.cycles(n)
	if cycles < 1 {
		for j := range out {
			out[j] = x[n-1]
		}
		return out
	}
	// Cycle k (0 = latest) covers x[n-(k+1)m : n-km]; its position i is the
	// same position of the cycle as future step j when j ≡ i (mod m).
	window := x[n-cycles*m:]
	mult := p.Relative && allPositive(window)
	// Only the positions the horizon reaches are profiled: values[i] holds
	// position i's values of the cycles, latest first, for i < used.
	used := min(m, horizon)
	values := make([]float64, used*cycles)
	cycleMeans := make([]float64, cycles)
	for k := range cycles {
		c := x[n-(k+1)*m : n-k*m]
		mu := meanOf(c)
		cycleMeans[k] = mu
		for i, v := range c[:used] {
			switch {
			case !p.Relative:
			case mult:
				v /= mu
			default:
				v -= mu
			}
			values[i*cycles+k] = v
		}
	}
	shape := make([]float64, used)
	for i := range shape {
		vs := values[i*cycles : (i+1)*cycles]
		if p.Robust {
			sort.Float64s(vs)
			shape[i] = stats.Quantile(vs, 0.5)
		} else {
			shape[i] = meanOf(vs)
		}
	}
	if !p.Relative {
		for j := range out {
			out[j] = shape[j%m]
		}
		return out
	}
	level := cycleMeans[0]
	slope := 0.0
	if p.Damping > 0 && n >= 2*m {
		slope = (level - meanOf(x[n-2*m:n-m])) / float64(m)
	}
	// The latest cycle's mean sits m/2 steps before its end, so step j is
	// j + m/2 + 1/2 steps past the level.
	trend := 0.0
	phiK := 1.0
	steps := 0
	for j := range out {
		for steps < int(float64(j)+float64(m)/2+0.5) {
			steps++
			phiK *= p.Damping
			trend += phiK
		}
		l := level + slope*trend
		if mult {
			out[j] = l * shape[j%m]
		} else {
			out[j] = l + shape[j%m]
		}
	}
	return out
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func allPositive(v []float64) bool {
	for _, x := range v {
		if !(x > 0) {
			return false
		}
	}
	return true
}

// Name describes the configured profile, e.g. "shape-median(24×7)".
func (p Profile) Name() string { return p.name(p.Cycles) }
