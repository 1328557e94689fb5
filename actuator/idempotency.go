package actuator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

type ctxKey int

const (
	tokenKey ctxKey = iota
	requestIDKey
)

// WithIdempotencyToken returns a context carrying token, the client token of
// one logical call. Safe sets it once per call and keeps it across retries,
// so a back-end whose API accepts a client token (Volcengine's ClientToken)
// sends the same one on every attempt and the provider applies the change
// at most once.
func WithIdempotencyToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey, token)
}

// IdempotencyToken returns the client token of the logical call ctx belongs
// to, if the caller set one. Back-ends with a client-token parameter should
// send it.
func IdempotencyToken(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(tokenKey).(string)
	return t, ok && t != ""
}

// NewIdempotencyToken returns a random 128-bit token in hex (32 characters,
// within Volcengine's 64-character ClientToken limit).
func NewIdempotencyToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// requestIDSlot holds the provider's request ID reported by a back-end.
type requestIDSlot struct {
	mu sync.Mutex
	id string
}

// withRequestIDSlot returns a context in which a back-end can report the
// provider's request ID with ReportRequestID.
func withRequestIDSlot(ctx context.Context) (context.Context, *requestIDSlot) {
	slot := &requestIDSlot{}
	return context.WithValue(ctx, requestIDKey, slot), slot
}

func (s *requestIDSlot) get() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// ReportRequestID lets a back-end record the provider's request ID of the
// call it is making (Volcengine's ResponseMetadata.RequestId), so the audit
// log can point at it. It does nothing outside a call made through Safe.
func ReportRequestID(ctx context.Context, requestID string) {
	if slot, ok := ctx.Value(requestIDKey).(*requestIDSlot); ok {
		slot.mu.Lock()
		slot.id = requestID
		slot.mu.Unlock()
	}
}
