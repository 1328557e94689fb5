package planner

// Tiers is how the instances of one step of a plan are bought: the
// running ones split into the reserved base, on demand and on spot, and
// the stopped ones of the warm tier beside them. Every reader of a plan
// (the schedule API, the pool's status and its page) splits a step with
// Config.Tiers, so they cannot disagree.
type Tiers struct {
	// Reserved run on the committed base (Prices.ReservedInstances),
	// which is billed whether it runs or not.
	Reserved int `json:"reserved"`
	// OnDemand run on demand beyond the reserved base.
	OnDemand int `json:"on_demand"`
	// Spot run on interruptible spot capacity (Fleet.Spot).
	Spot int `json:"spot"`
	// Warm are stopped instances of the warm tier (Step.Warm), ready to
	// start beside the running ones.
	Warm int `json:"warm"`
}

// Running is the running instances of every tier: Reserved, OnDemand and
// Spot together.
func (t Tiers) Running() int { return t.Reserved + t.OnDemand + t.Spot }

// Tiers splits desired running instances and warm stopped ones into the
// tiers that buy them. Fleet.Spot.OnSpot(desired) run on spot, as a
// back-end's spot mix launches them; the others run on demand, of which
// the reserved base covers up to Prices.ReservedInstances (min(desired,
// reserved_instances) whenever spot.base_on_demand is at least
// reserved_instances; a commitment that spot displaces covers only the
// on-demand instances left). The running tiers always add up to desired;
// negative counts count as none.
func (c Config) Tiers(desired, warm int) Tiers {
	desired = max(desired, 0)
	spot := min(c.Fleet.Spot.OnSpot(desired), desired)
	reserved := min(desired-spot, max(c.Prices.ReservedInstances, 0))
	return Tiers{Reserved: reserved, OnDemand: desired - spot - reserved, Spot: spot, Warm: max(warm, 0)}
}

// CostPerHour is what running instances and stopped ones of the warm
// tier cost an hour at the prices, split as Tiers splits them: the
// committed reserved base (prices.reserved_instances, billed whether it
// runs or not) at reserved_per_hour, the rest on demand at
// on_demand_per_hour and on spot at spot_per_hour, the stopped at
// stopped_per_hour. Without tiers it is running × on_demand_per_hour.
func (c Config) CostPerHour(running, stopped int) float64 {
	t, p := c.Tiers(running, stopped), c.Prices
	return float64(max(p.ReservedInstances, 0))*p.ReservedPerHour + float64(t.OnDemand)*p.OnDemandPerHour +
		float64(t.Spot)*p.SpotPerHour + float64(t.Warm)*p.StoppedPerHour
}

// TieredStep is a plan's step with the tiers that buy it, as the readers
// that show a plan give it (Schedule.WithTiers); the plans themselves,
// which every candidate of a pool's tuner keeps, carry no tiers.
type TieredStep struct {
	Step
	// Tiers split Desired and Warm into reserved, on demand, spot and
	// warm (Config.Tiers).
	Tiers Tiers `json:"tiers"`
}

// WithTiers returns s's steps, each with its Tiers (Config.Tiers of its
// Desired and Warm); s is left as it was. A nil schedule gives nil.
func (s Schedule) WithTiers(c Config) []TieredStep {
	if s == nil {
		return nil
	}
	out := make([]TieredStep, len(s))
	for i, st := range s {
		out[i] = TieredStep{Step: st, Tiers: c.Tiers(st.Desired, st.Warm)}
	}
	return out
}
