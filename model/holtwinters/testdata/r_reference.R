#!/usr/bin/env Rscript
# Reference values from R's forecast package for holtwinters' tests.
#
# Run from this directory (apt-get install r-cran-forecast r-cran-jsonlite;
# forecast 8.20 produced the committed file):
#
#     Rscript r_reference.R > r_reference.json
#
# 1. dshw with FIXED parameters (no estimation):
#      dshw(y, period1 = 24, period2 = 168, h = 48, alpha = .., beta = ..,
#           gamma = .., omega = .., phi = .., armethod = .., lambda = ..)
#    recording its fitted values, forecasts and initial states
#    (model$l0, model$b0, model$s20[1:24], model$s10 = wstart) so the Go side
#    feeds the same initialisation.
# 2. dshw with estimated parameters on the same series: its MSE, a loose
#    target for holtwinters.Fit.
# 3. ets with estimated parameters on statsmodels_fixed.json's series
#    (frequency 12), one per form, additive errors: the SSE, a loose target.
# 4. stats::HoltWinters (Taylor/Winters form) with FIXED parameters and
#    starting values on the same series:
#      HoltWinters(ts(y, frequency = 12), alpha = 0.3, beta = 0.1 or FALSE,
#                  gamma = 0.2, seasonal = .., l.start = 48, b.start = 0.2,
#                  s.start = ..)
#    recording fitted[, "xhat"], which starts at observation 13 (the
#    recursion starts one period in).
suppressPackageStartupMessages({
  library(forecast)
  library(jsonlite)
})

# A positive hourly-like series: daily and weekly cycles, weekend dip, a
# slow trend and Gaussian noise; 4 weeks.
set.seed(20261130)
n <- 168 * 4
t <- 0:(n - 1)
day <- sin(2 * pi * (t %% 24) / 24)
week <- 0.3 * cos(2 * pi * (t %% 168) / 168) - 0.5 * ((t %% 168) %/% 24 >= 5)
y <- 10 + 0.002 * t + 3 * day + 2 * week + rnorm(n, 0, 0.3)

cases <- list()
add_case <- function(name, armethod, lambda) {
  f <- dshw(y, period1 = 24, period2 = 168, h = 48, alpha = 0.1, beta = 0.01,
            gamma = 0.2, omega = 0.15, phi = 0.6, armethod = armethod,
            lambda = lambda)
  list(name = name, alpha = 0.1, beta = 0.01, gamma = 0.2, omega = 0.15,
       phi = if (armethod) 0.6 else 0, armethod = armethod,
       lambda = if (is.null(lambda)) NA else lambda,
       level0 = f$model$l0, trend0 = f$model$b0,
       seasonal24 = as.numeric(f$model$s20[1:24]),
       seasonal168 = as.numeric(f$model$s10[1:168]),
       fitted = as.numeric(f$fitted), forecast = as.numeric(f$mean))
}
cases[[1]] <- add_case("dshw-ar", TRUE, NULL)
cases[[2]] <- add_case("dshw-noar", FALSE, NULL)
cases[[3]] <- add_case("dshw-ar-boxcox0.5", TRUE, 0.5)

est <- dshw(y, period1 = 24, period2 = 168, h = 48)
dshw_estimated <- list(mse = est$model$mse, alpha = est$model$alpha,
                       beta = est$model$beta, gamma = est$model$gamma,
                       omega = est$model$omega, phi = est$model$phi)

sm <- fromJSON("statsmodels_fixed.json")
ys <- ts(sm$y, frequency = 12)
forms <- list(ANN = c("ANN", FALSE), AAN = c("AAN", FALSE), AAdN = c("AAN", TRUE),
              ANA = c("ANA", FALSE), AAA = c("AAA", FALSE), AAdA = c("AAA", TRUE),
              ANM = c("ANM", FALSE), AAM = c("AAM", FALSE), AAdM = c("AAM", TRUE))
ets_sse <- list()
for (nm in names(forms)) {
  fit <- ets(ys, model = forms[[nm]][1], damped = as.logical(forms[[nm]][2]),
             restrict = FALSE)
  ets_sse[[nm]] <- sum(residuals(fit)^2)
}

hw <- list()
for (seasonal in c("additive", "multiplicative")) {
  for (trend in c(TRUE, FALSE)) {
    s0 <- if (seasonal == "additive") 10 * sin(2 * pi * (0:11) / 12) else 1 + 0.2 * sin(2 * pi * (0:11) / 12)
    fit <- HoltWinters(ys, alpha = 0.3, beta = if (trend) 0.1 else FALSE,
                       gamma = 0.2, seasonal = seasonal, l.start = 48,
                       b.start = if (trend) 0.2 else NULL, s.start = s0)
    hw[[length(hw) + 1]] <- list(seasonal = seasonal, trend = trend,
      alpha = 0.3, beta = if (trend) 0.1 else 0, gamma = 0.2, level0 = 48,
      trend0 = if (trend) 0.2 else 0, seasonal0 = s0, start = 12,
      fitted = as.numeric(fit$fitted[, "xhat"]))
  }
}

cat(toJSON(list(producer = "r_reference.R, R forecast 8.20", y = y,
                dshw_fixed = cases, dshw_estimated = dshw_estimated,
                ets_sse = ets_sse, holtwinters_fixed = hw),
           auto_unbox = TRUE, digits = NA, na = "null"))
