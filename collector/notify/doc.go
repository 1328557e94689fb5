// Package notify delivers alert.Events: to the log, and to webhooks in three
// formats: plain JSON (the alert.Event itself, which the forecaster's
// POST /api/v1/release accepts for idle events), the WeCom (企业微信) group
// robot and the DingTalk (钉钉) custom robot text messages.
//
// A Dispatcher queues events and sends them from its own goroutine, so a
// slow receiver never delays a collection cycle; each webhook retries with
// backoff and counts what it could not deliver. Tokens and robot secrets
// come from the environment or files, go into headers or signatures, and
// never into logs or errors.
package notify
