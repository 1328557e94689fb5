// Package redact is prewarm's one redactor: every path by which text leaves
// a binary (log lines, errors returned to a CLI, API error fields, the audit
// log, webhook payloads) passes through a Redactor built from the configured
// secrets, so that a secret echoed back by an upstream (a proxy, an error
// page, a misconfigured gateway) never reaches an output.
//
// A Redactor knows each secret in the spellings it can take on the way
// out: raw, URL-escaped (query and path escaping) and base64 (standard and
// URL alphabets, padded or not, at every byte alignment, so that the secret
// is also found inside a longer base64 text such as a Basic auth header).
// Build one in main from the environment and the files the secrets come
// from, and hand it to everything that writes; there is no global
// instance.
package redact
