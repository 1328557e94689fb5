// Package dryrun is an actuator that changes nothing: it logs, with
// log/slog, each call it would make, and keeps the sizes it was "set" to in
// memory so Capacity reflects them and the safety layer's no-op and step
// rules behave as they would against a real fleet. Use it to watch what
// prewarm would do before letting it touch a cloud account.
package dryrun
