package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestRunWhile(t *testing.T) {
	errLoop := errors.New("loop failed")
	tests := []struct {
		name, addr, wantErr string
		loopErr             error
	}{
		{"the loop's end stops the server", "127.0.0.1:0", "", nil},
		{"the loop's error comes back", "127.0.0.1:0", "loop failed", errLoop},
		{"a listen error names the setting", "256.0.0.1:0", "(the-key)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
			ran := false
			loop := func(ctx context.Context) error { ran = true; return tt.loopErr }
			err := RunWhile(context.Background(), tt.addr, "the-key", h, loop, slog.New(slog.DiscardHandler))
			if tt.wantErr == "" {
				if err != nil || !ran {
					t.Fatalf("RunWhile = %v, loop ran %v; want nil after the loop", err, ran)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("RunWhile = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
