// Package fleetsim simulates one pool of GPU instances serving a demand,
// tick by tick: the simulator behind every backtest policy (package
// backtest) and behind the tuner's twins of a live pool (package tune), so
// that a policy is judged on one model of the fleet and its queue wherever
// it is judged.
//
// A Sim holds a simulated fleet (actuator/simulated: boot delays, billing,
// drains, spot interruptions) behind the same safety layer `forecaster
// serve` uses (actuator.Safe: bounds, max_step, min_interval), and a queue
// in front of it. Each tick a policy reads Latest (the newest observation,
// as old as Options.MetricsLag), decides, and Apply passes its decision to
// the fleet; Serve then offers the tick's arrivals to the ready instances'
// servers. Below capacity a request meets the M/M/c queue of that tick in
// its steady state (Erlang C); above it a FIFO backlog builds as a fluid,
// carried from tick to tick, and requests that waited Options.QueueTimeout
// are dropped. The Tick it returns counts the requests served, served
// within the SLO and dropped, and Finish gives the 99th percentiles of the
// wait and the latency over the whole run.
//
// Nothing here reads a clock, a file or the network: time advances by
// Options.Tick with each Serve, and spot interruptions and boot times come
// from a generator seeded by Options.Seed and Options.Stream, so a run is
// reproducible.
package fleetsim
