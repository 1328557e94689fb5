package demo

import (
	"strings"
	"testing"
	"time"
)

func TestOptionsCheck(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"in range", Options{LiveHours: 24, BootDelay: 10 * time.Minute}, ""},
		{"the bounds", Options{LiveHours: 8760, BootDelay: 24 * time.Hour}, ""},
		{"no live hours", Options{LiveHours: 0}, "--live-hours 0"},
		{"too many live hours", Options{LiveHours: 8761}, "--live-hours 8761"},
		{"a negative boot", Options{LiveHours: 1, BootDelay: -time.Second}, "--boot -1s"},
		{"a boot past a day", Options{LiveHours: 1, BootDelay: 25 * time.Hour}, "--boot 25h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Check()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Errorf("Check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
