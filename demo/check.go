package demo

import (
	"fmt"

	"github.com/prewarm/prewarm/demo/live"
)

// MaxLiveHours bounds --live-hours: a year of minutes.
const MaxLiveHours = 8760

// Check reports the first setting of the replay out of its range, naming
// its 'forecaster demo --replay' flag: --live-hours 1 to MaxLiveHours, and
// --history-days and --boot as the live demo takes them
// (live.CheckShared), where zero is the default.
func (o Options) Check() error {
	if o.LiveHours < 1 || o.LiveHours > MaxLiveHours {
		return fmt.Errorf("--live-hours %d: want 1 to %d", o.LiveHours, MaxLiveHours)
	}
	return live.CheckShared(o.HistoryDays, o.BootDelay)
}
