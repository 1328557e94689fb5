// Package simulated is an in-memory GPU fleet that behaves like a cloud
// auto scaling group, for the demo and for end-to-end tests: new instances
// become ready after a boot delay, removal takes the newest instances first,
// scheduled steps take effect when their time comes, and Release removes a
// named instance and lowers the desired size so it is not replaced. Time
// comes from an injectable clock, so a day of scaling runs in microseconds.
package simulated
