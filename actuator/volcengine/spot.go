package volcengine

import (
	"context"
	"fmt"
	"math"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

var (
	_ actuator.SpotMixer   = (*Actuator)(nil)
	_ actuator.WarmPooler  = (*Actuator)(nil)
	_ actuator.WarmSettler = (*Actuator)(nil)
)

// SetSpot implements actuator.SpotMixer: it sets the group's
// InstancesDistribution to the plan's spot tier with ModifyScalingGroup
// (the group's size untouched), and every later resize sends that mix
// again, so a group edited by hand returns to the plan. mixOf says how
// the plan's tier and the pool's spot-mix options combine. A spot block
// without a tier (share 0) takes back a mix SetSpot set before: the
// group returns to the pool's options, or to all on demand without them;
// a group SetSpot never changed is then left as it is.
func (a *Actuator) SetSpot(ctx context.Context, pool string, spot planner.Spot, reason string) error {
	if err := checkID("scaling group ID", pool); err != nil {
		return err
	}
	d, err := mixOf(a.opts.Distribution, spot)
	if err != nil {
		return fmt.Errorf("scaling group %s: %w", pool, err)
	}
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if !spot.Tier() && d == nil {
		if gs.spot == nil {
			return nil
		}
		d = &Distribution{OnDemandBase: volcengine.Int32(0), OnDemandPercentage: volcengine.Int32(100)}
	}
	requestID, err := a.modifyGroup(ctx, pool, nil, d)
	if err != nil {
		return err
	}
	gs.spot = nil
	if spot.Tier() {
		gs.spot = d
	}
	a.log.InfoContext(ctx, "scaling group spot mix set", "pool", pool, "mix", d.String(), "reason", reason, "request_id", requestID)
	return nil
}

// mixOf builds the InstancesDistribution a group is given, the one place
// that does: with a spot tier (spot.Tier()), the plan's: BaseOnDemand
// instances on demand, round(100 × (1 − Share)) percent of the rest on
// demand, CompensateWithOnDemand as spot.OnDemandFallback(), and
// SpotInstanceRemedy as options.spot_remedy says (default true). A
// spot-mix option that contradicts the plan is refused, naming both keys;
// one that agrees is fine. Without a spot tier the options are the mix
// (static, nil when none is set).
func mixOf(static *Distribution, spot planner.Spot) (*Distribution, error) {
	if !spot.Tier() {
		return static, nil
	}
	if err := checkSpot(spot); err != nil {
		return nil, err
	}
	d := &Distribution{
		OnDemandBase:           volcengine.Int32(int32(spot.BaseOnDemand)),
		OnDemandPercentage:     volcengine.Int32(int32(math.Round(100 * (1 - spot.Share)))),
		CompensateWithOnDemand: volcengine.Bool(spot.OnDemandFallback()),
		SpotRemedy:             volcengine.Bool(true),
	}
	if static == nil {
		return d, nil
	}
	if static.SpotRemedy != nil {
		d.SpotRemedy = static.SpotRemedy
	}
	if b := static.OnDemandBase; b != nil && *b != *d.OnDemandBase {
		return nil, contradicts(OptOnDemandBase, *b, "spot.base_on_demand", spot.BaseOnDemand)
	}
	if p := static.OnDemandPercentage; p != nil && *p != *d.OnDemandPercentage {
		return nil, contradicts(OptOnDemandPercentage, *p, "spot.share", fmt.Sprintf("%g, %d%% on demand", spot.Share, *d.OnDemandPercentage))
	}
	if c := static.CompensateWithOnDemand; c != nil && *c != *d.CompensateWithOnDemand {
		return nil, contradicts(OptCompensateWithOnDemand, *c, "spot.fallback", spot.Normal().Fallback)
	}
	return d, nil
}

// contradicts is the error of a spot-mix option that the plan's spot
// block overrides.
func contradicts(option string, optionValue any, planKey string, planValue any) error {
	return fmt.Errorf("volcengine: %w: options.%s (%v) contradicts the pool's %s (%v): the spot block sets the group's mix; remove options.%s",
		actuator.ErrRejected, option, optionValue, planKey, planValue, option)
}

// maxOnDemandBase is the API's largest OnDemandBaseCapacity.
const maxOnDemandBase = 2000

// checkSpot refuses a spot tier the API cannot take, naming its YAML key:
// planner.Spot.Check's ranges, the base bounded by the API's.
func checkSpot(spot planner.Spot) error {
	if spot.BaseOnDemand > maxOnDemandBase {
		return fmt.Errorf("volcengine: %w: spot.base_on_demand %d is above %d, the API's largest OnDemandBaseCapacity",
			actuator.ErrRejected, spot.BaseOnDemand, maxOnDemandBase)
	}
	if err := spot.Check(maxOnDemandBase); err != nil {
		return fmt.Errorf("volcengine: %w: %v", actuator.ErrRejected, err)
	}
	return nil
}

// mixFor is the distribution a resize of group gs sends: the plan's when
// SetSpot set one, else the pool's options (nil: none). Called with gs.mu
// held.
func (a *Actuator) mixFor(gs *groupState) *Distribution {
	if gs.spot != nil {
		return gs.spot
	}
	return a.opts.Distribution
}

// input is d as ModifyScalingGroup's parameter; nil for a nil d.
func (d *Distribution) input() *autoscaling.InstancesDistributionForModifyScalingGroupInput {
	if d == nil {
		return nil
	}
	return &autoscaling.InstancesDistributionForModifyScalingGroupInput{
		OnDemandBaseCapacity: d.OnDemandBase, OnDemandPercentageAboveBaseCapacity: d.OnDemandPercentage,
		SpotInstanceRemedy: d.SpotRemedy, CompensateWithOnDemand: d.CompensateWithOnDemand,
	}
}

// String reads the mix for a log line: "base 2, 50% on demand above it,
// remedy true, compensate true"; a field left as the group has it is "-".
func (d *Distribution) String() string {
	if d == nil {
		return "the group's own"
	}
	show := func(v any, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("base %s, %s%% on demand above it, remedy %s, compensate %s",
		show(volcengine.Int32Value(d.OnDemandBase), d.OnDemandBase != nil),
		show(volcengine.Int32Value(d.OnDemandPercentage), d.OnDemandPercentage != nil),
		show(volcengine.BoolValue(d.SpotRemedy), d.SpotRemedy != nil),
		show(volcengine.BoolValue(d.CompensateWithOnDemand), d.CompensateWithOnDemand != nil))
}
