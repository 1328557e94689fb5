// Package backtest replays a recorded (or synthetic) demand trace through
// scaling policies and measures what each would have cost and how many
// requests it would have served within the latency SLO.
//
// The simulator is the fleet: it advances in ticks (one minute, or the
// trace's step when that is finer), holding each step's request rate
// constant within the step. Instances become ready a boot delay after they
// are asked for and are billed per second from that moment until released.
// Requests beyond ready capacity wait in a FIFO fluid queue, carried from
// tick to tick, and are dropped once they have waited longer than the queue
// timeout; a request's latency is its wait for capacity. Spot instances,
// when configured, are interrupted at a seeded random rate and replaced.
//
// Policies: static (the trace's peak capacity all the time), reactive
// (threshold rules), scheduled (the seasonal-profile plan), predictive (the
// forecasting model's plan) and hybrid (the largest of the gated forecast
// plan, the reactive rules and schedule floors). The forecasting policies
// are strictly walk-forward: at each refit they see only the demand before
// the refit time, so changing future demand cannot change past decisions.
package backtest
