#!/usr/bin/python3
"""Reference fitted values and forecasts of statsmodels' ExponentialSmoothing
with FIXED parameters and known initial states, for holtwinters' tests.

Run from this directory with Debian's statsmodels (apt-get install
python3-statsmodels; 0.13.5 produced the committed file):

    /usr/bin/python3 statsmodels_fixed.py > statsmodels_fixed.json

Every case calls
    ExponentialSmoothing(y, trend=..., damped_trend=..., seasonal=...,
        seasonal_periods=m, initialization_method="known",
        initial_level=l0, initial_trend=b0, initial_seasonal=s0,
        use_boxcox=lambda or False)
    .fit(smoothing_level=alpha, smoothing_trend=beta,
         smoothing_seasonal=gamma, damping_trend=phi, optimized=False)
and records fittedvalues, forecast(24) and the final level, trend and
seasonal states. (statsmodels 0.13.5's forecast() reuses the seasonal index
from before the last update from step m on; the tests compare the first m-1
steps with it and all steps with the final states.) It also records, per form, the
SSE of the estimated fit (initialization_method="estimated",
optimized=True) as a loose target for holtwinters.Fit.
"""
import json
import warnings

import numpy as np
from statsmodels.tsa.holtwinters import ExponentialSmoothing

warnings.simplefilter("ignore")


def series(n=144, m=12, seed=42):
    """A positive monthly-like series: level 50, slope 0.1, a seasonal
    swing of about ±20%, Gaussian noise sd 2."""
    rng = np.random.RandomState(seed)
    t = np.arange(n)
    season = 1 + 0.2 * np.sin(2 * np.pi * t / m) + 0.1 * np.cos(4 * np.pi * t / m)
    return (50 + 0.1 * t) * season + rng.normal(0, 2, n)


def main():
    m = 12
    y = series()
    cases = []
    forms = [
        # (name, trend, damped, seasonal)
        ("ANN", None, False, None),
        ("AAN", "add", False, None),
        ("AAdN", "add", True, None),
        ("ANA", None, False, "add"),
        ("AAA", "add", False, "add"),
        ("AAdA", "add", True, "add"),
        ("ANM", None, False, "mul"),
        ("AAM", "add", False, "mul"),
        ("AAdM", "add", True, "mul"),
    ]
    for name, trend, damped, seasonal in forms:
        for boxcox in (None, 0.0, 0.5):
            if boxcox is not None and name not in ("AAA", "AAdM", "ANN"):
                continue
            l0, b0, s0 = 48.0, 0.2, None
            if seasonal == "add":
                s0 = [10 * np.sin(2 * np.pi * j / m) for j in range(m)]
            elif seasonal == "mul":
                s0 = [1 + 0.2 * np.sin(2 * np.pi * j / m) for j in range(m)]
            if boxcox is not None:
                # initial states on the transformed scale
                bc = (lambda v: np.log(v)) if boxcox == 0 else (lambda v: (v ** boxcox - 1) / boxcox)
                l0t = float(bc(48.0))
                b0 = 0.01
                if seasonal == "add":
                    s0 = [0.2 * np.sin(2 * np.pi * j / m) for j in range(m)]
                l0 = l0t
            kw = dict(trend=trend, damped_trend=damped, seasonal=seasonal,
                      initialization_method="known", initial_level=l0,
                      use_boxcox=(boxcox if boxcox is not None else False))
            if trend:
                kw["initial_trend"] = b0
            if seasonal:
                kw["seasonal_periods"] = m
                kw["initial_seasonal"] = s0
            p = dict(smoothing_level=0.3, optimized=False)
            if trend:
                p["smoothing_trend"] = 0.1
            if damped:
                p["damping_trend"] = 0.9
            if seasonal:
                p["smoothing_seasonal"] = 0.2
            res = ExponentialSmoothing(y, **kw).fit(**p)
            cases.append({
                "name": name + ("" if boxcox is None else "-boxcox%g" % boxcox),
                "trend": trend or "none", "damped": damped,
                "seasonal": seasonal or "none", "period": m if seasonal else 0,
                "boxcox": boxcox,
                "alpha": 0.3, "beta": 0.1 if trend else 0.0,
                "phi": 0.9 if damped else (1.0 if trend else 0.0),
                "gamma": 0.2 if seasonal else 0.0,
                "level0": l0, "trend0": b0 if trend else 0.0,
                "seasonal0": list(map(float, s0)) if seasonal else [],
                "fitted": list(map(float, res.fittedvalues)),
                "forecast": list(map(float, res.forecast(24))),
                # states after the last observation (statsmodels' forecast
                # reuses a stale seasonal index from step m on, so tests
                # check steps >= m against these instead)
                "final_level": float(res.level[-1]),
                "final_trend": float(res.trend[-1]) if trend else 0.0,
                "final_season": list(map(float, res.season[-m:])) if seasonal else [],
            })
    estimated = {}
    for name, trend, damped, seasonal in forms:
        kw = dict(trend=trend, damped_trend=damped, seasonal=seasonal,
                  initialization_method="estimated")
        if seasonal:
            kw["seasonal_periods"] = m
        res = ExponentialSmoothing(y, **kw).fit(optimized=True)
        estimated[name] = float(res.sse)
    json.dump({"producer": "statsmodels_fixed.py, statsmodels 0.13.5",
               "y": list(map(float, y)), "cases": cases,
               "estimated_sse": estimated}, __import__("sys").stdout, indent=1)


if __name__ == "__main__":
    main()
