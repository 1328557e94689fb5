// Package releasehook is the HTTP endpoint through which training jobs and
// the collector ask prewarm to release an instance:
//
//	POST /api/v1/release
//	Authorization: Bearer <token>
//	{"instance_id": "i-abc", "reason": "training job 42 finished"}
//
// It also accepts the collector's idle event as is
// ({"kind":"idle","instance_id":…,"pool":…,"host":…,"gpu":…,"uuid":…,"since":…,"reason":…}),
// so an idle GPU is stopped as soon as the event arrives. The handler checks
// the bearer token in constant time, asks a membership check which
// configured pool the instance belongs to, calls the actuator's Release and
// answers JSON: 200 released (or ignored, for the collector's alert and
// resolved events), 400 bad request, 401 bad token, 403 instance
// not in a configured pool, 405 wrong method, 429 too many missing or wrong tokens
// (with Retry-After), 502 the cloud API failed, 503 circuit open, 501 the
// back-end cannot release.
//
// With several replicas sharing the pools (leader election), only the
// replica acting for the instance's pool releases it (Config.Route); the
// others pass the request on to it once (Config.Forward, the owner's
// address from its member Lease) and answer with its answer, or, when it
// cannot be reached, answer 503 with Retry-After and
// {"outcome":"standby","owner":…}, calling nothing. The
// instance's pool comes from the membership check (Config.Locate), else
// the request's "pool", else the only pool configured; a request whose
// pool cannot be told is refused (400).
//
// Missing and wrong tokens are rate-limited per client address (10, then
// one per 6 s) and from all addresses together (100, then 10 a second):
// beyond a limit they get 429 instead of 401. The right token is checked
// first and always let through, so guesses cannot lock out the caller
// that holds it. Refusals are logged in one summary line a minute, with
// their counts and addresses, never a token (internal/authguard, which the
// mode API shares).
package releasehook
