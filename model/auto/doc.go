// Package auto is the forecaster prewarm uses by default: it finds the
// series' seasonal periods (or takes them from the configuration), runs a
// few strong, simple forecasters, combines them robustly and guards the
// result, falling back to a seasonal baseline when something looks wrong.
package auto
