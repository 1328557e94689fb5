// Package actuatortest provides Fake, an in-memory actuator.Actuator with
// callbacks, for tests of the safety layer, the planner's service loop and
// the backtest. It is modelled on cluster-autoscaler's test cloud provider:
// a callback decides what each call does (return an error to simulate a
// failing provider), and every call is recorded for assertions.
//
//	f := actuatortest.New("fake").AddPool("sd-pool", 2, 0, 10)
//	f.OnScale = func(pool string, from, to int) error { return actuator.ErrThrottled }
package actuatortest
