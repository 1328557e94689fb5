package kubescale_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/redact"
)

// FuzzScaleReply feeds the scale subresource's replies (any status, any
// body) to Capacity and SetDesired: nothing panics, every error wraps one
// of the actuator's kinds, is one line of bounded length and never holds
// the token; an accepted Scale has no negative replicas.
func FuzzScaleReply(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"kind":"Scale","apiVersion":"autoscaling/v1","spec":{"replicas":3},"status":{"replicas":2}}`},
		{200, `{"spec":{"replicas":-1},"status":{"replicas":99999999999}}`},
		{200, `{"spec":{"replicas":"3"}}`},
		{200, `not json`},
		{404, `{"kind":"Status","reason":"NotFound","message":"deployments.apps \"sd\" not found"}`},
		{403, `{"kind":"Status","reason":"Forbidden","message":"Authorization: Bearer ` + token + `"}`},
		{429, `{"kind":"Status","reason":"TooManyRequests","message":"slow down"}`},
		{500, "<html>" + strings.Repeat("x", 2000) + "Bearer " + token + "</html>"},
		{409, `{"message":"` + strings.Repeat("é", 400) + `"}`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		s, err := kubescale.New("sd", kubescale.Config{
			APIServer: "https://127.0.0.1:6443", Namespace: "inference", Workload: "sd",
			Token:      func() (string, error) { return token, nil },
			HTTPClient: &http.Client{Transport: actuatortest.Reply{Status: status, Body: body}},
			Logger:     slog.New(slog.DiscardHandler), Redactor: redact.New(),
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.Capacity(context.Background(), "sd")
		check(t, "Capacity", err)
		if err == nil && (c.Current < 0 || c.Desired < 0) {
			t.Fatalf("Capacity accepted negative replicas: %+v from %q", c, body)
		}
		check(t, "SetDesired", s.SetDesired(context.Background(), "sd", 3, "fuzz"))
	})
}

func check(t *testing.T, op string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if !errors.Is(err, actuator.ErrRejected) && !errors.Is(err, actuator.ErrTransient) && !errors.Is(err, actuator.ErrThrottled) {
		t.Fatalf("%s: error of no kind: %v", op, err)
	}
	if strings.Contains(msg, token) || strings.Contains(msg, "\n") || len(msg) > 1024 || !utf8.ValidString(msg) {
		t.Fatalf("%s: error is not one clean bounded line without the token (%d bytes): %q", op, len(msg), msg)
	}
}
