package holtwinters

import (
	"math"
	"math/rand/v2"
)

// synthDouble returns n points of a positive series with daily (m1) and
// weekly (m2) cycles, a slow trend and Gaussian noise of standard
// deviation sd, reproducible from seed.
func synthDouble(n, m1, m2 int, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	y := make([]float64, n)
	for t := range y {
		day := math.Sin(2 * math.Pi * float64(t%m1) / float64(m1))
		week := 0.3 * math.Cos(2*math.Pi*float64(t%m2)/float64(m2))
		if (t%m2)/m1 >= 5 { // weekend dip
			week -= 0.5
		}
		y[t] = 10 + 0.0001*float64(t) + 3*day + 2*week + sd*rng.NormFloat64()
	}
	return y
}
