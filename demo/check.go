package demo

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/demo/live"
)

// Check reports the first setting of the replay out of its range, naming
// its 'forecaster demo --replay' flag: --history-days as the live demo
// takes it (live.MinHistoryDays to live.MaxHistoryDays), --live-hours 1
// to 8760, --boot 0 to 24h. Zero values are the defaults.
func (o Options) Check() error {
	switch {
	case o.HistoryDays != 0 && (o.HistoryDays < live.MinHistoryDays || o.HistoryDays > live.MaxHistoryDays):
		return fmt.Errorf("--history-days %d: want %d to %d", o.HistoryDays, live.MinHistoryDays, live.MaxHistoryDays)
	case o.LiveHours < 1 || o.LiveHours > 8760:
		return fmt.Errorf("--live-hours %d: want 1 to 8760", o.LiveHours)
	case o.BootDelay < 0 || o.BootDelay > 24*time.Hour:
		return fmt.Errorf("--boot %v: want 0 to 24h", o.BootDelay)
	}
	return nil
}
