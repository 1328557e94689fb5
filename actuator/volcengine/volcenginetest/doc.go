// Package volcenginetest is a loopback fake of the Volcengine OpenAPI for
// tests: an httptest server that speaks the real wire protocol, so the real
// volcengine-go-sdk can be pointed at it with WithEndpoint.
//
// Every request is checked the way the gateway would: Action and Version,
// the parameters each action needs, and the HMAC-SHA256 Authorization
// header, whose signature is recomputed from the request with the fake's
// secret key (an independent implementation of Volcengine's signing, not the
// SDK's). Replies use the OpenAPI envelope
//
//	{"ResponseMetadata":{"RequestId":…,"Action":…,"Version":…,"Service":…,"Region":…,"Error":{…}},"Result":…}
//
// Behind the protocol sits a small in-memory model of Auto Scaling (scaling
// groups, scheduled policies, activities, member instances) and ECS
// (instances that stop and start), so tests assert on outcomes, not only on
// calls. Its groups scale in their ScalingMode (recycle keeps scaled-in
// members stopped and starts them first) and with their spot mix, and tests
// take spot away with StockOut and Interrupt (whose notice a group with
// SpotInstanceRemedy answers with a replacement before the member goes)
// and give it back with SpotReturns; DescribeInstances reports whether
// each instance runs on spot (SpotStrategy), as the real API does.
// Faults (error envelopes, throttling, 5xx, garbage, delays) are queued
// per action with Fail and served before the model answers.
package volcenginetest
