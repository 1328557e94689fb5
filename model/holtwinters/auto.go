package holtwinters

import (
	"fmt"
	"math"
)

// AutoOptions chooses the candidate forms Auto compares. Nil fields take
// the defaults below, the best simple set on M4 Hourly: additive
// seasonality on the raw and the log scale, level or damped trend, AR(1)
// errors. Selected by AICc, they scored OWA 0.424 over the 414 series
// when each was searched from scratch (0.428 with Auto's warm starts,
// which save 29% of the evaluations), against 0.432 for all 8
// combinations with multiplicative seasonality added. ETSOptions gives the
// wider set R's ets searches.
type AutoOptions struct {
	// Trends to consider; nil means NoTrend and DampedTrend (an undamped
	// trend extrapolates without limit, rarely wise for capacity).
	Trends []Trend
	// Seasonalities to consider; nil means Additive. Multiplicative is
	// skipped for series with a value ≤ 0. Without periods only None is
	// fitted.
	Seasonalities []Seasonality
	// AR1 lists the choices of the AR(1) error adjustment to try; nil
	// means {true} with periods and {false} without.
	AR1 []bool
	// BoxCox lists the transforms to try, nil standing for none; nil
	// means {nil, Lambda(0)} (untransformed and log) for a strictly
	// positive series and {nil} otherwise. Transforms needing positive
	// data are skipped for other series. The criterion includes the
	// transform's Jacobian, so the scales compare fairly.
	BoxCox []*float64
	// Update is the seasonal recursion form of every candidate.
	Update Update
	// Fit tunes the estimation of every candidate.
	Fit FitOptions
}

// ETSOptions returns the candidate set of R's forecast::ets with additive
// errors: every trend (none, additive, damped) and seasonality (none,
// additive, multiplicative), untransformed, without the AR(1) adjustment.
func ETSOptions() AutoOptions {
	return AutoOptions{
		Trends:        []Trend{NoTrend, AdditiveTrend, DampedTrend},
		Seasonalities: []Seasonality{None, Additive, Multiplicative},
		AR1:           []bool{false},
		BoxCox:        []*float64{nil},
	}
}

// candidates expands o into the specs to fit to y with the given periods.
func (o AutoOptions) candidates(y []float64, periods []int) []Spec {
	positive := allPositive(y)
	trends := o.Trends
	if trends == nil {
		trends = []Trend{NoTrend, DampedTrend}
	}
	seasons := o.Seasonalities
	if seasons == nil {
		seasons = []Seasonality{Additive}
	}
	if len(periods) == 0 {
		seasons = []Seasonality{None}
	}
	ars := o.AR1
	if ars == nil {
		ars = []bool{len(periods) > 0}
	}
	lambdas := o.BoxCox
	if lambdas == nil {
		lambdas = []*float64{nil}
		if positive {
			lambdas = append(lambdas, Lambda(0))
		}
	}
	var specs []Spec
	for _, lambda := range lambdas {
		if lambda != nil && !positive {
			continue
		}
		for _, season := range seasons {
			if season == Multiplicative && !positive {
				continue
			}
			for _, trend := range trends {
				for _, ar := range ars {
					spec := Spec{Trend: trend, Seasonality: season, AR1: ar, BoxCox: lambda, Update: o.Update}
					if season != None {
						spec.Periods = periods
					}
					specs = append(specs, spec)
				}
			}
		}
	}
	return specs
}

// Auto fits every candidate form of opts with the given periods and
// returns the one with the smallest AICc, as R's forecast::ets does. Forms
// that cannot be fitted (a history too short for the longest period, a
// transform of a series with zeros) are skipped; the error says why when
// none can be.
func Auto(y []float64, periods []int, opts AutoOptions) (*Model, error) {
	specs := opts.candidates(y, periods)
	var best *Model
	var firstErr error
	failed := 0
	// fitted[key] is a model already fitted with the same transform,
	// seasonality and AR choice: a trend candidate starts its search from
	// its parameters, which saves about a third of the evaluations.
	type key struct {
		lambda float64
		season Seasonality
		ar, bc bool
	}
	fitted := map[key]*Model{}
	for _, spec := range specs {
		k := key{season: spec.Seasonality, ar: spec.AR1, bc: spec.BoxCox != nil}
		if spec.BoxCox != nil {
			k.lambda = *spec.BoxCox
		}
		fo := opts.Fit
		if prev := fitted[k]; prev != nil && fo.Start == nil {
			p := prev.Params()
			p.Beta, p.Phi = 0.1, 0.98
			fo.Start = &p
		}
		m, err := fo.Fit(y, spec)
		if err == nil && fitted[k] == nil {
			fitted[k] = m
		}
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if best == nil || m.AICc() < best.AICc() || math.IsInf(best.AICc(), 1) && m.SSE() < best.SSE() {
			best = m
		}
	}
	if best == nil {
		if firstErr == nil {
			return nil, fmt.Errorf("holtwinters: no candidate form to fit")
		}
		return nil, fmt.Errorf("holtwinters: none of %d candidate forms could be fitted; first failure: %w", failed, firstErr)
	}
	return best, nil
}

// allPositive reports whether every finite value of y is > 0.
func allPositive(y []float64) bool {
	for _, v := range y {
		if v <= 0 {
			return false
		}
	}
	return true
}
