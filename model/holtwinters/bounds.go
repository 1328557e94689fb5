package holtwinters

import "math"

// bounds maps the free smoothing parameters of a spec to and from an
// unconstrained vector: each parameter is lo + (hi−lo)·logistic(x), so any
// x the optimiser tries is admissible.
type bounds struct {
	trend, damped, ar, taylor bool
	nGamma                    int
}

const (
	alphaLo, alphaHi = 1e-4, 0.9999
	betaLo, betaHi   = 1e-4, 0.9999
	phiLo, phiHi     = 0.8, 0.98
	gammaHi          = 0.9999
	arLo, arHi       = -0.99, 0.99
)

func newBounds(s Spec) bounds {
	return bounds{
		trend:  s.Trend != NoTrend,
		damped: s.Trend == DampedTrend,
		ar:     s.AR1,
		taylor: s.Update == Taylor,
		nGamma: len(s.periods()),
	}
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// logit is the inverse of logistic, clamped away from ±Inf.
func logit(p float64) float64 {
	p = math.Min(math.Max(p, 1e-9), 1-1e-9)
	return math.Log(p / (1 - p))
}

func scaled(x, lo, hi float64) float64   { return lo + (hi-lo)*logistic(x) }
func unscaled(v, lo, hi float64) float64 { return logit((v - lo) / (hi - lo)) }

func (b bounds) gammaMax(alpha float64) float64 {
	if b.taylor {
		return gammaHi
	}
	return gammaHi * (1 - alpha)
}

// toFree returns the unconstrained vector for p's smoothing parameters.
func (b bounds) toFree(p Params) []float64 {
	x := []float64{unscaled(p.Alpha, alphaLo, alphaHi)}
	if b.trend {
		x = append(x, unscaled(p.Beta, betaLo, betaHi))
	}
	if b.damped {
		x = append(x, unscaled(p.Phi, phiLo, phiHi))
	}
	for i := range b.nGamma {
		x = append(x, unscaled(p.Gamma[i], 0, b.gammaMax(p.Alpha)))
	}
	if b.ar {
		x = append(x, unscaled(p.AR, arLo, arHi))
	}
	return x
}

// fromFree writes the parameters encoded by x into p without allocating.
func (b bounds) fromFree(x []float64, p *Params) {
	k := 0
	p.Alpha = scaled(x[k], alphaLo, alphaHi)
	k++
	if b.trend {
		p.Beta = scaled(x[k], betaLo, betaHi)
		k++
	}
	if b.damped {
		p.Phi = scaled(x[k], phiLo, phiHi)
		k++
	}
	for i := range b.nGamma {
		p.Gamma[i] = scaled(x[k], 0, b.gammaMax(p.Alpha))
		k++
	}
	if b.ar {
		p.AR = scaled(x[k], arLo, arHi)
	}
}
