package actuator

import "errors"

// Errors the safety layer (Safe) returns itself, before or instead of calling
// a back-end. Test for them with errors.Is.
var (
	// ErrInvalidDesired: the desired value is NaN, infinite, negative or
	// absurdly large; nothing was applied.
	ErrInvalidDesired = errors.New("invalid desired capacity")
	// ErrRateLimited: the pool was changed less than its min_interval ago;
	// nothing was applied, the next planning tick will try again.
	ErrRateLimited = errors.New("rate limited: pool changed too recently")
	// ErrUnknownPool: the pool is not in the configuration the Safe wrapper
	// was built with, so it has no bounds and is never touched.
	ErrUnknownPool = errors.New("pool not configured")
	// ErrUnknownBackend: no factory is registered under the requested name.
	ErrUnknownBackend = errors.New("unknown actuator back-end")
	// ErrInvalidConfig: a pool configuration failed validation.
	ErrInvalidConfig = errors.New("invalid actuator configuration")
	// ErrNotPersisted: the change could not be recorded (SafetyOptions.
	// Persist failed), so it was not made.
	ErrNotPersisted = errors.New("change not recorded, so not made")
)
