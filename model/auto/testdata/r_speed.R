#!/usr/bin/env Rscript
# R forecast 8.20's time on the series of auto's speed benchmarks, to quote beside them.
#
#   PREWARM_EXPORT=/tmp/speed go test -run TestExportBenchmarkSeries ./model/auto
#   Rscript model/auto/testdata/r_speed.R /tmp/speed [m4|minute]
#
# Every call runs once untimed first on the M4 series (R compiles on first use); the M4
# timings are the fastest of 3 runs, the per-minute ones a single run (tbats there takes
# over ten minutes; setTimeLimit cannot interrupt its C code).
# Series (one value a line, written by TestExportBenchmarkSeries):
#   m4_H201.txt     BenchmarkForecastM4's M4 Hourly series, 960 values, h = 48
#   per_minute.txt  BenchmarkForecastPerMinute's 40,320 per-minute values, h = 60
# Calls, each fit and forecast with 80% and 95% intervals, timed by system.time (elapsed):
#   stlf(y, h)                       y = msts(x, seasonal.periods = c(day, week))
#   forecast(mstl(y), h)
#   forecast(ets(ts(x, frequency = day)), h)   (ets models seasonality up to period 24 only)
#   forecast(tbats(y, use.parallel = FALSE), h)
suppressMessages(library(forecast))
stopifnot(packageVersion("forecast") == "8.20")
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) stop("usage: Rscript r_speed.R FOLDER [m4|minute]")
which <- if (length(args) > 1) args[2] else "all"

time_it <- function(label, f, reps) {
  t <- min(sapply(seq_len(reps), function(i) system.time(f())[["elapsed"]]))
  cat(sprintf("%-48s %10.3f s\n", label, t))
}

runs <- list(
  list(name = "m4", file = "m4_H201.txt", day = 24, week = 168, h = 48, reps = 3),
  list(name = "minute", file = "per_minute.txt", day = 1440, week = 10080, h = 60, reps = 1)
)
calls <- list(
  "stlf(y, h)" = function(x, y, r) stlf(y, h = r$h, level = c(80, 95)),
  "forecast(mstl(y), h)" = function(x, y, r) forecast(mstl(y), h = r$h, level = c(80, 95)),
  "forecast(ets(ts(x, frequency = day)), h)" = function(x, y, r)
    forecast(suppressWarnings(ets(ts(x, frequency = r$day))), h = r$h, level = c(80, 95)),
  "forecast(tbats(y), h)" = function(x, y, r) forecast(tbats(y, use.parallel = FALSE), h = r$h, level = c(80, 95))
)
warm <- scan(file.path(args[1], runs[[1]]$file), quiet = TRUE)
for (f in calls) invisible(f(warm, msts(warm, seasonal.periods = c(24, 168)), runs[[1]]))
for (r in runs) {
  if (which != "all" && which != r$name) next
  x <- scan(file.path(args[1], r$file), quiet = TRUE)
  y <- msts(x, seasonal.periods = c(r$day, r$week))
  cat(sprintf("%s: %d values, periods %d and %d, h = %d\n", r$file, length(x), r$day, r$week, r$h))
  for (label in names(calls)) time_it(label, function() calls[[label]](x, y, r), r$reps)
}
