package datasets

import (
	"errors"
	"fmt"
	"math"
)

// validate reports every field outside its range, the ranges Generate
// clamps such fields into instead of failing: the tests check that the
// generator's presets need no clamping and that clamping keeps the values
// finite and not negative.
func (g Synthetic) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	check(finite(g.PeakRPS) && g.PeakRPS >= 0, "synthetic: PeakRPS %v must be ≥ 0", g.PeakRPS)
	check(g.TroughRatio >= 0 && g.TroughRatio <= 1, "synthetic: TroughRatio %v must be in [0, 1]", g.TroughRatio)
	check(g.WeekendRatio >= g.TroughRatio && g.WeekendRatio <= 1, "synthetic: WeekendRatio %v must be in [TroughRatio, 1]", g.WeekendRatio)
	check(g.BusyFrom >= 0 && g.BusyFrom < g.BusyUntil && g.BusyUntil <= 24, "synthetic: busy hours %v-%v must satisfy 0 ≤ BusyFrom < BusyUntil ≤ 24", g.BusyFrom, g.BusyUntil)
	check(g.LunchDip >= 0 && g.LunchDip < 1, "synthetic: LunchDip %v must be in [0, 1)", g.LunchDip)
	check(finite(g.TrendPerWeek) && g.TrendPerWeek > -1, "synthetic: TrendPerWeek %v must be > -1", g.TrendPerWeek)
	check(finite(g.Noise) && g.Noise >= 0 && g.Noise <= 2, "synthetic: Noise %v must be in [0, 2]", g.Noise)
	check(g.NoiseCorrelation >= 0, "synthetic: NoiseCorrelation %v must be ≥ 0", g.NoiseCorrelation)
	check(finite(g.FlashCrowdsPerWeek) && g.FlashCrowdsPerWeek >= 0, "synthetic: FlashCrowdsPerWeek %v must be ≥ 0", g.FlashCrowdsPerWeek)
	check(finite(g.FlashCrowdFactor) && (g.FlashCrowdsPerWeek == 0 || g.FlashCrowdFactor >= 1), "synthetic: FlashCrowdFactor %v must be ≥ 1", g.FlashCrowdFactor)
	check(g.FlashCrowdDuration >= 0, "synthetic: FlashCrowdDuration %v must be ≥ 0", g.FlashCrowdDuration)
	if g.BurstEvery != 0 {
		check(g.BurstEvery > 0, "synthetic: BurstEvery %v must be ≥ 0", g.BurstEvery)
		check(g.BurstJitter >= 0 && 2*g.BurstJitter < g.BurstEvery, "synthetic: BurstJitter %v must be in [0, BurstEvery/2)", g.BurstJitter)
		check(g.BurstMin > 0 && g.BurstMin <= g.BurstMax && g.BurstMax <= g.BurstEvery-2*g.BurstJitter,
			"synthetic: burst length %v-%v must satisfy 0 < BurstMin ≤ BurstMax ≤ BurstEvery − 2·BurstJitter", g.BurstMin, g.BurstMax)
		check(finite(g.BurstFactorMin) && g.BurstFactorMin >= 1 && g.BurstFactorMin <= g.BurstFactorMax && finite(g.BurstFactorMax),
			"synthetic: burst factors %v-%v must satisfy 1 ≤ BurstFactorMin ≤ BurstFactorMax", g.BurstFactorMin, g.BurstFactorMax)
	}
	errs = append(errs, g.validateSpikes(), g.validateOutages())
	return errors.Join(errs...)
}

// validateSpikes reports the spike fields outside their ranges, when
// spikes are on.
func (g Synthetic) validateSpikes() error {
	if g.SpikesPerDay == 0 {
		return nil
	}
	if !(g.SpikesPerDay > 0 && g.SpikesPerDay <= maxSpikesPerDay) {
		return fmt.Errorf("synthetic: SpikesPerDay %v must be in [0, %v]", g.SpikesPerDay, maxSpikesPerDay)
	}
	var errs []error
	if !(g.SpikeMin > 0 && g.SpikeMin <= g.SpikeMax && g.SpikeMax <= maxSpikeLength) {
		errs = append(errs, fmt.Errorf("synthetic: spike length %v-%v must satisfy 0 < SpikeMin ≤ SpikeMax ≤ %v",
			g.SpikeMin, g.SpikeMax, maxSpikeLength))
	}
	if !(g.SpikeHeightMin >= 0 && g.SpikeHeightMin <= g.SpikeHeightMax && g.SpikeHeightMax <= maxSpikeHeight) {
		errs = append(errs, fmt.Errorf("synthetic: spike heights %v-%v must satisfy 0 ≤ SpikeHeightMin ≤ SpikeHeightMax ≤ %v",
			g.SpikeHeightMin, g.SpikeHeightMax, maxSpikeHeight))
	}
	return errors.Join(errs...)
}

// validateOutages reports the outage fields outside their ranges, when
// outages are on.
func (g Synthetic) validateOutages() error {
	if g.OutageEvery == 0 {
		return nil
	}
	if g.OutageEvery < 0 || g.OutageWindow <= 0 || g.OutageEvery%g.OutageWindow != 0 {
		return fmt.Errorf("synthetic: OutageEvery %v must be a positive multiple of OutageWindow %v", g.OutageEvery, g.OutageWindow)
	}
	if g.OutageKept < 0 || g.OutageKept >= g.OutageWindow {
		return fmt.Errorf("synthetic: OutageKept %v must be in [0, OutageWindow %v)", g.OutageKept, g.OutageWindow)
	}
	return nil
}
