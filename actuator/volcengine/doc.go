// Package volcengine is prewarm's Volcengine back-end: it sizes Auto Scaling
// groups and stops idle ECS GPU instances through the official
// volcengine-go-sdk.
//
// A pool is a scaling group ID. Capacity reads DescribeScalingGroups,
// SetDesired calls ModifyScalingGroup (DesireInstanceNumber),
// PublishSchedule mirrors the planned steps as Scheduled scaling policies
// named with a "prewarm-" prefix (and touches no other policy), Activities
// reads DescribeScalingActivities for audit. SetSpot sets the group's
// InstancesDistribution from the plan's spot tier, and SettleSpot moves the
// on-demand members that stood in for spot during a stock-out back to spot
// once it returns; SetWarm keeps the stopped members of a group in
// ScalingMode recycle at the plan's warm tier, settled further by
// SettleWarm. Capacity only reads. Release stops one ECS instance
// with StopInstances and StoppedMode=StopCharging, falling back to
// KeepCharging, loudly, where the instance refuses; Start brings instances
// back.
//
// The Actuator makes one attempt per call and reports failures as *APIError
// values wrapping actuator.ErrThrottled, ErrTransient or ErrRejected with
// the provider's code, message and RequestId; wrap it in actuator.NewSafe
// for retries, the circuit breaker, bounds and the audit log. Credentials
// come from VOLCENGINE_* environment variables or a credentials file
// (LoadConfig) and never appear in logs or errors (see Secret).
//
// Tests run the real SDK against volcenginetest, a loopback fake of the
// OpenAPI that verifies the HMAC-SHA256 signature. docs/volcengine.md
// covers configuration and the permissions the back-end needs.
package volcengine
