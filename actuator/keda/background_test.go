package keda

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestServeInBackground(t *testing.T) {
	tests := []struct {
		name, addr, wantErr string
	}{
		{"a graceful stop ends without an error", "127.0.0.1:0", ""},
		{"a listen error names the setting", "256.0.0.1:0", "KEDA external scaler (--keda-listen 256.0.0.1:0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ended := make(chan struct{})
			errc := New(Options{}).ServeInBackground(ctx, tt.addr, "--keda-listen", func() { close(ended) })
			if tt.wantErr == "" {
				time.Sleep(50 * time.Millisecond)
				cancel()
			}
			select {
			case err := <-errc:
				if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not end")
			}
			select {
			case <-ended:
			case <-time.After(5 * time.Second):
				t.Error("ended was not called")
			}
		})
	}
}
