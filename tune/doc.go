// Package tune lets each pool choose, walk-forward, the policy that has
// lately been the cheapest at its SLO: the hybrid or the forecast plan
// alone (each with bursts learned as a share of the level or as a height
// of their own), the reactive rules alone (nine settings, and with the
// surge rule), a flat fleet, or a schedule of sizes by hour of the day.
//
// No fixed policy wins on every kind of traffic. A forecast pays on
// smooth daily and weekly rhythms; on traffic whose bursts are shorter
// than a boot and cannot be timed, a flat fleet that lets the SLO's miss
// budget absorb them costs less; on news-driven surges that last hours,
// the reactive rules do. A Tuner therefore replays every candidate beside
// the live policy, on the pool's own observed demand, each on a simulated
// twin of the pool (package fleetsim, the simulator the backtest runs) fed
// the same observations the live controller sees. Each twin's cost and
// requests served late are kept per day, from the first whole day of the
// twins (the forecast's warm-up included: the reactive and flat candidates
// differ from it from the first minute). Once a day the tuner adopts the
// cheapest candidate whose last Window days left at least Margin of the
// miss budget unspent (when none did, the cheapest that did with its worst
// day or days left out, else the cheapest whose misses beyond the
// least-missing one's fit in that unspent part; when only candidates
// three times dearer covered a rare burst that cost the others few
// misses, the cheapest that met it without that day, its calibration
// forgetting that day's misses), and the live controller follows it
// (control.Controller.Follow). Between tunings a guard watches
// the live miss estimate: when the budget burns faster than GuardBurn
// times its allowed rate over GuardWindow and in the current hour (SRE's
// multi-window burn-rate alert), ten requests late at least, the tuner
// moves at once to the cheapest
// candidate that held the SLO over that window and the hour so far and
// whose twin holds what the demand observed now needs: the hour's record
// lags a surge that began minutes ago. While it waits a boot to judge
// that move, a fixed size the demand has outgrown is replaced at once.
//
// The flat candidate is a grid of fixed fleet sizes, each replayed; the
// candidate is the smallest size whose window qualifies. A size added at a
// new peak is charged, for the days before it, what a smaller size that
// lived through them missed. The flat sizes' twins also keep their
// figures per hour, which the schedule candidate is fitted to each day
// (schedule.go); its own twin follows each day's fit. Everything is
// causal: a day's choice reads only the days before it, so the backtest
// (whose hybrid policy is a Tuner) scores what `forecaster serve` would
// have done.
package tune
