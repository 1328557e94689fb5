package report

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// priceOverrides are the flags 'report' and 'plan' take with --config
// although the pool sets them too: the prices (PriceFlags). The other
// fleet flags are the pool's to set, as in every command
// (poolspec.RefuseOverrides); the demand's flags choose and read the
// --input file.
var priceOverrides = []string{"price", "reserved-price", "reserved", "spot-price", "currency"}

// demandKeys are the demand flags that a pool's demand replaces: with
// --config the demand is the store's (or --input's), never synthetic.
var demandKeys = map[string]string{"synthetic-days": "demand", "synthetic-bursts": "demand"}

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
