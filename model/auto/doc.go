// Package auto is the forecaster prewarm uses by default ("auto"): it
// takes the series' seasons from the clock and from the data, scores a
// pool of strong, simple forecasters on recent stretches of the history,
// averages the best with the runner-up when the two score close, and sets
// the prediction interval from that forecast's own recent errors.
//
// No single model wins on every demand series: a smooth daily rhythm
// suits Holt-Winters, a level shift STL, a two-day trace the last day's
// shape. Scoring each candidate on the series' own recent history, the
// way it will be used (the same horizon, from several origins), picks
// the one that fits this series now, and the interval comes from the
// errors it actually made there rather than from a model's assumptions.
//
// # Seasons
//
// The clock's periods are always candidates: Config.Periods when given,
// else the day and the week in steps of Config.Step (24 and 168 for
// hourly data, 1440 and 10080 per minute). Detection (seasonal.Detect)
// only adds a second set of periods when it finds other ones, such as a
// 5-day working week or a business day of 169 five-minute steps: odd
// detected periods ([2 24 168], [24 168 672], 169 against a clock day of
// 288) cost a few candidates, never the clock's. Without Step or Periods,
// detection alone decides.
//
// # The pool
//
// Around each season's day p and week P:
//   - shapes (seasonal.Profile): seasonal naive at p and P; the median
//     daily shape of the last 3, 7 and 14 days and the mean weekly shape of
//     the last 2 and 3 weeks, put back at the latest level; the last day's
//     shape with a damped trend; two fixed hedges between them;
//   - Holt-Winters (model/holtwinters), each estimated over the forecast
//     horizon, since it is judged there: multiplicative seasonality at p,
//     additive with a damped trend at p, Taylor's double-seasonal form at
//     p and P with AR(1) errors (on the log scale for a positive series);
//   - STL at p and MSTL at p and P (seasonal.STL, the LOESS STL of R's
//     stl), with exponential smoothing of the seasonally adjusted series:
//     R's stlf and mstl forecasts, whose level follows the latest
//     observations after a level shift.
//
// And without a season: naive, and exponential smoothing without and with
// a damped trend (which also wins when the horizon is short against the
// day: a per-minute series forecast for two hours).
//
// Before fitting, bursts are replaced by the median of the same time of
// day on the neighbouring days, so that one burst does not come back in
// the next day's forecast (see despike: a burst is at most a twelfth of a
// day long, stands out from its time of day's usual spread and, with a
// week, from the same time of the week; the history's last steps are
// left alone).
//
// # Selection
//
// Each candidate forecasts the last h, 2h, …, 6h steps of the history
// from the steps before them (h the requested horizon), and the same time
// one and two weeks back (a Saturday forecast is checked against last
// Saturday), and is scored by sMAPE/18.383 + MASE/2.395 summed over those
// origins, the two halves of M4's OWA. The best is averaged with the
// runner-up when that scores within 30% of it, and used alone otherwise.
// Origins are kept as deep as the clock season's candidates allow; a
// detected season's candidates give way to them.
//
// # Interval
//
// Split conformal prediction with the recent history as calibration set:
// the absolute errors of the chosen forecast at the validation origins and
// at up to eight more origins half a horizon off them, each divided by its
// width profile g(j)·τ(φ), give a quantile q; the interval is
// mean ± 1.15·q·g(j)·τ(φ) for lead time j and time of day φ. g(j) =
// (j+1)^β grows with the lead time as the errors do (β fitted to them,
// within [0, 1]); τ(φ) is the time of day's relative error, shrunk towards
// 1: demand at the evening peak is less certain than at night. A series
// that never goes negative gets no negative forecast or bound.
//
// Gating: a constant history, one too short to validate a forecast of the
// requested horizon, or a combined forecast that is not finite falls back
// to seasonal naive (naive without a period), with the reason in
// Forecast.Fallback.
//
// # Measured
//
// On the 414 M4 Hourly series (horizon 48) it scores OWA 0.414 on the
// holdout split and 0.399 on the official test, against the competition's
// best entry's 0.410; on the recorded traces its MASE against seasonal
// naive (geometric mean 0.869) is below R's ets and tbats.
// docs/forecasting.md has the figures, the commands that measure them, and
// how each constant was chosen (on the holdout and the traces' first half,
// never on the M4 test).
package auto
