// Package holtwinters forecasts demand with exponential smoothing: the
// Holt-Winters family with no, additive or damped trend, no, additive or
// multiplicative seasonality, and one or several seasonal periods (Taylor's
// multiple-seasonal Holt-Winters, e.g. periods 24 and 168 for the daily and
// weekly cycles of hourly data), optionally with an AR(1) adjustment of the
// one-step errors and a Box-Cox or log transform.
//
// A newcomer reads it in this order: Spec names a form; Fit estimates its
// parameters from a history (FitWith takes them as given); Model.Forecast
// returns point forecasts with a prediction interval; Auto fits the
// candidate forms and keeps the one with the smallest AICc; Forecaster
// wraps all of it, with fallbacks for awkward input, as a model.Forecaster.
//
// # The model
//
// With level l, trend b, damping φ (1 for an undamped trend, b ≡ 0
// without trend), seasonal indices s⁽ⁱ⁾ of periods mᵢ, base = l_{t-1} +
// φb_{t-1} and S_t the sum (additive) or product (multiplicative) of the
// indices s⁽ⁱ⁾_{t-mᵢ}, the one-step forecast and error are
//
//	μ_t = base + S_t   (additive)    or   base·S_t   (multiplicative)
//	ŷ_t = μ_t + ρ·e_{t-1}            (ρ = 0 without the AR(1) adjustment)
//	e_t = y_t − μ_t
//
// and the states are updated (component form)
//
//	l_t = α(y_t − S_t) + (1−α)·base            or  α·y_t/S_t + (1−α)·base
//	b_t = β(l_t − l_{t-1}) + (1−β)·φ·b_{t-1}
//	s⁽ⁱ⁾_t = γᵢ(y_t − r_t − S⁽⁻ⁱ⁾_t) + (1−γᵢ)·s⁽ⁱ⁾_{t-mᵢ}
//	       or γᵢ·y_t/(r_t·S⁽⁻ⁱ⁾_t) + (1−γᵢ)·s⁽ⁱ⁾_{t-mᵢ}
//
// where S⁽⁻ⁱ⁾ combines the other periods' indices and r_t is base in the
// default error-correction form (Hyndman et al. 2008; statsmodels'
// ExponentialSmoothing; with additive seasonality this is ETS(A,·,A) with
// β* = αβ) and l_t in the Taylor form (Winters 1960, Taylor 2003, R's
// HoltWinters and forecast::dshw). The h-step forecast from time n is
// μ_{n+h|n} = l_n + (φ+…+φʰ)·b_n ⊕ s⁽ⁱ⁾_{n+h−mᵢ⌈h/mᵢ⌉} plus the AR term.
//
// A missing observation (NaN) is replaced by its one-step forecast: the
// states coast, as they do when forecasting, and the point adds nothing
// to the error sum.
//
// # Estimation
//
// Fit takes initial states from a classical decomposition of the first
// cycles, then searches the smoothing parameters with gonum's Nelder-Mead
// inside the admissible bounds (on logit-scaled values, so every point
// tried is admissible), minimising the one-step sum of squared errors (the
// Gaussian likelihood) or, with FitOptions.Horizon, the mean in-sample
// squared error over horizons 1..H (R ets' "amse"). When the model has
// few enough initial states it alternates with a least-squares fit of the
// initial states, as statsmodels and ets estimate them. AICc counts the
// smoothing parameters, the initial states and the variance, like R's ets.
//
// One-step estimation suits short horizons; on smooth hourly data it
// drives α towards 1 and the seasonal γ towards 0, and the forecasts
// decay to a stale seasonal shape after a day. Multi-step estimation
// avoids that: on the 414 M4 Hourly series, ets(A,N,A)[24,168]+ar1
// estimated over 24 horizons scores OWA 0.476 (MSIS 7.1) against 0.859
// estimated one step ahead; seasonal naive scores 0.628. Forecaster uses
// the requested horizon by default, and with Auto's default candidates
// (level or damped trend, raw or log scale, chosen by AICc) scores OWA
// 0.428, MSIS 6.5 and 95% coverage 0.96 there.
//
// # Prediction intervals
//
// Model.Forecast's interval is Gaussian around the point forecast with the
// model's k-step variance (Hyndman et al. 2008, class 1 for the linear
// forms; the delta method for multiplicative seasonality), replaced where
// available by the in-sample k-step mean squared error, which stays
// honest when the model misses structure. On data simulated from the
// model the 95% interval covers 93.5–95.5% of futures. Forecaster widens
// it by DefaultIntervalInflation, calibrated on held-out ends of the M4
// Hourly training series, because out-of-sample errors on real demand
// exceed in-sample ones.
//
// # References
//
// Hyndman, Koehler, Ord and Snyder (2008), Forecasting with Exponential
// Smoothing: The State Space Approach, Springer. Taylor (2003), Short-term
// electricity demand forecasting using double seasonal exponential
// smoothing, J. Oper. Res. Soc. 54, 799–805.
//
// The package is pure computation: no I/O, no clocks, no global state.
package holtwinters
