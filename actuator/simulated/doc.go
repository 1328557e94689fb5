// Package simulated is prewarm's one model of a GPU fleet: an in-memory
// cloud auto scaling group that the demo, `forecaster serve` (backend
// "simulated") and the backtest all drive through the actuator.Actuator
// interface, so a backtest table is what the service would have done to
// that fleet.
//
// The model, per pool:
//
//   - A new instance is billed from launch and serves from its ready time,
//     a boot delay later (BootDelay, optionally drawn per instance with a
//     spread, BootSpread).
//   - Scale-in removes booting instances first (newest first), then ready
//     spot instances, then ready on-demand ones, newest first. A removed
//     ready instance drains: it takes no new requests but is billed for
//     Drain more while it finishes its in-flight work.
//   - Part of the fleet above an on-demand base may run on spot instances
//     (SpotShare, as a cloud's mixed-instances policy does); a ready spot
//     instance is interrupted at a seeded random rate and the group
//     replaces it at once, the replacement booting again.
//   - Scheduled steps (PublishSchedule) take effect at their own times, even
//     when nobody looks at the fleet in between; Release removes a named
//     instance and lowers the desired size so it is not replaced.
//
// Time comes from an injectable clock, so a month of scaling runs in
// milliseconds; every event (a boot, a drain's end, an interruption, a
// scheduled step) is applied at its own time, so billing is exact to the
// nanosecond whatever the clock's granularity.
package simulated
