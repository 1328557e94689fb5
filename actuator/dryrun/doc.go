// Package dryrun is an actuator that changes nothing: it logs, with
// log/slog, each call it would make, and keeps the sizes it was "set" to in
// memory so Capacity reflects them at once (instant success) and the
// safety layer's no-op and step rules behave as they would against a real
// fleet. A pool nothing has sized has no size to report, so a forecast-only
// pool on dryrun shows neither ready instances nor a shortage. Use it to watch what
// prewarm would do before letting it touch a cloud account.
package dryrun
