package holtwinters

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/prewarm/prewarm/model"
)

// Forecast returns h point forecasts after the end of the history and a
// central prediction interval at level (0 < level < 1), from the fitted
// model as is (Forecaster widens it; see DefaultIntervalInflation).
//
// Point forecasts run the recursion forward with every future error at its
// expectation (0, or ρ^k·e_n with the AR adjustment, which then also
// feeds the states): the conditional mean for the linear forms.
//
// The interval is mean ± z·√v(k) under Gaussian errors. The model's
// k-step variance is V(k) = σ²·(1 + ψ₁² + … + ψ²_{k−1}), ψ the response of
// the forecasts to one innovation, which for the ETS forms is Hyndman et
// al. (2008, Table 6.1, class 1): ψ_j = α + αβ·(φ + … + φ^j) +
// Σᵢ γᵢ·1{j mod mᵢ = 0}. ψ is computed by perturbing the forecast path, so
// it is exact for the linear forms (no or additive seasonality, with or
// without AR(1)). With multiplicative seasonality the response to an
// innovation depends on the seasonal index of the step it arrives at as
// well as on the lag, so V(k) = σ²·Σᵢ ψ(i→k)² with one perturbed path per
// step (the delta method's linearisation; see modelVariances). Both are
// checked against simulation in TestAnalyticVarianceMatchesSimulation.
// Where the in-sample mean squared j-step errors E_j are known (j up to
// the shortest period, at most 48) they are used instead, and beyond,
// E_J·V(k)/V(J); for a correctly specified model the two
// agree, and when the model misses structure the empirical errors keep the
// interval honest. With a Box-Cox transform the bounds are computed on the
// transformed scale and mapped back, which preserves their coverage; the
// point forecast is then the median (no bias adjustment: the planner
// sizes capacity from the bounds, whose quantiles the transform keeps).
func (m *Model) Forecast(h int, level float64) (model.Forecast, error) {
	return m.forecast(h, level, 1)
}

// forecast is Forecast with the interval's standard deviations multiplied
// by inflate (on the model scale).
func (m *Model) forecast(h int, level, inflate float64) (model.Forecast, error) {
	if h < 1 {
		return model.Forecast{}, fmt.Errorf("holtwinters: horizon %d must be at least 1", h)
	}
	if !(level > 0 && level < 1) {
		return model.Forecast{}, fmt.Errorf("holtwinters: interval level %v must be in (0, 1)", level)
	}
	rec := m.rec
	mean := make([]float64, h)
	st := m.final.clone()
	for k := range mean {
		mean[k], _ = rec.step(st, math.NaN())
	}
	lower := make([]float64, h)
	upper := make([]float64, h)
	z := inflate * distuv.UnitNormal.Quantile(0.5+level/2)
	for k, v := range m.variances(mean) {
		sd := math.Sqrt(v)
		lower[k], upper[k] = mean[k]-z*sd, mean[k]+z*sd
	}
	f := model.Forecast{Method: m.String(), Mean: mean, Lower: lower, Upper: upper, Level: level}
	for k := range mean {
		mean[k], lower[k], upper[k] = m.invert(mean[k]), m.invert(lower[k]), m.invert(upper[k])
		if isNaNOrInf(mean[k]) || isNaNOrInf(lower[k]) || isNaNOrInf(upper[k]) {
			return model.Forecast{}, fmt.Errorf("holtwinters: %v forecast is not finite at step %d", m.spec, k+1)
		}
	}
	return f, nil
}

// variances returns the variance of the k-step forecast error on the
// model scale for k = 1..len(mean), given the point forecasts mean.
//
// The model's own variance is σ²·(ψ₀² + … + ψ²_{k−1}), ψ the response
// of the forecasts to one innovation (see modelVariances). The in-sample mean
// squared j-step errors E_j, measured for j up to the shortest period
// (at most 48), replace it where available, and beyond scale with the
// model's growth: E_J·V(k)/V(J). For a correctly specified model the two
// agree; when the model misses structure (the usual case for one-step
// estimates on smooth hourly data) the empirical errors keep the interval
// calibrated.
func (m *Model) variances(mean []float64) []float64 {
	h := len(mean)
	v := m.modelVariances(mean)
	emp := m.stepMSE
	last := -1
	for j := 0; j < min(h, len(emp)); j++ {
		if !(emp[j] >= 0) {
			break
		}
		last = j
	}
	if last < 0 {
		return v
	}
	scale := 1.0
	if v[last] > 0 {
		scale = emp[last] / v[last]
	}
	for k := range v {
		if k <= last {
			v[k] = emp[k]
		} else {
			v[k] *= scale
		}
	}
	return v
}

