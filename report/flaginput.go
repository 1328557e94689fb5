package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// The fleet flags 'report' and 'plan' still take with --config: the
// prices may be overridden (priceFlags), and the demand's file chosen
// (demandFlags). The other fleet flags are the pool's to set.
var (
	priceFlags  = []string{"price", "reserved-price", "reserved"}
	demandFlags = []string{"input", "value-column", "counts", "step"}
)

// CheckSpot refuses the spot flags of 'report' and 'plan' out of range.
func CheckSpot(price, interruptionsPerHour, share float64) error {
	switch {
	case !(price >= 0 && price <= planner.MaxPrice):
		return poolspec.Flagf("--spot-price %v: must be between 0 and 1e6", price)
	case !(interruptionsPerHour >= 0 && interruptionsPerHour <= backtest.MaxSpotInterruptions):
		return poolspec.Flagf("--spot-interruptions %v: must be between 0 and %g per instance-hour", interruptionsPerHour, backtest.MaxSpotInterruptions)
	case !(share >= 0 && share <= 1):
		return poolspec.Flagf("--spot-share %v: must be in [0, 1]", share)
	}
	return nil
}

// RefusePoolFlags refuses, with --config (the file config), the fleet
// flags of fs (named by fleet) that were given, but for the prices and the
// demand's: the pool's config sets them.
func RefusePoolFlags(fs *pflag.FlagSet, fleet []string, config string) error {
	var wrong []string
	for _, name := range fleet {
		if fs.Changed(name) && !slices.Contains(priceFlags, name) && !slices.Contains(demandFlags, name) {
			wrong = append(wrong, "--"+name)
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return poolspec.Flagf("%s: the pool's config sets that with --config (edit %s, or override only --price, --reserved-price, --reserved, --spot-price, --currency)",
		strings.Join(wrong, ", "), config)
}

// PriceFlags are the price flags that may override a pool's prices.
type PriceFlags struct {
	OnDemand, Reserved, Spot float64
	ReservedInstances        int
	Currency                 string
}

// Apply sets on p each price whose flag changed reports given: --price,
// --reserved-price, --reserved, --spot-price and --currency.
func (f PriceFlags) Apply(p *planner.Prices, changed func(flag string) bool) {
	if changed("price") {
		p.OnDemandPerHour = f.OnDemand
	}
	if changed("reserved-price") {
		p.ReservedPerHour = f.Reserved
	}
	if changed("reserved") {
		p.ReservedInstances = f.ReservedInstances
	}
	if changed("spot-price") {
		p.SpotPerHour = f.Spot
	}
	if changed("currency") {
		p.Currency = f.Currency
	}
}

// FromPool sets the pool's settings on in and cfg: its planner
// configuration and controller settings, interval (the file's) as the
// tick, its name as the title and its time zone; config names the file
// in errors.
func FromPool(in *Input, cfg *backtest.Config, pool poolspec.Pool, interval time.Duration, config string) error {
	var err error
	if cfg.Planner, err = pool.Planner(); err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	cfg.Forecast.Settings = pool.Settings()
	in.Tick = interval
	in.Title = pool.Name
	if in.Location, err = pool.Location(); err != nil {
		return fmt.Errorf("%s: pool %q: time_zone: %w", config, pool.Name, err)
	}
	return nil
}

// DemandSource describes demand read from input (counts: requests per
// step), or, without input, days of synthetic demand.
func DemandSource(input string, counts bool, days int) string {
	if input == "" {
		return fmt.Sprintf("synthetic demand, %d days", days)
	}
	if counts {
		return input + " (requests per step, as requests/s)"
	}
	return input + " (requests/s)"
}
