#!/usr/bin/env Rscript
# Reference decompositions from R for seasonal.STL and seasonal.MSTL.
#
# Run from this directory (R 4 with forecast 8.20 and jsonlite; apt-get install
# r-cran-forecast r-cran-jsonlite):
#
#     Rscript r_stl.R > r_stl.json
#
# Each case records its input series, the call and R's components:
#   stats::stl(ts(x, frequency = p), s.window = .., [s.degree, t.window, robust]) ->
#     time.series[, "seasonal"], [, "trend"], [, "remainder"]
#   forecast::mstl(msts(x, seasonal.periods = ps)) or mstl(ts(x, frequency = p)) ->
#     the Trend, Seasonal<p> and Remainder columns
# The series are simulated here with set.seed, so the file is self-contained.
suppressPackageStartupMessages({
  library(forecast)
  library(jsonlite)
})
stopifnot(packageVersion("forecast") == "8.20")

sim <- function(n, periods, seed, outliers = 0) {
  set.seed(seed)
  t <- seq_len(n)
  x <- 50 + 0.02 * t + 3 * sin(2 * pi * t / (n / 2))
  for (p in periods) x <- x + 10 * sin(2 * pi * t / p) + 4 * cos(4 * pi * t / p + 1)
  x <- x + rnorm(n)
  if (outliers > 0) x[sample(n, outliers)] <- x[sample(n, outliers)] + 40
  x
}

stl_case <- function(name, x, p, ...) {
  args <- list(...)
  fit <- do.call(stl, c(list(ts(x, frequency = p)), args))
  call <- paste0("stl(ts(x, frequency = ", p, "), ",
                 paste(names(args), sapply(args, deparse), sep = " = ", collapse = ", "), ")")
  list(name = name, call = call, kind = "stl", periods = p, args = args, x = x,
       trend = as.numeric(fit$time.series[, "trend"]),
       seasonal = list(as.numeric(fit$time.series[, "seasonal"])),
       remainder = as.numeric(fit$time.series[, "remainder"]))
}

mstl_case <- function(name, x, ps) {
  y <- if (length(ps) == 1) ts(x, frequency = ps) else msts(x, seasonal.periods = ps)
  fit <- mstl(y)
  cols <- grep("Seasonal", colnames(fit))
  call <- if (length(ps) == 1) paste0("mstl(ts(x, frequency = ", ps, "))") else
    paste0("mstl(msts(x, seasonal.periods = c(", paste(ps, collapse = ", "), ")))")
  list(name = name, call = call, kind = "mstl", periods = ps, args = structure(list(), names = character(0)), x = x,
       trend = as.numeric(fit[, "Trend"]),
       seasonal = lapply(cols, function(k) as.numeric(fit[, k])),
       remainder = as.numeric(fit[, "Remainder"]))
}

cases <- list(
  stl_case("hourly, s.window 11", sim(500, 24, 1), 24, s.window = 11),
  stl_case("hourly, s.window 7, robust, outliers", sim(480, 24, 2, outliers = 12), 24, s.window = 7, robust = TRUE),
  stl_case("monthly, s.window 25, s.degree 1, t.window 21", sim(240, 12, 3), 12, s.window = 25, s.degree = 1, t.window = 21),
  stl_case("weekly cycle, barely two periods", sim(15, 7, 4), 7, s.window = 11),
  stl_case("long period, short subseries", sim(400, 168, 5), 168, s.window = 15),
  stl_case("half-hourly, s.window 13, jumps", sim(1000, 48, 6), 48, s.window = 13),
  mstl_case("mstl daily and weekly", sim(1000, c(24, 168), 7), c(24, 168)),
  mstl_case("mstl one period", sim(700, 48, 8), 48),
  mstl_case("mstl drops a period with under two cycles", sim(300, c(24, 168), 9), c(24, 168))
)
cat(toJSON(list(cases = cases), digits = NA, auto_unbox = TRUE, pretty = FALSE))
cat("\n")
