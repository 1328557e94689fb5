// Package datasets loads recorded demand traces and generates synthetic ones,
// so that the forecaster, the planner and the backtest all work on the same
// regular time series: a [Series] is a start time, a fixed step and one value
// per step, with NaN marking a step for which the trace has no data.
//
// Three kinds of input are read:
//
//   - Time-series CSV files with a header ([LoadCSV], [ReadCSV]): the two-column
//     "timestamp,value" layout, NAB files such as nyc_taxi.csv, and wider files
//     such as alibaba_sd_gpu_util.csv whose value column is chosen with
//     [CSVOptions].ValueColumn. Timestamps may be RFC 3339, "2006-01-02 15:04:05"
//     (fractional seconds allowed), "2006-01-02 15:04", "2006-01-02T15:04:05",
//     Unix seconds (integer or float) or a plain integer index 0, 1, 2, ...
//   - Per-request arrival logs ([LoadArrivals]): one row per request, counted
//     (or a token column summed) per interval, e.g. the Azure LLM inference
//     trace or alibaba_sd_inference_ms.csv.
//   - A seeded synthetic generator ([Synthetic], [DefaultSynthetic]) with daily
//     and weekly cycles, trend, noise, holidays and flash crowds, used by the
//     demo and the tests when no recorded data is given.
//
// Loading never drops data silently. Everything it had to do to turn a file
// into a regular series is listed in a [Report] with line numbers: gaps
// (filled with NaN), duplicate timestamps (merged by the aggregate), off-grid
// rows merged into a neighbouring step, out-of-order rows (sorted), bad
// rows (rejected) and outliers kept. A bad row is an error naming
// "file:line: column: problem" unless [CSVOptions].SkipBad is set
// (--skip-bad), in which case it is skipped and listed in the report.
// [Report.Notice] is the one text every command prints about what loading
// did, empty for a clean file.
//
// Input honesty: a file that is not comma-separated UTF-8 text (separated
// by semicolons, tabs or '|', UTF-16 with or without a byte-order mark,
// another 8-bit encoding, gzip, an .xlsx workbook) is refused with what it
// looks like and what to do; a UTF-8 byte-order mark is skipped. A value
// above [MaxValue] (1e12) or more than [MaxMedianRatio] (1000) times the
// median of the file's positive values is taken for a unit or typing
// error and refused naming its line, unless [CSVOptions].AllowOutliers
// (--allow-outliers) keeps it. Messages name the command-line flags
// (--value-column, --step, --skip-bad, --allow-outliers), never Go fields.
//
// One time grid: a step chosen by the caller, [Resample] and arrival
// counts put their windows where the store does ([store.WindowStart]:
// multiples of the step from the Unix epoch). For steps that divide a day
// this is the grid of time.Truncate, which counts from year 1; for others
// (a week, 25 min) the windows line up with the store's (a week starts
// on Thursday, 1970-01-01's weekday). Timestamps outside 1678-2261, which
// the grid cannot hold, are bad rows.
//
// [Resample] moves a series to a coarser
// step (mean, sum or max); nothing here ever upsamples.
//
// The recorded traces live outside the repository; [Locate] finds the shared
// folder ($PREWARM_DATASETS, else ../shared/datasets next to the repository
// root) and tests skip with a clear message when it is absent. The package
// does file I/O only in the Load functions and Locate; the rest works on an
// io.Reader or in memory.
package datasets
