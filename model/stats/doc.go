// Package stats holds the small descriptive statistics the forecasters
// share, one copy each, so that model/auto, model/seasonal and
// model/holtwinters compute them the same way and as R does: the type-7
// quantile (R's default, quantile(x, q)) and the least-squares line
// (R's coef(lm(y ~ x))).
//
// Everything here is pure computation on []float64.
package stats
