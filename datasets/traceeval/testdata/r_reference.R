# R forecast 8.20's reference scores on the windows of 'forecaster eval traces'.
#
# Run from the repository root (about 45 minutes on one busy core; tbats takes most of it):
#   go run ./cmd/forecaster eval traces --data "$PREWARM_DATASETS/traces" --export-windows /tmp/windows.csv
#   Rscript datasets/traceeval/testdata/r_reference.R /tmp/windows.csv > datasets/traceeval/testdata/r_reference.csv
#
# Each window (one row of the exported file: the history, already gap-filled by Go, and the
# test values, NA where the trace has none) is forecast h = length(test) steps ahead with
# 80% and 95% intervals by these calls, y being the history as msts(x, seasonal.periods =
# periods) when the window has clock periods (a day, a week: those the history holds twice)
# and ts(x, frequency = 1) otherwise:
#   r_snaive  snaive(ts(x, frequency = period), h)  (naive(x, h) for period 1): the Go baseline
#             recomputed, which proves both sides scored the same windows
#   stlf      stlf(y, h = h, level = c(80, 95))  (needs a seasonal y: fails without periods)
#   mstl      forecast(mstl(y), h = h, level = c(80, 95))
#   ets       forecast(ets(ts(x, frequency = periods[1])), h = h, level = c(80, 95))  (ets
#             models seasonality up to period 24 only; frequency 1 without periods)
#   tbats     forecast(tbats(y, use.parallel = FALSE), h = h, level = c(80, 95))
# and scored on the test steps that are not NA: mae (mean absolute error), cov80 and cov95
# (shares inside the intervals), is95 (mean interval score of the 95% interval, unscaled:
# Go divides it and the MAE by its own MASE scale), seconds (elapsed, fit and forecast).
# n_train and train_sum echo the history so that Go can check the window.
suppressMessages(library(forecast))
stopifnot(packageVersion("forecast") == "8.20")

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript r_reference.R WINDOWS.csv > r_reference.csv")
windows <- read.csv(args[1], colClasses = "character")

nums <- function(s) {
  if (s == "") return(numeric(0))
  v <- strsplit(s, " ", fixed = TRUE)[[1]]
  suppressWarnings(as.numeric(ifelse(v == "NA", NA, v)))
}

score <- function(fc, test) {
  ok <- !is.na(test)
  y <- test[ok]
  m <- as.numeric(fc$mean)[ok]
  lo80 <- as.numeric(fc$lower[, 1])[ok]; hi80 <- as.numeric(fc$upper[, 1])[ok]
  lo95 <- as.numeric(fc$lower[, 2])[ok]; hi95 <- as.numeric(fc$upper[, 2])[ok]
  a <- 0.05
  is95 <- (hi95 - lo95) + 2 / a * (lo95 - y) * (y < lo95) + 2 / a * (y - hi95) * (y > hi95)
  c(mae = mean(abs(y - m)), cov80 = mean(y >= lo80 & y <= hi80),
    cov95 = mean(y >= lo95 & y <= hi95), is95 = mean(is95))
}

methods <- list(
  r_snaive = function(x, h, period, periods) {
    if (period < 2) naive(ts(x), h = h, level = c(80, 95))
    else snaive(ts(x, frequency = period), h = h, level = c(80, 95))
  },
  stlf = function(x, h, period, periods) {
    stlf(seasonal_y(x, periods), h = h, level = c(80, 95))
  },
  mstl = function(x, h, period, periods) {
    forecast(mstl(seasonal_y(x, periods)), h = h, level = c(80, 95))
  },
  ets = function(x, h, period, periods) {
    f <- if (length(periods) > 0) periods[1] else 1
    forecast(ets(ts(x, frequency = f)), h = h, level = c(80, 95))
  },
  tbats = function(x, h, period, periods) {
    forecast(tbats(seasonal_y(x, periods), use.parallel = FALSE), h = h, level = c(80, 95))
  }
)

seasonal_y <- function(x, periods) {
  if (length(periods) == 0) return(ts(x, frequency = 1))
  if (length(periods) == 1) return(ts(x, frequency = periods[1]))
  msts(x, seasonal.periods = periods)
}

cat("series,origin,method,n_train,train_sum,mae,cov80,cov95,is95,seconds,error\n")
fmt <- function(v) ifelse(is.na(v), "NA", format(v, digits = 17))
for (i in seq_len(nrow(windows))) {
  w <- windows[i, ]
  x <- nums(w$train)
  test <- nums(w$test)
  h <- length(test)
  periods <- as.integer(nums(w$periods))
  period <- as.integer(w$period)
  for (name in names(methods)) {
    err <- ""
    s <- c(mae = NA, cov80 = NA, cov95 = NA, is95 = NA)
    t0 <- proc.time()[["elapsed"]]
    fc <- tryCatch(suppressWarnings(methods[[name]](x, h, period, periods)),
                   error = function(e) { err <<- gsub("[\r\n,\"]", " ", conditionMessage(e)); NULL })
    secs <- proc.time()[["elapsed"]] - t0
    if (!is.null(fc)) s <- score(fc, test)
    cat(w$series, w$origin, name, length(x), fmt(sum(x)), fmt(s[["mae"]]), fmt(s[["cov80"]]),
        fmt(s[["cov95"]]), fmt(s[["is95"]]), format(round(secs, 3), nsmall = 3), paste0("\"", err, "\""),
        sep = ",")
    cat("\n")
  }
  message(sprintf("%d/%d %s %s", i, nrow(windows), w$series, w$origin))
}