// modelVariances returns the model's own k-step forecast-error variance,
// k = 1..len(mean): σ²·Σᵢ ψ(i→k)², ψ(i→k) the response of the k-th
// forecast to a unit innovation at step i ≤ k. For the linear forms the
// response depends on k−i only, ψ(i→k) = ψ_{k−i}, and one impulse
// (Hyndman et al. 2008, class 1) gives all of them. With multiplicative
// seasonality it also depends on the seasonal indices at i and at k (a
// shock moves the level by α·ε/S_i and the forecast by that times S_k),
// so each step's innovation gets its own perturbed path (the delta
// method); beyond maxShockSteps steps the shocks are taken every
// ⌈h/maxShockSteps⌉ steps, each standing for the innovations of its
// stride.
func (m *Model) modelVariances(mean []float64) []float64 {
	h := len(mean)
	v := make([]float64, h)
	if m.rec.season != Multiplicative {
		var acc float64
		for k, p := range m.impulse(mean) {
			acc += p * p
			v[k] = m.sigma2 * acc
		}
		return v
	}
	delta := m.shockSize(mean)
	stride := (h + maxShockSteps - 1) / maxShockSteps
	for k := range v {
		v[k] = 1 // the step's own innovation, ψ(k→k) = 1
	}
	rec := m.rec
	base := m.final.clone() // the unperturbed path, before step i
	pert := base.clone()
	for i := 0; i < h; i++ {
		if i%stride == 0 {
			pert.copyFrom(base)
			rec.stepNoise(pert, math.NaN(), delta)
			for k := i + 1; k < h; k++ {
				yhat, _ := rec.step(pert, math.NaN())
				psi := (yhat - mean[k]) / delta
				// The shock at i stands for steps i..i+stride−1 before k.
				v[k] += float64(min(stride, k-i)) * psi * psi
			}
		}
		rec.step(base, math.NaN())
	}
	for k := range v {
		v[k] *= m.sigma2
	}
	return v
}

// maxShockSteps bounds the perturbed paths of modelVariances (cost
// O(h·maxShockSteps) steps).
const maxShockSteps = 1024

// shockSize is the innovation δ by which impulse responses are
// differenced: small against σ, or against the forecast when σ is 0.
func (m *Model) shockSize(mean []float64) float64 {
	delta := 1e-4 * math.Sqrt(m.sigma2)
	if !(delta > 0) || math.IsInf(delta, 0) {
		delta = 1e-6 * math.Max(math.Abs(mean[0]), 1)
	}
	return delta
}

// impulse returns ψ_0 … ψ_{h−1}: the response of the next h forecasts to
// a unit innovation at the first of them, given the unperturbed forecasts
// mean. It perturbs the first step by a small δ and differences the two
// forecast paths: exact for the linear forms, the delta method's
// linearisation for multiplicative seasonality.
func (m *Model) impulse(mean []float64) []float64 {
	h := len(mean)
	delta := m.shockSize(mean)
	rec := m.rec
	st := m.final.clone()
	psi := make([]float64, h)
	psi[0] = 1
	rec.stepNoise(st, math.NaN(), delta)
	for k := 1; k < h; k++ {
		yhat, _ := rec.step(st, math.NaN())
		psi[k] = (yhat - mean[k]) / delta
	}
	return psi
}

// PointForecast re-runs the model, with its parameters and initial
// states, over y instead of the history it was fitted to and returns the
// h point forecasts after y's end: what FitWith(y, m.Spec(), m.Params())
// followed by Forecast would give as Mean, without the intervals and
// in-sample diagnostics. It is how a model fitted once is scored cheaply
// at earlier origins (y a prefix of its history). Errors are those of
// FitWith (a y too short for the form, a value ≤ 0 for a multiplicative
// or Box-Cox form) and a forecast that is not finite.
func (m *Model) PointForecast(y []float64, h int) ([]float64, error) {
	if h < 1 {
		return nil, fmt.Errorf("holtwinters: horizon %d must be at least 1", h)
	}
	z, _, err := prepare(y, m.spec)
	if err != nil {
		return nil, err
	}
	st := newState(m.params, m.rec.nSeasonal)
	m.rec.run(st, z, nil)
	out := make([]float64, h)
	for k := range out {
		yhat, _ := m.rec.step(st, math.NaN())
		out[k] = m.invert(yhat)
		if isNaNOrInf(out[k]) {
			return nil, fmt.Errorf("holtwinters: %v forecast is not finite at step %d", m.spec, k+1)
		}
	}
	return out, nil
}

// PointForecastRestarted is PointForecast for a history y that need not
// start where the estimation's history did: the model's smoothing
// parameters (α, β, φ, γᵢ, ρ) are kept, and the initial states are derived
// from y's own first cycles as Fit derives them (initialParams), so a
// window that slides forward by a part of a cycle keeps its seasonal
// indices in phase. It is how a model estimated once is re-run on later
// windows of the same series without estimating it again.
func (m *Model) PointForecastRestarted(y []float64, h int) ([]float64, error) {
	if h < 1 {
		return nil, fmt.Errorf("holtwinters: horizon %d must be at least 1", h)
	}
	z, _, err := prepare(y, m.spec)
	if err != nil {
		return nil, err
	}
	p := initialParams(z, m.spec)
	p.Alpha, p.Beta, p.Phi, p.AR = m.params.Alpha, m.params.Beta, m.params.Phi, m.params.AR
	copy(p.Gamma, m.params.Gamma)
	rec := newRecursion(m.spec, p)
	st := newState(p, rec.nSeasonal)
	rec.run(st, z, nil)
	out := make([]float64, h)
	for k := range out {
		yhat, _ := rec.step(st, math.NaN())
		out[k] = m.invert(yhat)
		if isNaNOrInf(out[k]) {
			return nil, fmt.Errorf("holtwinters: %v forecast is not finite at step %d", m.spec, k+1)
		}
	}
	return out, nil
}
