package holtwinters

import (
	"fmt"
	"math"
)

// AutoOptions narrows or widens the candidate forms Auto compares. The zero
// value compares every trend and seasonality on the untransformed series,
// without the AR(1) adjustment.
type AutoOptions struct {
	// Trends to consider; nil means NoTrend, AdditiveTrend and DampedTrend.
	Trends []Trend
	// Seasonalities to consider; nil means None, Additive and
	// Multiplicative. Multiplicative is skipped for series with a value
	// ≤ 0.
	Seasonalities []Seasonality
	// TryAR1 also fits every form with the AR(1) error adjustment.
	TryAR1 bool
	// TryLog also fits every form to log y (positive series only). The
	// criterion includes the transform's Jacobian, so transformed and
	// untransformed fits compare fairly.
	TryLog bool
	// BoxCox, when non-nil, fits every candidate to this transform
	// instead (TryLog is then ignored).
	BoxCox *float64
	// Update is the seasonal recursion form of every candidate.
	Update Update
	// Fit tunes the estimation of every candidate.
	Fit FitOptions
}

// Auto fits every candidate form (the cross product of the options' trends,
// seasonalities, AR(1) and transform choices, with the given periods) and
// returns the one with the smallest AICc, as R's forecast::ets does. Forms
// that cannot be fitted (a multiplicative form on a series with zeros, a
// history too short) are skipped; the error lists why when none can be.
func Auto(y []float64, periods []int, opts AutoOptions) (*Model, error) {
	trends := opts.Trends
	if trends == nil {
		trends = []Trend{NoTrend, AdditiveTrend, DampedTrend}
	}
	seasons := opts.Seasonalities
	if seasons == nil {
		seasons = []Seasonality{None, Additive, Multiplicative}
	}
	if len(periods) == 0 {
		seasons = []Seasonality{None}
	}
	positive := allPositive(y)
	lambdas := []*float64{nil}
	switch {
	case opts.BoxCox != nil:
		lambdas = []*float64{opts.BoxCox}
	case opts.TryLog && positive:
		lambdas = append(lambdas, Lambda(0))
	}
	ars := []bool{false}
	if opts.TryAR1 {
		ars = append(ars, true)
	}
	var best *Model
	var errs []error
	for _, lambda := range lambdas {
		for _, season := range seasons {
			if season == Multiplicative && !positive {
				continue
			}
			for _, trend := range trends {
				for _, ar := range ars {
					spec := Spec{Trend: trend, Seasonality: season, AR1: ar, BoxCox: lambda, Update: opts.Update}
					if season != None {
						spec.Periods = periods
					}
					m, err := opts.Fit.Fit(y, spec)
					if err != nil {
						errs = append(errs, err)
						continue
					}
					if best == nil || m.AICc() < best.AICc() || math.IsInf(best.AICc(), 1) && m.SSE() < best.SSE() {
						best = m
					}
				}
			}
		}
	}
	if best == nil {
		if len(errs) == 0 {
			return nil, fmt.Errorf("holtwinters: no candidate form to fit")
		}
		return nil, fmt.Errorf("holtwinters: none of %d candidate forms could be fitted; first failure: %w", len(errs), errs[0])
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
