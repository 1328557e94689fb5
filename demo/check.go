package demo

import (
	"fmt"
	"time"
)

// Check reports the first setting of the replay out of its range, naming
// its 'forecaster demo --replay' flag: --live-hours 1 to 8760, --boot 0 to
// 24h.
func (o Options) Check() error {
	switch {
	case o.LiveHours < 1 || o.LiveHours > 8760:
		return fmt.Errorf("--live-hours %d: want 1 to 8760", o.LiveHours)
	case o.BootDelay < 0 || o.BootDelay > 24*time.Hour:
		return fmt.Errorf("--boot %v: want 0 to 24h", o.BootDelay)
	}
	return nil
}
