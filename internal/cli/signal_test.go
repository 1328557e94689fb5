package cli

import (
	"context"
	"syscall"
	"testing"
	"time"
)

func TestOnSignal(t *testing.T) {
	tests := []struct {
		name    string
		signals int
	}{
		{"no signal, no call", 0},
		{"a call for each signal", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			calls := make(chan struct{}, 10)
			stop := OnSignal(ctx, syscall.SIGHUP, func(context.Context) { calls <- struct{}{} })
			for i := range tt.signals {
				if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				select {
				case <-calls:
				case <-time.After(5 * time.Second):
					t.Fatalf("signal %d: no call", i+1)
				}
			}
			cancel()
			stop()
			if len(calls) != 0 {
				t.Errorf("%d calls more than the signals", len(calls))
			}
		})
	}
}
