// Package backtest replays a recorded (or synthetic) demand trace through
// scaling policies and measures what each would have cost and how many
// requests it would have served within the latency SLO.
//
// The simulator is honest about queueing. It advances in ticks (one
// minute, or the trace's step when that is finer), holding each step's
// request rate constant within the step. Each instance is Fleet.Slots
// servers with a mean service time S (Fleet.ServiceTime, or Slots/RPS).
// Within a tick below capacity a request finds the M/M/c queue of that
// tick's rate and servers in its steady state: it waits with probability
// C(c, a) (Erlang C, a = λ·S) and then exponentially with rate (c − a)/S.
// Above capacity a FIFO backlog builds as a fluid, carried from tick to
// tick, and requests that have waited QueueTimeout are dropped. SLO
// attainment is the share of requests whose wait is at most SLO.Latency;
// the P99 wait and the P99 latency (wait plus an exponential service) come
// from distributions recorded exactly for each regime.
//
// The fleet is actuator/simulated, the same model `forecaster serve` drives
// with backend "simulated": boot delays (optionally spread per instance),
// billing per second from launch (booting instances included), drains on
// scale-in (a removed instance stays billed while it finishes its requests)
// and seeded spot interruptions. Every policy's changes pass through
// actuator.Safe with the pool's max_step and min_interval, so a table is
// what serve would have done. Policies see the metrics of the tick that
// ended one collection interval earlier (MetricsLag); a step with no data
// is neither demand nor a miss, and the policies hold through it.
//
// Policies: static (the peak's need all the time), flat (the best single
// fleet size in hindsight), reactive (threshold rules), scheduled (the
// seasonal-profile plan), predictive (the model's plan), hybrid (the live
// service's control.Controller: the gated forecast plan, the reactive
// rules and schedule floors) and oracle (the future demand's need a boot
// delay ahead: the limit). The forecasting policies are strictly
// walk-forward: each refit sees only the demand before it, so changing
// future demand cannot change past decisions. RunFrontier sweeps each
// adaptive policy's knobs and reports the cheapest setting that reaches
// each SLO target: cost at equal SLO.
package backtest
