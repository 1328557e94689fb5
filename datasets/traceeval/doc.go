// Package traceeval scores forecasters on the recorded demand traces of
// the shared data folder (nyc_taxi.csv, the Alibaba serving traces, the
// Azure LLM arrival logs) the way they are used: forecasting from rolling
// origins, each forecast scored against the seasonal naive forecast of the
// same window. It is what 'forecaster eval traces' runs.
//
// A [Trace] names a file, a value column and a step (the file's own, or a
// per-minute or 5-minute resampling where the file is finer), and how far
// ahead to forecast. [Windows] cuts each trace into rolling origins: the
// history before the origin (at most MaxHistory steps, gaps filled by
// linear interpolation) and the Horizon steps after it. [Evaluate] runs
// every method on every window ([Methods] are those the command offers by
// name) and [Summarise] reduces the scores per trace ([Run] does it all and
// returns the command's [Report]):
//
//   - the MASE ratio: the method's MASE over the seasonal naive one's on
//     the same windows (below 1 beats it), and its geometric mean over the
//     traces;
//   - the coverage of the 80% and 95% intervals and the MSIS of the 95%
//     one, scaled like MASE;
//   - the seconds per fit.
//
// Seasonal naive repeats the last day when the history holds two days of
// the trace's step, and is plain naive otherwise (most Alibaba traces span
// 22 hours). Test steps the trace does not have (gaps) are not scored.
//
// The origins of each trace are split in time into a first and a second
// half: constants of the forecasters are tuned on the first half only, and
// the second is reported as held out.
//
// R's forecast package is the reference: [WriteWindows] exports the exact
// windows, testdata/r_reference.R forecasts them with stlf, mstl, ets and
// tbats, and its scores, stored in testdata/r_reference.csv, are read back
// by [ReadReference] (embedded as [Reference]) and checked against the
// windows by their checksums and R's own seasonal naive forecast.
package traceeval
